"""One view per command: it shows the command's result in the chosen output format."""
