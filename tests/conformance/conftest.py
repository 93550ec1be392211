"""Registers the ``conformance`` marker (the project runs pytest with --strict-markers)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "conformance: runs the official MCP conformance runner (npm, Node 22) against the "
        "reference server",
    )
