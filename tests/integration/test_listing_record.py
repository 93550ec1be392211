"""What `mcptask list` leaves in the record of known tasks, end to end: each listed task once,
a complete listing replacing what the previous one listed; a listing stopped early keeping
what it read; both read back by the next process (`--known`'s ids, `forget`, completion) like
any recorded task."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mcptask.store.database import FILE_NAME
from mcptask.store.identity import ServerIdentity
from tests.cli_process import run_mcptask
from tests.conftest import StartServer

from .known_helpers import recorded
from .test_known_tasks import complete

SIZE = 1100  # three pages of 500: the last one short
IDS = [f"working-{number:03d}" for number in range(1, SIZE + 1)]  # as seeded: 001 ... 1100


def rows(state: Path) -> int:
    with sqlite3.connect(state / FILE_NAME) as db:
        (count,) = db.execute("SELECT COUNT(*) FROM tasks").fetchone()
    return int(count)


def test_a_complete_listing_is_kept_once_and_replaced_by_the_next(
    reference_server: StartServer, tmp_path: Path
) -> None:
    url = reference_server("--seed", f"working={SIZE}", "--page-size", "500")
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    identity = ServerIdentity.for_url(url)
    listed = run_mcptask("list", "--url", url, "-o", "ids", env=env)
    assert listed.code == 0, listed.stderr
    assert listed.stdout.split() == IDS[::-1]
    assert rows(tmp_path) == SIZE
    known = recorded(tmp_path, identity)
    assert sorted(known) == sorted(IDS)
    assert {(task.status, task.via) for task in known.values()} == {("working", "tasks/list")}

    cancelled = run_mcptask("cancel", "working-007", "--url", url, "-o", "json", env=env)
    assert cancelled.code == 0, cancelled.stderr
    assert recorded(tmp_path, identity)["working-007"].status == "cancelled"
    again = run_mcptask("list", "--url", url, "-o", "ids", "--status", "working", env=env)
    assert again.code == 0, again.stderr
    assert len(again.stdout.split()) == SIZE - 1
    # the second listing replaced the first's; the cancelled task is still there, once
    assert rows(tmp_path) == SIZE
    known = recorded(tmp_path, identity)
    assert sorted(known) == sorted(IDS)
    assert known["working-007"].status == "cancelled"
    assert known["working-007"].via != "tasks/list"  # what the cancel command met first

    offered = complete(f"mcptask get --url {url} working-00", env)
    assert sorted(offered) == [f"working-00{number}" for number in range(1, 10)]
    forgotten = run_mcptask("forget", "--all", "--url", url, "-o", "ids", env=env)
    assert forgotten.code == 0, forgotten.stderr
    assert sorted(forgotten.stdout.split()) == sorted(IDS)
    assert rows(tmp_path) == 0


def test_a_listing_stopped_early_keeps_what_it_read(
    reference_server: StartServer, tmp_path: Path
) -> None:
    url = reference_server("--seed", f"working={SIZE}", "--page-size", "500")
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    first = run_mcptask(
        "list", "--url", url, "-o", "ids", "--order", "server", "--limit", "3", env=env
    )
    assert first.code == 0, first.stderr
    assert first.stdout.split() == IDS[:3]
    # the page read whole is recorded, the pages never read are not
    assert rows(tmp_path) == 500
    assert sorted(recorded(tmp_path, ServerIdentity.for_url(url))) == sorted(IDS[:500])
