"""What mcptask keeps on this machine: where it lives (`paths`) and the profiles file
(`profiles`). Files holding settings or credentials are the user's own, mode 0600."""
