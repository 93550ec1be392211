"""What a 2025-11-25 task asks: the server asks with requests of its own (`elicitation/create`,
tagged with the task in `_meta["io.modelcontextprotocol/related-task"]`), sent on the stream
of a `tasks/result` call (what the spec says a client calls on `input_required`). This holds
such a call open in a thread of its own, catches the task's requests as they come, and sends
the answers as JSON-RPC responses (same id) in the session they came in."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from mcptask.errors import McptaskError
from mcptask.protocol.inputs import InputRequest
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.transport import Reply, Transport

RELATED_TASK = "io.modelcontextprotocol/related-task"


class HeldQuestions:
    """The requests a task sends while `hold` (a `tasks/result` call) is held open, each an
    InputRequest under the key of its JSON-RPC id, until answered."""

    def __init__(self, task_id: str, transport: Transport, hold: Callable[[], object]) -> None:
        self.task_id = task_id
        self._cond = threading.Condition()
        self._open: dict[str, tuple[InputRequest, object, Reply]] = {}
        self.ended: str | None = None
        """Why the held call ended (the task ended, or the error it met); None while held."""
        transport.set_request_handler(self._caught)
        thread = threading.Thread(target=self._hold, args=(hold,), name="tasks-result", daemon=True)
        thread.start()

    def _hold(self, hold: Callable[[], object]) -> None:
        try:
            hold()
            why = "the task ended"
        except McptaskError as exc:
            why = exc.message
        except Exception as exc:  # the thread must say why it ended, whatever ended it
            why = type(exc).__name__
        with self._cond:
            self.ended = why
            self._cond.notify_all()

    def _caught(self, message: JsonObject, reply: Reply) -> None:
        """A request of the server's: kept if it is about our task, else left unanswered."""
        params = message.get("params")
        params = dict(params) if isinstance(params, dict) else {}
        meta = params.pop("_meta", None)
        related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
        if not isinstance(related, dict) or related.get("taskId") != self.task_id:
            return
        msg_id = message.get("id")
        request = InputRequest(str(msg_id), str(message.get("method")), params)
        with self._cond:
            self._open[request.key] = (request, msg_id, reply)
            self._cond.notify_all()

    def wait(self, seconds: float) -> list[InputRequest]:
        """What the task asks and was not answered, waiting up to `seconds` for a first
        request (less if the held call ends)."""
        deadline = time.monotonic() + seconds
        with self._cond:
            while not self._open and self.ended is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self.unanswered()

    def unanswered(self) -> list[InputRequest]:
        """The requests caught and not answered yet, in the order they came."""
        with self._cond:
            return [request for request, _, _ in self._open.values()]

    def answer(self, responses: JsonObject) -> None:
        """Send each response (by key) as the result of the request it answers."""
        for key, result in responses.items():
            with self._cond:
                _, msg_id, reply = self._open.pop(key)
            reply({"jsonrpc": "2.0", "id": msg_id, "result": result})
