
_mcptask_completion() {
    local IFS=$'\n' word
    local -a words
    # One candidate a line: no splitting on anything else, no globbing, each quoted for the
    # shell (mcptask offers only plain words; this holds even if another candidate came).
    mapfile -t words < <(env COMP_WORDS="${COMP_WORDS[*]}" \
                         COMP_CWORD="$COMP_CWORD" \
                         _MCPTASK_COMPLETE=complete_bash "$1")
    COMPREPLY=()
    for word in "${words[@]}"; do
        printf -v word '%q' "$word"
        COMPREPLY+=("$word")
    done
    return 0
}

complete -o default -F _mcptask_completion mcptask
