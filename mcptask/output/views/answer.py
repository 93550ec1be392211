"""The view of `answer`: what a task asks (on stderr), the prompts that take the answer on a
terminal, and what happened after the answer (stdout). Server text is sanitized and never read
as markup; a secret field's value is never shown."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mcptask.output.sanitize import clean, clean_block
from mcptask.output.views import View
from mcptask.protocol.inputs import (
    ACTIONS,
    ELICITATION,
    FormField,
    InputRequest,
    elicitation_response,
)
from mcptask.protocol.jsonrpc import JsonObject

if TYPE_CHECKING:
    from rich.text import Text

    from mcptask.operations.answer import AnswerReport

HIDDEN = "<hidden>"
"""Shown, and written to JSON output, in place of a secret field's value."""

_SAID = {
    "working": "the answer was taken: the task is working again",
    "completed": "the answer was taken: the task completed",
    "input_required": "the answer was taken, and the task asks again: answer with: mcptask "
    "answer {id}",
    "failed": "the task failed after the answer",
    "cancelled": "the task was cancelled after the answer",
    "sent": "the answer was sent (the task was not followed)",
    "unchanged": "the answer was sent, but the task still waits on it (the server may take it "
    "later: mcptask get {id})",
    "gone": "the answer was sent, and then the server no longer knew the task",
    "not-waiting": "task {id} does not wait for input (it is {status}): nothing was sent",
    "unheard": "it waits for input, but no question reached mcptask on the tasks/result stream "
    "in time; a 2025-11-25 server may send a question only once, and it may have gone to an "
    "earlier tasks/result (an answer that sent nothing: a misfit, no, Ctrl-C) or to another "
    "stream (the session's GET stream, the tools/call's), where it cannot be asked for again: "
    "nothing was sent",
    "interrupted": "stopped after the answer was sent (the task is {status})",
    "stopped": "stopped: nothing was sent",
}
"""What the summary line says of each kind of report (`{id}`, `{status}` filled in)."""


class AnswerView(View["AnswerReport"]):
    """Shows the questions, asks on a terminal, and reports the outcome."""

    command = "answer"
    formats = ("table", "json", "jsonl")

    def questions(self, task_id: str, asked: list[InputRequest], *, always: bool = False) -> None:
        """What the task asks, request by request, on stderr (with table output, or `always`:
        before prompts)."""
        if self.screen.format != "table" and not always:
            return
        from rich.text import Text

        count = f"{len(asked)} requests" if len(asked) != 1 else "1 request"
        self.screen.err.print(Text(f"task {clean(task_id)} asks ({count}):", style="bold"))
        for request in asked:
            self.screen.err.print(_request_text(request))

    def ask(self, asked: list[InputRequest]) -> JsonObject:
        """The answers, asked request by request (a form field by field: choices offered,
        defaults suggested, each value checked before the next, secrets not echoed). A
        request that only a file can answer (sampling, roots) is left unanswered."""
        from rich.prompt import Confirm, Prompt
        from rich.text import Text

        console = self.screen.err
        responses: JsonObject = {}
        for request in asked:
            label = f"[{clean(request.key)}]"
            if request.method != ELICITATION:
                self.screen.warn(
                    f"{label} {clean(request.method)} is left unanswered: mcptask answers it "
                    "only with a response given in --from-file"
                )
                continue
            action = Prompt.ask(
                Text.assemble((label, "magenta"), " accept, decline or cancel?"),
                choices=list(ACTIONS),
                default="accept",
                console=console,
            )
            if action != "accept":
                responses[request.key] = elicitation_response(action)
            elif request.is_url:
                if not request.url.lower().startswith(("https://", "http://")):
                    self.screen.warn(f"{label} opens no browser: not an http(s) URL")
                elif Confirm.ask("Open the URL in a browser?", default=False, console=console):
                    import webbrowser

                    webbrowser.open(request.url)
                done = Confirm.ask("Have you finished at the site?", default=False, console=console)
                responses[request.key] = elicitation_response("accept" if done else "cancel")
                # A URL request accepted carries no content: the person acted at the site.
            else:
                content = {f.name: v for f in request.fields if (v := self._field(f)) is not None}
                responses[request.key] = elicitation_response("accept", content)
        return responses

    def _field(self, form_field: FormField) -> Any:
        """One field's value from the prompt, typed and checked (None: left out)."""
        from rich.prompt import Prompt
        from rich.text import Text

        from mcptask.operations.schema_check import check_against

        name = clean(form_field.name)
        hint = ", ".join([form_field.type, *map(clean, form_field.constraints())])
        required = ", required" if form_field.required else ""
        choices = form_field.choices
        if choices and any(clean(choice) != choice for choice in choices):
            choices = None  # not typeable as shown: free text, which the check then judges
        default = form_field.default
        while True:
            text = Prompt.ask(
                Text(f"  {name} ({hint}{required})"),
                choices=choices,
                default=None if default is None else clean(_typed_text(default)),
                password=form_field.secret,
                show_default=not form_field.secret,
                console=self.screen.err,
            )
            if not text and not form_field.required:
                return None
            try:
                value = form_field.coerce(text or "")
            except ValueError as exc:
                self.screen.warn(str(exc))
                continue
            one_field = {"type": "object", "properties": {form_field.name: form_field.schema}}
            hidden = [form_field.name] if form_field.secret else []
            check = check_against(one_field, {form_field.name: value}, hidden=hidden)
            if check.problem is None:
                return value
            self.screen.warn(f"{name}: {check.problem}")

    def confirm(self, asked: list[InputRequest], responses: JsonObject) -> bool:
        """Show the answer (secrets hidden) and ask whether to send it."""
        from rich.prompt import Confirm

        shown = json.dumps(_masked(asked, responses), indent=2)
        self.screen.err.print(f"the answer:\n{clean_block(shown)}", markup=False)
        return Confirm.ask("Send it?", default=False, console=self.screen.err)

    def show(self, shown: AnswerReport) -> None:
        super().show(shown)
        if shown.follow_error is not None:
            self.screen.warn(
                f"the answer was sent, but the task could not be followed afterwards "
                f"({shown.follow_error}): mcptask get {clean(shown.task_id)} tells where it is"
            )

    def table(self, shown: AnswerReport) -> None:
        status = shown.latest.status if shown.latest is not None else "-"
        kind = "stopped" if shown.kind == "interrupted" and not shown.sent else shown.kind
        said = _SAID[kind].format(id=clean(shown.task_id), status=clean(status))
        self.screen.plain_lines([f"task {shown.task_id}: {said}"])
        if shown.asks_now:
            self.questions(shown.task_id, shown.asks_now)

    def document(self, shown: AnswerReport) -> JsonObject:
        """`answer -o json`: `{"taskId", "outcome", "status", "asked", "sent", "task"}`: what
        the task asked (as sent), the answers sent (secrets hidden), the task as last seen."""
        return {
            "taskId": shown.task_id,
            "outcome": shown.kind,
            "status": shown.latest.status if shown.latest is not None else None,
            "asked": {r.key: {"method": r.method, "params": r.params} for r in shown.asked},
            "sent": _masked(shown.asked, shown.sent),
            "task": shown.latest.to_wire() if shown.latest is not None else None,
        }


