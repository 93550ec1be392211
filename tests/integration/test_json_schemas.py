"""The JSON contracts: every document of `-o json` and every line of `-o jsonl` that the real
`mcptask` prints against the real reference server, in both protocol eras, validated against
docs/schemas/*.json; and the examples of docs/json-output.md against them too.

Each schema is checked twice: as published (mcptask's own envelopes leave
`additionalProperties` open, so that a later minor version's new optional keys still validate)
and closed (every envelope without `additionalProperties` gets `false`), so that a key mcptask
prints but its schema does not declare fails here. References resolve among the local files
only: the registry has no way to retrieve anything.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.cli_process import Result, reference_stdio_command, run_mcptask
from tests.reference_server_process import (
    FIXTURES_ARG,
    REPO_ROOT,
    running_reference_server,
    start_reference_server,
    stop_process,
)

SCHEMAS = REPO_ROOT / "docs" / "schemas"
SEED = "working=4,completed=1,failed=1,cancelled=1,input_required=1"
ANY_TASK = {"get.json", "list-line.json", "cancel-dry-run-line.json"}
"""The schemas that accept any task object (as a server may send it)."""


def closed(schema: Any) -> Any:
    """`schema` with `additionalProperties: false` wherever properties are listed and
    nothing is said about others (mcptask's envelopes; server-sent objects say `true`)."""
    if isinstance(schema, list):
        return [closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    copy = {key: closed(value) for key, value in schema.items()}
    if "properties" in copy and "additionalProperties" not in copy:
        copy["additionalProperties"] = False
    return copy


def load_schemas() -> dict[str, Any]:
    return {path.name: json.loads(path.read_text()) for path in sorted(SCHEMAS.glob("*.json"))}


def validators(schemas: dict[str, Any]) -> dict[str, Draft202012Validator]:
    registry: Registry[Any] = Registry().with_resources(
        (name, Resource.from_contents(schema)) for name, schema in schemas.items()
    )
    return {
        name: Draft202012Validator(schema, registry=registry) for name, schema in schemas.items()
    }


PUBLISHED = validators(load_schemas())
CLOSED = validators({name: closed(schema) for name, schema in load_schemas().items()})


def validate(schema: str, document: object) -> None:
    """`document` is valid against `schema` both as published and closed."""
    for kind, chosen in (("published", PUBLISHED), ("closed", CLOSED)):
        errors = [
            f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
            for error in chosen[schema].iter_errors(document)
        ]
        assert not errors, f"{schema} ({kind}) rejects {document!r}:\n" + "\n".join(errors)


def document(schema: str, result: Result) -> Any:
    """The `-o json` document of `result`, validated against `schema`."""
    assert result.stdout, result.stderr
    parsed = result.json()
    validate(schema, parsed)
    return parsed


def lines(schema: str, result: Result) -> list[Any]:
    """The `-o jsonl` lines of `result`, each validated against `schema`."""
    parsed = [json.loads(line) for line in result.stdout.splitlines()]
    assert parsed, result.stderr
    for line in parsed:
        validate(schema, line)
    return parsed


# -- the schemas themselves ----------------------------------------------------------------------


def test_every_schema_is_a_valid_draft_2020_12_schema_named_by_its_id() -> None:
    schemas = load_schemas()
    assert "common.json" in schemas
    for name, schema in schemas.items():
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == name


def test_every_schema_is_used_by_a_test_and_documented() -> None:
    """Each file is validated against below (common.json: referenced by the others), and
    described in docs/schemas/README.md."""
    tree = ast.parse(Path(__file__).read_text())
    used = {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"validate", "document", "lines"}
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }
    files = set(load_schemas())
    assert used <= files, f"no such schema: {used - files}"
    assert any('"common.json#/$defs/' in path.read_text() for path in SCHEMAS.glob("*.json"))
    assert files - used == {"common.json"}, f"never validated against: {files - used}"
    readme = (SCHEMAS / "README.md").read_text()
    assert not [name for name in files if f"`{name}`" not in readme]


def test_server_sent_objects_allow_unknown_fields_and_envelopes_list_theirs() -> None:
    task = {"taskId": "t", "status": "working", "vendorField": {"x": 1}}
    validate("get.json", task)
    result = {"taskId": "t", "status": "completed", "outcome": "completed", "result": None}
    for chosen in (PUBLISHED, CLOSED):
        assert not chosen["result.json"].is_valid(result)  # error is required
    later = {**result, "error": None, "addedInAMinorVersion": 1}
    assert PUBLISHED["result.json"].is_valid(later)
    assert not CLOSED["result.json"].is_valid(later)


def test_the_examples_of_the_json_output_page_follow_the_schemas() -> None:
    """Each ```json example of docs/json-output.md is a valid document or line of the schema
    of the output it shows (one that does not merely accept any task or object)."""
    page = (REPO_ROOT / "docs" / "json-output.md").read_text()
    examples = [json.loads(block.split("```")[0]) for block in page.split("```json\n")[1:]]
    assert examples
    specific = [name for name in CLOSED if name not in {"common.json", *ANY_TASK}]
    for example in examples:
        valid = [name for name in specific if CLOSED[name].is_valid(example)]
        assert valid, f"no schema accepts the example {example}"


# -- the real outputs, in both eras --------------------------------------------------------------


@dataclass
class Server:
    """A reference server of one era, and the state directory (record of known tasks) of the
    mcptask that talks to it."""

    era: str
    url: str
    state: Path

    def run(self, *args: str, state: Path | None = None, stdin: str | None = None) -> Result:
        """`mcptask ARGS --url URL`, with this server's record (or `state`)."""
        env = {"MCPTASK_STATE_DIR": str(state or self.state)}
        return run_mcptask(*args, "--url", self.url, env=env, stdin=stdin)

    @property
    def legacy(self) -> bool:
        return self.era == "legacy"


@pytest.fixture(scope="module", params=["legacy", "modern"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """A reference server that speaks one era only, with the conformance fixture tools."""
    era: str = request.param
    url, process = start_reference_server(
        FIXTURES_ARG, "--protocol-eras", era, "--seed", SEED, "--poll-interval", "100"
    )
    try:
        yield Server(era, url, tmp_path_factory.mktemp(era))
    finally:
        stop_process(process)


def test_connect_get_and_list(server: Server, tmp_path: Path) -> None:
    connected = document("connect.json", server.run("connect", "-o", "json"))
    assert connected["era"] == server.era
    assert (connected["sessionId"] is not None) == server.legacy

    # get records what it sees: the record of `tmp_path` holds these tasks
    finished = ("completed-001", "failed-001") if server.legacy else (
        "completed-001", "failed-001", "input_required-001"
    )  # fmt: skip
    tasks = {
        task_id: document("get.json", server.run("get", task_id, "-o", "json", state=tmp_path))
        for task_id in finished
    }
    working = server.run("get", "working-001", "-o", "jsonl", state=tmp_path)
    (line,) = lines("get.json", working)
    if server.legacy:
        assert {"ttl", "pollInterval"} <= line.keys()
        listed = document("list.json", server.run("list", "-o", "json"))
        assert listed["count"] == len(listed["tasks"]) >= 8
        assert "gone" not in listed
        assert len(lines("list-line.json", server.run("list", "-o", "jsonl"))) >= 8
    else:  # no tasks/list in 2026-07-28; the outcome inlined in the task
        assert {"ttlMs", "pollIntervalMs", "resultType"} <= line.keys()
        assert tasks["completed-001"]["result"]["content"]
        assert tasks["failed-001"]["error"]["code"]
        assert tasks["input_required-001"]["inputRequests"]
    known = server.run("list", "--known", "-o", "json", state=tmp_path)
    assert document("list-known.json", known)["gone"] == []
    validate("list.json", known.json())
    known_lines = server.run("list", "--known", "-o", "jsonl", state=tmp_path)
    assert len(lines("list-line.json", known_lines)) == len(finished) + 1


def test_start_watch_and_result(server: Server) -> None:
    started = document("start.json", server.run("start", "failing_job", "seconds:=0", "-o", "json"))
    tool_error = started["task"]["taskId"]
    assert (started["sessionId"] is not None) == server.legacy
    watched = server.run("start", "long_job", "seconds:=0.2", "--watch", "-o", "jsonl")
    first, *changes = watched.stdout.splitlines()
    validate("start.json", json.loads(first))
    for change in changes:
        validate("watch-line.json", json.loads(change))
    assert json.loads(changes[-1])["status"] == "completed"
    if not server.legacy:  # 2026-07-28: the server may run a call at once, without a task
        at_once = document("start.json", server.run("start", "greet", "name=Ada", "-o", "json"))
        assert at_once["task"] is None
        assert at_once["result"]["content"]

    changed = lines("watch-line.json", server.run("watch", tool_error, "nope", "-o", "jsonl"))
    assert {(c["taskId"], c["status"]) for c in changed} == {
        (tool_error, "completed"),
        ("nope", "gone"),
    }
    final = server.run("watch", "working-001", "nope", "--wait-timeout", "0.2", "-o", "json")
    assert document("watch.json", final)["timedOut"] is True
    assert final.json()["tasks"][1] == {"taskId": "nope", "gone": True}

    errored = server.run("start", "protocol_error_job", "seconds:=0", "-o", "ids")
    assert errored.code == 0, errored.stderr
    outcomes = {
        tool_error: "tool-error",
        errored.stdout.strip(): "failed",
        "completed-001": "completed",
        # a seeded failure is a tool error in 2025-11-25, the error of tasks/get in 2026-07-28
        "failed-001": "tool-error" if server.legacy else "failed",
    }
    for task_id, outcome in outcomes.items():
        shown = document("result.json", server.run("result", task_id, "-o", "json"))
        assert shown["outcome"] == outcome
        assert (shown["error"] is not None) == (outcome == "failed")
    pending = server.run("result", "working-001", "--wait-timeout", "0", "-o", "jsonl")
    assert lines("result.json", pending)[0]["outcome"] == "pending"


def test_answer(server: Server) -> None:
    if server.legacy:  # 2025-11-25 tasks ask with requests of their own, keyed by id
        taken = server.run("answer", "input_required-001", "answer=x", "-o", "json")
        assert document("answer.json", taken)["outcome"] in ("working", "completed")
        return
    task_id = server.run("start", "multi_input", "-o", "ids").stdout.strip()
    first = server.run("answer", task_id, "--key", "confirm-1", "confirm=true", "-o", "json")
    assert document("answer.json", first)["outcome"] == "input_required"
    rest = lines("answer.json", server.run("answer", task_id, "name=Ada", "-o", "jsonl"))
    assert rest[0]["sent"] == {"name-1": {"action": "accept", "content": {"name": "Ada"}}}
    idle = document("answer.json", server.run("answer", "working-001", "x=1", "-o", "json"))
    assert idle["outcome"] == "not-waiting"


def test_handles(server: Server, tmp_path: Path) -> None:
    task_id = server.run("start", "long_job", "seconds:=60", "-o", "ids", state=tmp_path).stdout
    written = document("handles.json", server.run("handles", state=tmp_path))
    assert [handle["taskId"] for handle in written] == [task_id.strip()]
    assert written[0]["generation"] == ("v1" if server.legacy else "v2")
    lines("handles-line.json", server.run("handles", "-o", "jsonl", state=tmp_path))
    handles = json.dumps([*written, {**written[0], "taskId": "nope"}])
    taken = server.run("handles", "--import", "-", "-o", "json", stdin=handles)
    assert [h["outcome"] for h in document("handles-import.json", taken)["handles"]] == [
        "recorded",
        "gone",
    ]
    again = server.run("handles", "--import", "-", "-o", "jsonl", stdin=handles)
    lines("handles-import-line.json", again)


def test_cancel_and_forget(server: Server, tmp_path: Path) -> None:
    if server.legacy:  # the working tasks the server lists
        dry = server.run("cancel", "--dry-run", "--all-working", "nope", "-o", "json")
    else:  # no list in 2026-07-28: the working tasks recorded here
        server.run("get", "working-004", "-o", "ids", state=tmp_path)
        dry = server.run(
            "cancel", "--dry-run", "--known", "--all-working", "nope", "-o", "json", state=tmp_path
        )
    would = document("cancel-dry-run.json", dry)["tasks"]
    assert {"taskId": "nope"} in would
    assert {"taskId": "working-004"} not in would

    cancelled = server.run(
        "cancel", "working-002", "nope", "completed-001", "-o", "json", state=tmp_path
    )
    report = document("cancel.json", cancelled)
    assert [r["outcome"] for r in report["results"]] == [
        "cancelled",
        "not-found",
        "already-finished",
    ]
    assert report["exitCode"] == cancelled.code == 6
    # --no-wait: 2026-07-28 acknowledges the cancel, and mcptask does not poll for the outcome
    at_once = server.run("cancel", "working-003", "--no-wait", "-o", "jsonl")
    streamed = lines("cancel-line.json", at_once)
    assert [r["outcome"] for r in streamed] == ["cancelled" if server.legacy else "requested"]

    forget = server.run("forget", "working-002", "nope", "-o", "json", state=tmp_path)
    forgot = document("forget.json", forget)
    assert forgot == {"forgotten": ["working-002"], "notRecorded": ["nope"], "server": server.url}


def test_a_cancel_stopped_half_way() -> None:
    """The server dies answering the second cancel: the report says why the run stopped, and
    which tasks it did not attempt."""
    with running_reference_server("--seed", "working=3", "--die-after", "4") as url:
        ids = ["working-001", "working-002", "working-003"]
        stopped = run_mcptask(
            "cancel", *ids, "-o", "json", "--protocol", "2025-11-25", "--url", url
        )
    report = document("cancel.json", stopped)
    assert [r["outcome"] for r in report["results"]] == ["cancelled", "unknown", "skipped"]
    assert report["error"]
    assert report["exitCode"] == stopped.code == 3


# -- the outputs that do not depend on the era ---------------------------------------------------


def test_profiles_and_what_this_machine_keeps(tmp_path: Path) -> None:
    env = {"MCPTASK_STATE_DIR": str(tmp_path / "state"), "MCPTASK_CONFIG_DIR": str(tmp_path)}
    secret = tmp_path / "secret"
    secret.write_text("not-checked")
    with running_reference_server("--seed", "working=1") as url:
        saved = run_mcptask(
            "connect", url, "--save", "ref", "--default", "--keep-session", "-o", "jsonl", env=env
        )
        (line,) = lines("connect.json", saved)
        assert line["target"] == url
        other = run_mcptask(
            "connect", url, "-H", "X-Trace: on", "--token-env", "MY_TOKEN", "--timeout", "12.5",
            "--auth", "client-credentials", "--client-id", "robot", "--client-secret-file",
            str(secret), "--client-issuer", "http://127.0.0.1:9", "--scope", "tasks:read",
            "--save", "other", "-o", "json", env={**env, "MY_TOKEN": "not-checked"},
        )  # fmt: skip
        assert other.code == 0, other.stderr
        dry = run_mcptask(
            "cancel", "--dry-run", "working-001", "nope", "-o", "jsonl", "--url", url, env=env
        )
        assert len(lines("cancel-dry-run-line.json", dry)) == 2
        needless = run_mcptask("login", url, "-o", "json", env=env)
        assert document("login.json", needless)["signedIn"] is False
        nothing = run_mcptask("list", "--known", "-o", "json", "--url", url, env=env)
        assert document("list-known.json", nothing) == {"tasks": [], "count": 0, "gone": []}
        recorded = run_mcptask("get", "working-001", "-o", "ids", "--url", url, env=env)
        assert recorded.code == 0, recorded.stderr

    # Over stdio, a task dies with the server process that made it: the next run finds it gone.
    stdio = reference_stdio_command("--protocol-eras", "legacy")
    local = run_mcptask(
        "connect", "--server", stdio, "-e", "SERVER_NAME=local", "--save", "local", env=env
    )
    assert local.code == 0, local.stderr
    started = run_mcptask("start", "long_job", "seconds:=60", "-o", "ids", "-P", "local", env=env)
    assert started.code == 0, started.stderr
    known = run_mcptask("list", "--known", "-o", "json", "-P", "local", env=env)
    assert document("list-known.json", known)["gone"] == [started.stdout.strip()]

    profiles = document("profiles.json", run_mcptask("profiles", "-o", "json", env=env))
    assert [profile["name"] for profile in profiles["profiles"]] == ["local", "other", "ref"]
    assert profiles["default"] == "ref"
    local_line, other_line, _ = lines(
        "profiles-line.json", run_mcptask("profiles", "-o", "jsonl", env=env)
    )
    assert local_line["env"] == {"SERVER_NAME": "saved"}
    assert other_line["token"] == "env:MY_TOKEN"
    assert other_line["clientSecret"] == f"file:{secret}"
    assert other_line["clientIssuer"] == "http://127.0.0.1:9"
    assert local_line["clientIssuer"] is None
    assert other_line["headers"] == {"X-Trace": "saved"}
    assert {line["source"] for line in (local_line, other_line)} == {None}
    # Servers of an MCP client config file carry where they came from.
    mcp_json = tmp_path / "mcp.json"
    mcp_json.write_text('{"mcpServers": {"jobs": {"command": "jobs-server"}}}', encoding="utf-8")
    listed = run_mcptask("profiles", "--config", str(mcp_json), "-o", "json", env=env)
    (jobs,) = document("profiles.json", listed)["profiles"]
    assert jobs["source"] == {"file": str(mcp_json.resolve()), "server": "jobs"}
    everything = document("forget.json", run_mcptask("forget", "--all", "-o", "json", env=env))
    assert everything == {"forgotten": ["working-001"], "notRecorded": [], "server": None}


def test_login_and_logout(tmp_path: Path) -> None:
    """A client-credentials sign-in (the reference server is its own authorization server)."""
    secret = "s" * 24
    with running_reference_server("--oauth", "--oauth-client", f"ci-robot:{secret}") as url:
        env = {
            "MCPTASK_STATE_DIR": str(tmp_path),
            "MCPTASK_CLIENT_ID": "ci-robot",
            "MCPTASK_CLIENT_SECRET": secret,
            "MCPTASK_CLIENT_ISSUER": url.removesuffix("/mcp"),
        }
        sign_in = ("login", url, "--auth", "client-credentials")
        (signed,) = lines("login.json", run_mcptask(*sign_in, "-o", "jsonl", env=env))
        assert signed["grant"] == "client_credentials"
        logout = document("logout.json", run_mcptask("logout", url, "-o", "json", env=env))
        assert logout["url"] == url
        assert len(logout["forgotten"]) == 1
        document("login.json", run_mcptask(*sign_in, "-o", "json", env=env))
    everywhere = run_mcptask("logout", "--all", "-o", "jsonl", env=env)
    assert [line["clientId"] for line in lines("logout-line.json", everywhere)] == ["ci-robot"]


def test_several_servers_in_one_run(tmp_path: Path) -> None:
    """One server of each era, as profiles `era-legacy` and `era-modern` (the latter has no
    task list: its section of `list` is a failed one)."""
    with (
        running_reference_server("--protocol-eras", "legacy", "--seed", SEED) as legacy,
        running_reference_server("--protocol-eras", "modern", "--seed", SEED) as modern,
    ):
        config = tmp_path / "config"
        config.mkdir()
        profiles = (
            f'[profiles.era-legacy]\nurl = "{legacy}"\n[profiles.era-modern]\nurl = "{modern}"\n'
        )
        (config / "profiles.toml").write_text(profiles, encoding="utf-8")
        env = {"MCPTASK_CONFIG_DIR": str(config), "MCPTASK_STATE_DIR": str(tmp_path)}

        def run(*args: str) -> Result:
            return run_mcptask(*args, "-P", "era-*", env=env)

        listed = document("fleet.json", run("list", "-o", "json"))
        assert [section["outcome"] for section in listed["servers"]] == ["ok", "failed"]
        assert {
            line["server"] for line in lines("fleet-line.json", run("list", "-o", "jsonl"))
        } == {"era-legacy"}
        connected = document("fleet.json", run("connect", "-o", "json"))
        assert [section["era"] for section in connected["servers"]] == ["2025-11-25", "2026-07-28"]
        assert len(lines("fleet-line.json", run("connect", "-o", "jsonl"))) == 2
        got = document("fleet.json", run("get", "completed-001", "-o", "json"))
        assert [section["report"]["status"] for section in got["servers"]] == ["completed"] * 2
        ids = ("working-001", "working-002")
        planned = document("fleet.json", run("cancel", *ids, "--dry-run", "-o", "json"))
        assert planned["dryRun"] is True
        assert lines("fleet-line.json", run("cancel", *ids, "--dry-run", "-o", "jsonl"))
        cancelled = document("fleet.json", run("cancel", ids[0], "-o", "json"))
        assert cancelled["summary"]["cancelled"] == 2
        streamed = lines("fleet-line.json", run("cancel", ids[1], "-o", "jsonl"))
        assert {(line["server"], line["outcome"]) for line in streamed} == {
            ("era-legacy", "cancelled"),
            ("era-modern", "cancelled"),
        }
        watched = document("fleet.json", run("watch", "completed-001", "failed-001", "-o", "json"))
        assert [len(section["report"]["tasks"]) for section in watched["servers"]] == [2, 2]
        changes = lines("fleet-line.json", run("watch", "completed-001", "-o", "jsonl"))
        assert {(line["server"], line["status"]) for line in changes} == {
            ("era-legacy", "completed"),
            ("era-modern", "completed"),
        }
