
#compdef mcptask

_mcptask_completion() {
  eval $(env _TYPER_COMPLETE_ARGS="${words[1,$CURRENT]}" _MCPTASK_COMPLETE=complete_zsh mcptask)
}

compdef _mcptask_completion mcptask

