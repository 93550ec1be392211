"""Attack: with --oauth, one client's token reaches the tasks another client created
(tasks spec: a receiver bound to an authorization context MUST keep tasks to it). Every
attempt must be answered as if the task did not exist."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reference_server_process import start_reference_server, stop_process
from tests.security.reference_server_peers import Peer, client_credentials_token

MISSING = "no-such-task"


@pytest.fixture
def tokens(tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    """(url, alice's token, mallory's token) of an --oauth server."""
    clients = tmp_path / "clients"
    clients.write_text("alice:alice-secret\nmallory:mallory-secret  # the attacker\n")
    url, proc = start_reference_server("--oauth", "--oauth-clients-file", str(clients))
    try:
        alice = client_credentials_token(url, "alice", "alice-secret")
        mallory = client_credentials_token(url, "mallory", "mallory-secret")
        yield url, alice, mallory
    finally:
        stop_process(proc)


def as_if_missing(peer: Peer, method: str, task_id: str, **params: Any) -> None:
    """`method` on `task_id` gets exactly the answer it gets for a task that never was."""
    seen = peer.call(method, {"taskId": task_id, **params})
    missing = peer.call(method, {"taskId": MISSING, **params})
    assert "result" not in seen, (method, seen)
    seen["error"]["message"] = seen["error"]["message"].replace(task_id, MISSING)
    assert seen["error"] == missing["error"], method


def test_another_clients_session_cannot_list_get_cancel_or_read_a_task(
    tokens: tuple[str, str, str],
) -> None:
    url, alice_token, mallory_token = tokens
    alice, mallory = Peer(url, alice_token), Peer(url, mallory_token)
    alice.initialize()
    mallory.initialize()
    task_id = alice.start_task()

    listed = mallory.call("tasks/list")["result"]["tasks"]
    assert task_id not in [task["taskId"] for task in listed]
    for method in ("tasks/get", "tasks/cancel", "tasks/result"):
        as_if_missing(mallory, method, task_id)

    # Nor through alice's session id, with mallory's token.
    mallory.session = alice.session
    assert mallory.post("tasks/get", {"taskId": task_id}).status_code == 404

    # The owner still has it, untouched.
    assert alice.call("tasks/get", {"taskId": task_id})["result"]["status"] == "working"
    assert task_id in [t["taskId"] for t in alice.call("tasks/list")["result"]["tasks"]]


def test_another_client_cannot_reach_a_2026_task_in_either_era(
    tokens: tuple[str, str, str],
) -> None:
    url, alice_token, mallory_token = tokens
    alice, mallory = Peer(url, alice_token, modern=True), Peer(url, mallory_token, modern=True)
    task_id = alice.start_task()

    as_if_missing(mallory, "tasks/get", task_id)
    as_if_missing(mallory, "tasks/cancel", task_id)
    as_if_missing(mallory, "tasks/update", task_id, inputResponses={})
    legacy_mallory = Peer(url, mallory_token)
    legacy_mallory.initialize()
    as_if_missing(legacy_mallory, "tasks/get", task_id)
    listed = legacy_mallory.call("tasks/list")["result"]["tasks"]
    assert task_id not in [task["taskId"] for task in listed]

    assert alice.call("tasks/get", {"taskId": task_id})["result"]["status"] == "working"
    legacy_alice = Peer(url, alice_token)
    legacy_alice.initialize()
    assert legacy_alice.call("tasks/get", {"taskId": task_id})["result"]["status"] == "working"
