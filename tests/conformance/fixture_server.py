"""`python -m tests.conformance.fixture_server ARGS`: `mcptask reference-server ARGS` that
also offers the conformance runner's fixture tools (tests/conformance/fixtures).

The test rig's launcher (tests/reference_server_process.py) runs this module when given its
FIXTURES_ARG, the test suite's own switch, which is not one of the reference server's.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from mcptask.reference_server import main as serve
from tests.conformance.fixtures import FIXTURES, FixtureTools
from tests.conformance.fixtures.workers import WorkerStore


def main(argv: Sequence[str] | None = None) -> int:
    """Run the reference server with `argv`, the fixture tools and their WorkerStore."""
    return serve(
        sys.argv[1:] if argv is None else argv, tools=FixtureTools(FIXTURES), store_type=WorkerStore
    )


if __name__ == "__main__":
    raise SystemExit(main())
