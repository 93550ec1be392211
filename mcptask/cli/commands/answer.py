"""`mcptask answer`: answer a task that waits for input (`input_required`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from mcptask.cli.invocation import Invocation
from mcptask.cli.options import (
    Common,
    TaskIdArgument,
    finite,
    wait_timeout_option,
    with_server_options,
)
from mcptask.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from mcptask.output.views.answer import AnswerView
    from mcptask.protocol.inputs import InputRequest
    from mcptask.protocol.jsonrpc import JsonObject


@with_server_options
def answer(
    task_id: TaskIdArgument,
    items: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="KEY=VALUE|KEY:=JSON",
            help="Form fields: KEY=VALUE is typed as the field asks, KEY:=JSON is raw JSON.",
        ),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option("--key", help="Which request this answers, when the task asks several."),
    ] = None,
    from_file: Annotated[
        str | None,
        typer.Option(
            "--from-file",
            help='The answer as JSON: one response ({"action": ...}), or responses by key; '
            "- for stdin.",
        ),
    ] = None,
    accept: Annotated[
        bool, typer.Option("--accept", help="Accept with no fields (a URL request, once done).")
    ] = False,
    decline: Annotated[bool, typer.Option("--decline", help="Decline the request(s).")] = False,
    cancel: Annotated[bool, typer.Option("--cancel", help="Cancel the request(s).")] = False,
    wait_timeout: Annotated[
        float,
        wait_timeout_option(help="Seconds to follow the task after the answer (0: send and stop)."),
    ] = 30.0,
    *,
    common: Common,
) -> None:
    """Answer a task that waits for input: show what it asks, then send the answer.

    On a terminal with no answer given, asks field by field. Without a terminal, the answer
    comes from KEY=VALUE items, --from-file, --accept, --decline or --cancel. The answer is
    checked against what the task asks before anything is sent.
    """
    from mcptask.cli.inputs import parse_item, read_json
    from mcptask.operations import answer as answering
    from mcptask.output.views.answer import AnswerView

    finite("--wait-timeout", wait_timeout)
    flags = {"accept": accept, "decline": decline, "cancel": cancel}
    actions = [name for name, given in flags.items() if given]
    if len(actions) > 1:
        raise UsageError("give one of --accept, --decline and --cancel")
    parsed = [parse_item(item, what="form field") for item in items or []]
    file_answer = None
    if from_file is not None:
        where = "stdin" if from_file == "-" else repr(from_file)
        file_answer = read_json(from_file, f"--from-file {where}")
    given = bool(parsed or actions or from_file is not None)
    invocation = Invocation(common)
    interactive = not given and sys.stdin.isatty() and invocation.screen.err_is_terminal
    view = AnswerView(invocation.screen)
    with invocation.client(rejoin=[task_id]) as client:
        task, asked = answering.read_questions(client, task_id, wait_timeout=wait_timeout)
        if not asked:
            report = answering.not_waiting(task)
        else:
            view.questions(task_id, asked, always=interactive)
            if interactive:
                chosen = [request for request in asked if key in (None, request.key)]
                if not chosen:
                    raise UsageError(f"the task asks nothing under key {key!r}")
                confirmed = ask_on_terminal(view, chosen, asked)
                if confirmed is None:
                    view.show(answering.not_waiting(task, interrupted=True))
                    raise typer.Exit(int(ExitCode.INTERRUPTED))
                responses = confirmed
            else:
                responses = answering.build_responses(
                    asked,
                    key=key,
                    items=parsed,
                    action=actions[0] if actions else None,
                    from_file=file_answer,
                    warn=invocation.screen.warn,
                )
            invocation.hidden.update(answering.secret_texts(asked, responses))
            with invocation.stop as stop:
                report = answering.send_answers(
                    client,
                    task,
                    asked,
                    responses,
                    wait_timeout=wait_timeout,
                    sleep=stop.event.wait,
                    stop=lambda: stop.stopped,
                )
    view.show(report)
    raise typer.Exit(int(report.exit_code))


def ask_on_terminal(
    view: AnswerView, chosen: list[InputRequest], asked: list[InputRequest]
) -> JsonObject | None:
    """The person's answers to the `chosen` requests of all that was `asked`, checked, or
    None when they would not send them."""
    from mcptask.operations.answer import check_responses

    responses = view.ask(chosen)
    check_responses(asked, responses, warn=view.screen.warn)
    return responses if view.confirm(asked, responses) else None
