"""`python -m mcptask.reference_server ARGS...` runs the reference server."""

from mcptask.reference_server import main

if __name__ == "__main__":
    raise SystemExit(main())
