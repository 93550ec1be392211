"""What mcptask prints: the two streams (`screen`), sanitized server text (`sanitize`), the
Rich tables the views share (`tables`), and one view per command (`views/`)."""
