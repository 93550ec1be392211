"""What mcptask keeps on this machine, in the user's own files (0600, in 0700 directories):
`paths` (where), `profiles`, `tokens`, and the record of known tasks (`known_tasks`,
`database`, `identity`). Only the standard library at import time: shell completion reads
these files without importing httpx or Rich.
"""
