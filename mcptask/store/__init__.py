"""What mcptask keeps on this machine. Files holding settings or credentials are the user's
own (mode 0600, in 0700 directories).

- `paths`: where the configuration and state directories are (XDG, with overrides), and
  the token cache's file
- `profiles`: the profiles file (configuration)
- `tokens`: the sign-in token cache (state)
- `identity`: which server a record belongs to (canonical URL, or the stdio command)
- `known_tasks`: the record of known tasks (SQLite, state), one row per task, fed by the
  client; `database` opens its file, migrates its schema, and reads it for shell completion

Only the standard library at import time: shell completion reads these files without
importing httpx or Rich.
"""
