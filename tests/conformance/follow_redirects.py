"""A stand-in browser for sign-in tests: `follow_redirects.py URL`.

mcptask opens the authorization URL with Python's `webbrowser`, which runs the program that
`BROWSER` names with the URL. This program GETs the URL and follows every redirect, as a
browser would after a person approved (the test authorization servers approve at once),
until the loopback address of mcptask has answered. Standard library only; nothing on
stdout (a browser's output must not mix with mcptask's). Exit 0 when the last answer was
200, else 1, with the reason on stderr.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: follow_redirects.py URL", file=sys.stderr)
        return 2
    try:
        with urllib.request.urlopen(argv[1], timeout=30) as answer:  # noqa: S310 - test URLs
            status = answer.status
            answer.read()
    except urllib.error.HTTPError as error:
        print(f"follow_redirects: HTTP {error.code} at {error.url}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"follow_redirects: {error}", file=sys.stderr)
        return 1
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
