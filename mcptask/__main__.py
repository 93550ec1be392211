"""`python -m mcptask` runs the command-line interface."""

from mcptask.entry import main

if __name__ == "__main__":
    main()
