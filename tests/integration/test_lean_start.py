"""What a one-shot command loads (issue 13's start-up levers): against a server that asks for
no sign-in, the real `mcptask get` imports none of sign-in's modules nor the bulk operations
of `list` and `cancel`, and it closes the record of known tasks itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.reference_server_process import running_reference_server

PROBE = """\
import atexit, json, os, sys
PREFIXES = ("mcptask.auth.", "mcptask.store.", "mcptask.operations.")
def report():
    loaded = sorted(m for m in sys.modules if m.startswith(PREFIXES))
    with open(os.environ["OUT"], "w") as out:
        json.dump({"loaded": loaded}, out)
atexit.register(report)
from mcptask.entry import main
sys.argv = ["mcptask", *sys.argv[1:]]
main()
"""

SIGN_IN_MODULES = (
    "mcptask.auth.browser",
    "mcptask.auth.discovery",
    "mcptask.auth.grants",
    "mcptask.store.tokens",
)

BULK_MODULES = (  # list's and cancel's: a command about one task has no use for them
    "mcptask.operations.cancel",
    "mcptask.operations.listing",
    "mcptask.operations.outcomes",
)


def test_get_loads_no_sign_in_module_and_closes_the_record(
    tmp_path: Path,
) -> None:
    out = tmp_path / "probe.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")} | {
        "MCPTASK_STATE_DIR": str(tmp_path / "state"),
        "OUT": str(out),
    }
    with running_reference_server("--seed", "working=1") as url:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, "get", "working-001", "--url", url, "-o", "json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["taskId"] == "working-001"
    probe = json.loads(out.read_text())
    # The record was closed cleanly, not left to the finalization that collects nothing.
    assert sorted(path.name for path in (tmp_path / "state").iterdir()) == ["known-tasks.sqlite3"]
    loaded = set(probe["loaded"])
    assert "mcptask.auth.flow" in loaded  # the flow is there, ready for a 401
    assert "mcptask.store.known_tasks" in loaded  # and the task was recorded
    assert loaded.isdisjoint(SIGN_IN_MODULES)
    assert loaded.isdisjoint(BULK_MODULES), loaded & set(BULK_MODULES)
