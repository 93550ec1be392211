"""Registers the ``thirdparty`` marker (the project runs pytest with --strict-markers)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "thirdparty: runs against the third-party MCP 2026-07-28 server (FastMCP 4 + "
        "fastmcp-tasks, SEP-2663 tasks extension) installed in its own virtual environment",
    )
