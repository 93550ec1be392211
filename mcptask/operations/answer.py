"""Answer a task that waits for input: read what it asks, build and check the answers, send
them, follow the task until it moves on."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcptask.client.session import McpClient
from mcptask.errors import ExitCode, McptaskError, TaskNotFound, UsageError
from mcptask.operations.polling import DEFAULT_WAIT_SECONDS, follow_task
from mcptask.operations.schema_check import check_against
from mcptask.protocol.inputs import (
    ACTIONS,
    ELICITATION,
    InputRequest,
    elicitation_response,
)
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import INPUT_REQUIRED, Task

# The task's new status after the answer (`input_required`: it asks again, or for the rest).
SETTLED_KINDS = ("working", "completed", "input_required", "failed", "cancelled")


@dataclass(frozen=True)
class AnswerReport:
    """What the task asked, what was sent, and how the task was last seen.

    `kind`: a status of SETTLED_KINDS; `sent` (not followed: --wait-timeout 0, or following
    failed: `follow_error` says why); `unchanged` (still waiting on the answered requests when
    time ran out); `gone` (the server no longer knows the task); `not-waiting` (the task did
    not wait for input: nothing was sent); `unheard` (it waits for input, but no question
    reached mcptask: a 2025-11-25 server sends its questions as requests, which may have gone
    once to another stream; nothing was sent); `interrupted` (nothing was sent, or the
    follow-up was stopped).
    """

    task_id: str
    asked: list[InputRequest]
    sent: JsonObject
    latest: Task | None
    kind: str
    interrupted: bool = False
    asks_now: list[InputRequest] = field(default_factory=list)  # kind `input_required`
    follow_error: str | None = None

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.INTERRUPTED if self.interrupted else ANSWER_CODES[self.kind]


ANSWER_CODES: dict[str, ExitCode] = {
    "working": ExitCode.OK,
    "completed": ExitCode.OK,
    "input_required": ExitCode.OK,
    "sent": ExitCode.OK,
    "failed": ExitCode.TASK_FAILED,
    "cancelled": ExitCode.TASK_FAILED,
    "gone": ExitCode.TASK_FAILED,
    "not-waiting": ExitCode.TASK_FAILED,
    "unchanged": ExitCode.PENDING,
    "unheard": ExitCode.PENDING,
}
"""The exit code of each kind of report (the answer taken: 0)."""


QUESTION_WAIT_MIN = 5.0  # seconds a 2025-11-25 task's first question is waited for at least


def read_questions(
    client: McpClient, task_id: str, *, wait_timeout: float = DEFAULT_WAIT_SECONDS
) -> tuple[Task, list[InputRequest]]:
    """The task and what it asks (a question sent as a request of the server's own is waited
    for up to `wait_timeout` seconds, at least QUESTION_WAIT_MIN)."""
    wait = max(wait_timeout, QUESTION_WAIT_MIN)
    return client.read_asked(task_id, wait=wait, hold_for=wait + wait_timeout + 30)


def not_waiting(task: Task, *, interrupted: bool = False) -> AnswerReport:
    """The report of a task not answered (it asks nothing, or the person stopped)."""
    kind = "interrupted" if interrupted else "not-waiting"
    if not interrupted and task.status == INPUT_REQUIRED:
        kind = "unheard"
    return AnswerReport(task.taskId, [], {}, task, kind, interrupted=interrupted)


def build_responses(
    asked: list[InputRequest],
    *,
    key: str | None,
    items: list[tuple[str, Any, bool]],
    action: str | None,
    from_file: object,
    warn: Callable[[str], object],
) -> JsonObject:
    """The answers the command line gives, checked against what the task asks. `items`:
    (field, value, raw), a raw value JSON as given, else text of the field's type. `action`
    answers the request `key` names, or every elicitation. `from_file`: a map of the task's
    keys to responses, else one response, to the request `key` names or the only one."""
    by_key = {request.key: request for request in asked}
    if key is not None and key not in by_key:
        raise _no_key(key, asked)
    if from_file is not None:
        if items or action:
            raise UsageError("--from-file gives the whole answer: no items, --accept, --decline")
        if not isinstance(from_file, dict):
            raise UsageError("--from-file must hold a JSON object")
        by_key_map = key is None and bool(from_file) and set(from_file) <= set(by_key)
        responses = from_file if by_key_map else {_only(asked, key).key: from_file}
    elif action is not None and action != "accept" and not items:
        targets = [by_key[key]] if key is not None else asked
        responses = {
            request.key: elicitation_response(action)
            for request in targets
            if request.method == ELICITATION
        }
    elif items or action == "accept":
        if action not in (None, "accept"):
            raise UsageError(f"--{action} sends no fields: leave out the KEY=VALUE items")
        request = _only(asked, key)
        content = None if request.is_url and not items else _content(request, items)
        responses = {request.key: elicitation_response("accept", content)}
    else:
        raise UsageError(
            "no answer given: give the fields as KEY=VALUE items (KEY:=JSON for raw JSON), "
            "--from-file FILE, --accept (a URL request), --decline or --cancel"
        )
    check_responses(asked, responses, warn=warn)
    return responses


def check_responses(
    asked: list[InputRequest], responses: JsonObject, *, warn: Callable[[str], object]
) -> None:
    """UsageError for an answer that does not fit what was asked; a schema that cannot be used
    is `warn`ed of (the server then judges the answer)."""
    by_key = {request.key: request for request in asked}
    if not responses:
        raise UsageError("the answer answers none of the task's requests; nothing was sent")
    for key, response in responses.items():
        request = by_key.get(key)
        if request is None:
            raise _no_key(key, asked)
        if not isinstance(response, dict):
            raise UsageError(f"the answer to {key!r} must be a JSON object")
        if request.method != ELICITATION:
            continue  # sampling and roots answers come whole from a file, as given
        action = response.get("action")
        if action not in ACTIONS:
            raise UsageError(f"the answer to {key!r} needs an action: accept, decline or cancel")
        if action != "accept" or request.is_url:
            continue
        content = response.get("content", {})
        if not isinstance(content, dict):
            raise UsageError(f"the answer to {key!r}: content must be a JSON object")
        fields = [form_field.name for form_field in request.fields]
        unknown = [name for name in content if name not in fields]
        if unknown:  # a form is its fields, whatever additionalProperties says
            raise _no_field(request, unknown[0])
        secrets = [form_field.name for form_field in request.fields if form_field.secret]
        check = check_against(request.schema, content, hidden=secrets)
        if check.unusable is not None:
            warn(
                f"the form of {key!r} cannot be used ({check.unusable}): its answer was not checked"
            )
        if check.problem is not None:
            where = f"field {check.where!r}" if check.where else "the form"
            raise UsageError(f"the answer to {key!r} does not fit: {where}: {check.problem}")


def send_answers(
    client: McpClient,
    task: Task,
    asked: list[InputRequest],
    responses: JsonObject,
    *,
    wait_timeout: float = DEFAULT_WAIT_SECONDS,
    sleep: Callable[[float], object] = time.sleep,
    stop: Callable[[], bool] = lambda: False,
) -> AnswerReport:
    """Send `responses`, then follow the task until it leaves the answered requests behind,
    for at most `wait_timeout`."""
    task_id = task.taskId
    client.send_answers(task_id, responses)
    if wait_timeout <= 0:
        return AnswerReport(task_id, asked, responses, task, "sent")
    answered = {request.key: request for request in asked if request.key in responses}

    def settled(latest: Task) -> bool:
        """A new status, or none of the answered requests still asked (a key asked anew with
        another question is a new request: the task asks again)."""
        if latest.status != INPUT_REQUIRED:
            return True
        now = {request.key: request for request in client.asks_now(latest)}
        # Nothing asked yet: the old round is over, the next one not heard of yet.
        return bool(now) and all(now.get(key) != request for key, request in answered.items())

    # The first tasks/get after an acknowledged update may still show the old round.
    deadline = time.monotonic() + wait_timeout
    try:
        latest = follow_task(
            client,
            task,
            lambda seen: seen is not task and settled(seen),
            deadline=deadline,
            wait=sleep,
            stop=stop,
        )
    except TaskNotFound:
        return AnswerReport(task_id, asked, responses, None, "gone")
    except McptaskError as exc:  # said, so that nobody answers twice
        return AnswerReport(task_id, asked, responses, task, "sent", follow_error=exc.message)
    if latest is task or not settled(latest):
        kind = "interrupted" if stop() else "unchanged"
        return AnswerReport(task_id, asked, responses, latest, kind, interrupted=stop())
    asks_now = client.asks_now(latest)
    kind = latest.status if latest.status in SETTLED_KINDS else "unchanged"
    return AnswerReport(task_id, asked, responses, latest, kind, asks_now=asks_now)


def secret_texts(asked: list[InputRequest], responses: JsonObject) -> set[str]:
    """The secret field values of `responses` as the wire log could show them: JSON-encoded
    (ASCII-escaped or not: a server may echo them), and as is."""
    texts: set[str] = set()
    for request in asked:
        for value in request.secrets_in(responses.get(request.key)).values():
            texts |= {json.dumps(value), json.dumps(value, ensure_ascii=False), str(value)}
    return texts


def _only(asked: list[InputRequest], key: str | None) -> InputRequest:
    if key is not None:
        return next(request for request in asked if request.key == key)
    if len(asked) != 1:
        raise UsageError(
            f"the task asks {len(asked)} things at once: name the one this answers with "
            f"--key KEY (its keys: {_keys(asked)}), or give them all with --from-file"
        )
    return asked[0]


def _content(request: InputRequest, items: list[tuple[str, Any, bool]]) -> JsonObject:
    if request.method != ELICITATION or request.is_url:
        what = "a URL to visit" if request.is_url else request.method
        raise UsageError(
            f"request {request.key!r} is {what}, not a form: answer it with "
            + ("--accept, --decline or --cancel" if request.is_url else "--from-file FILE")
        )
    fields = {form_field.name: form_field for form_field in request.fields}
    content: JsonObject = {}
    for name, value, raw in items:
        form_field = fields.get(name)
        if form_field is None:
            raise _no_field(request, name)
        if name in content:
            raise UsageError(f"field {name!r} is given twice")
        try:
            content[name] = value if raw else form_field.coerce(value)
        except ValueError as exc:
            raise UsageError(f"the answer to {request.key!r}: {exc}") from None
    return content


def _keys(asked: list[InputRequest]) -> str:
    return ", ".join(repr(request.key) for request in asked) or "none"


def _no_key(key: str, asked: list[InputRequest]) -> UsageError:
    return UsageError(f"the task asks nothing under key {key!r} (its keys: {_keys(asked)})")


def _no_field(request: InputRequest, name: str) -> UsageError:
    fields = ", ".join(form_field.name for form_field in request.fields) or "none"
    return UsageError(f"the form of {request.key!r} has no field {name!r} (its fields: {fields})")
