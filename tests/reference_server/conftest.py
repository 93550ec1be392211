"""The `make` fixture: in-process reference servers (harness.Server), closed after the test.

A test module may set SERVER_DEFAULTS (settings applied unless the test gives its own).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.reference_server.harness import Server, make_server

MakeServer = Callable[..., Server]


@pytest.fixture
def make(request: pytest.FixtureRequest) -> Iterator[MakeServer]:
    """`make(**settings)`: a Server for ServerConfig() with these settings replaced."""
    defaults: dict[str, Any] = getattr(request.module, "SERVER_DEFAULTS", {})
    servers: list[Server] = []

    def _make(**settings: Any) -> Server:
        server = make_server(**{**defaults, **settings})
        servers.append(server)
        return server

    yield _make
    for server in servers:
        server.close()
