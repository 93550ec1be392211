"""`mcptask get`: one task in full."""

from __future__ import annotations

from mcptask.cli.invocation import Invocation
from mcptask.cli.options import Common, TaskIdArgument, with_server_options


@with_server_options
def get(
    task_id: TaskIdArgument,
    *,
    common: Common,
) -> None:
    """Show one task in full."""
    from mcptask.output.views.tasks import GetView

    invocation = Invocation(common)
    view = GetView(invocation.screen)
    with invocation.client(rejoin=[task_id]) as client:
        task = client.get_task(task_id)
    view.show(task)
