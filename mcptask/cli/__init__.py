"""The command line: options and settings, signals, one module per command, and the app that
turns exceptions and reports into exit codes (the only layer that decides them): `app.run`.

Nothing is imported here: a command line imports the one command it names (`app.LazyGroup`).
"""
