"""`python -m mcptask` runs the command-line interface."""

from mcptask.cli import main

if __name__ == "__main__":
    main()
