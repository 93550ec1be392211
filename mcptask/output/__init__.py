"""What mcptask prints: the two streams, sanitizing, Rich tables, and one view per command
that knows how to show its result (and its JSON document) as table, json, jsonl or ids.

- `screen`: stdout (results only) and stderr (messages, prompts, progress), the output format
- `sanitize`: untrusted server text made safe to print
- `tables`: Rich renderables shared by the views
- `views/`: the views, a module per command or per group of small commands (a new command
  adds a view here and a module in `cli/commands/`)
"""
