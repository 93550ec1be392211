"""The command line: options and settings, signals, the commands, and the app that
turns exceptions and reports into exit codes (the only layer that decides them): `app.run`.

Nothing is imported here: a command line imports only the module of the command it names
(`app.LazyGroup`).
"""
