"""Local state in the user's state directory: the record of known tasks (SQLite).

- `paths`: where the state directory is (`MCPTASK_STATE_DIR`, else XDG), created private
- `identity`: which server a record belongs to (canonical URL, or the stdio command)
- `known`: the record itself; `Recorder` feeds it from the client, `complete_task_ids` reads
  it for shell completion

Only the standard library at import time: shell completion reads the record without
importing httpx, pydantic or Rich.
"""
