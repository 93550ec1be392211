"""What mcptask prints: the two streams, sanitizing, Rich tables, JSON documents, and one view
per command that knows how to show its result as table, json, jsonl or ids.

- `screen`: stdout (results only) and stderr (messages, prompts, progress), the output format
- `sanitize`: untrusted server text made safe to print
- `tables`: Rich renderables shared by the views
- `documents`: the JSON documents the README documents
- `views/`: one module per command (a new command adds one here and one in `cli/commands/`)
"""
