"""The commands, each the same shape: parse and validate → build a request → run an
operation over a connected client → hand the result to the command's view → return (or raise
`typer.Exit` with the code the report carries)."""
