"""Relay this process's stdin and stdout to a TCP connection to 127.0.0.1:PORT (the one
argument): the `--server` command of a stdio reference server that runs in the test process
(tests/clocked_reference_server.py). It ends when that connection ends.

A script on its own (no imports from the test suite), so that it runs whatever the working
directory and PYTHONPATH of the mcptask process that starts it.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

CHUNK = 1 << 16


def _upstream(connection: socket.socket) -> None:
    """stdin to the connection, then end the connection's sending side (the server's EOF)."""
    try:
        while chunk := os.read(sys.stdin.fileno(), CHUNK):
            connection.sendall(chunk)
        connection.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the server went away: the downstream loop ends too


def main() -> None:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1]))) as connection:
        threading.Thread(target=_upstream, args=(connection,), daemon=True).start()
        try:
            while chunk := connection.recv(CHUNK):
                sys.stdout.buffer.write(chunk)
                sys.stdout.buffer.flush()
        except OSError:
            pass  # mcptask closed our stdout, or the server reset the connection: done


if __name__ == "__main__":
    main()
