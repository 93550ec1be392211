"""The command line: options and settings, signals, the commands, and the app that
turns exceptions into exit codes: `app.run`.

Nothing is imported here: a command line imports only the module of the command it names
(`app.LazyGroup`).
"""