def _request_text(request: InputRequest) -> Text:
    """One request in words: its key and kind, the message, then the fields or the URL."""
    from rich.text import Text

    text = Text(f"[{clean(request.key)}] ", style="magenta")
    if request.method != ELICITATION:
        text.append(f"{clean(request.method)}: answer it with --from-file FILE, or leave it")
        return text
    text.append("a URL to visit" if request.is_url else "a form")
    if request.message:
        text.append(f"\n  {clean(request.message)}")
    if request.is_url:
        text.append(f"\n  URL: {clean(request.url)}\n  host: ")
        text.append(clean(request.url_host) or "(none)", style="bold")
    for form_field in request.fields:
        text.append(f"\n  - {clean(form_field.name)}: ", style="")
        details = [form_field.type, *form_field.constraints()]
        if form_field.choices:
            details.append("one of " + ", ".join(form_field.choices))
        if form_field.required:
            details.append("required")
        if form_field.default is not None and not form_field.secret:
            details.append(f"default {_typed_text(form_field.default)}")
        if form_field.secret:
            details.append("secret")
        text.append(clean(", ".join(map(str, details))))
        description = form_field.schema.get("description") or form_field.schema.get("title")
        if isinstance(description, str) and description:
            text.append(f" ({clean(description)})", style="dim")
    return text


def _typed_text(value: object) -> str:
    """A default as the user would type it (`true`, `3`, `text`)."""
    return value if isinstance(value, str) else json.dumps(value)


def _masked(asked: list[InputRequest], responses: JsonObject) -> JsonObject:
    """The responses with every secret field's value replaced by HIDDEN."""
    by_key = {request.key: request for request in asked}
    masked: JsonObject = {}
    for key, response in responses.items():
        request = by_key.get(key)
        hidden = request.secrets_in(response) if request is not None else {}
        if hidden:
            content = {n: HIDDEN if n in hidden else v for n, v in response["content"].items()}
            response = {**response, "content": content}
        masked[key] = response
    return masked
