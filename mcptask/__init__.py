"""mcptask: manage the long-running tasks of Model Context Protocol servers."""

__version__ = "0.1.0"
