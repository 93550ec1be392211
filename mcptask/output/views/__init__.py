"""One view per command, or per group of small commands: it shows the command's result in
the chosen output format (the shape they share is `base.View`)."""
