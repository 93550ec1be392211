"""What mcptask keeps on this machine, in the user's own 0600 files. Only the standard
library at import time: shell completion reads these files without importing httpx or Rich.
"""
