"""One view per command: it shows the command's result in the chosen output format.

- `base`: the shape every view shares
- `list_tasks`: `list` (one rendering path for every format and order)
- `cancel`: `cancel` (prompt, progress, results as they come, the report)
- `watch`: `watch` (a live table, or a line per change)
- `tasks`: the views of one task: `get`, `start`, `result`
- `connection`: `connect`, `login`, `logout`
- `saved`: what this machine keeps: `profiles`, `forget`
"""
