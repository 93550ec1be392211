"""What a 2025-11-25 task asks: requests of the server's own (`elicitation/create`, tagged
with the task in `_meta[RELATED_TASK]`), sent on the stream of a `tasks/result` call held open
or on another stream the client listens to, kept per task until answered in their session."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from mcptask.errors import McptaskError
from mcptask.protocol.inputs import InputRequest
from mcptask.protocol.jsonrpc import METHOD_NOT_FOUND, JsonObject
from mcptask.transport import Reply, Transport

RELATED_TASK = "io.modelcontextprotocol/related-task"
# A hostile server could name endless tasks, or ask one task endless questions, on a stream
# that stays open (watch's GET stream): past these bounds its requests are refused.
MAX_ASKING_TASKS = 1_000
MAX_OPEN_QUESTIONS = 100
INTERNAL_ERROR = -32603


class AskedTasks:
    """The server's requests, routed by the task they name; one about no task is refused."""

    def __init__(self, transport: Transport) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[str, HeldQuestions] = {}
        transport.set_request_handler(self._route)

    def of(self, task_id: str) -> HeldQuestions:
        with self._lock:
            return self._tasks.setdefault(task_id, HeldQuestions())

    def known(self, task_id: str) -> HeldQuestions | None:
        with self._lock:
            return self._tasks.get(task_id)

    def _route(self, message: JsonObject, reply: Reply) -> None:
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
        task_id = related.get("taskId") if isinstance(related, dict) else None
        if not isinstance(task_id, str):
            refusal = {"code": METHOD_NOT_FOUND, "message": "not supported by mcptask"}
        else:
            with self._lock:
                questions = self._tasks.get(task_id)
                if questions is None and len(self._tasks) < MAX_ASKING_TASKS:
                    questions = self._tasks[task_id] = HeldQuestions()
            if questions is not None and questions.caught(message, reply):
                return
            refusal = {"code": INTERNAL_ERROR, "message": "too many open questions for mcptask"}
        reply({"jsonrpc": "2.0", "id": message.get("id"), "error": refusal})


class HeldQuestions:
    """The requests one task sent (on whichever stream), each an InputRequest under the key of
    its JSON-RPC id, until answered; and the `tasks/result` call held open to hear them."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._open: dict[str, tuple[InputRequest, list[tuple[object, Reply]]]] = {}
        """Key to the request and the (id, reply) of each time it was sent: the same question
        sent on two streams (tasks/result and GET) is one question, answered on both."""
        self.held = False
        """A `tasks/result` call was held open for the task (it may have ended since)."""
        self.ended: str | None = None
        """Why the held call ended (the task ended, or the error it met); None while held."""

    def hold(self, call: Callable[[], object]) -> None:
        """Hold `call` (a `tasks/result`) open in a thread of its own, hearing what comes;
        nothing when the task's questions are heard already (one open, or a call held)."""
        with self._cond:
            if self._open or (self.held and self.ended is None):
                return
            self.held, self.ended = True, None
        thread = threading.Thread(target=self._hold, args=(call,), name="tasks-result", daemon=True)
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

    def caught(self, message: JsonObject, reply: Reply) -> bool:
        """Keep a request about this task until answered (False: refused, too many)."""
        params = message.get("params")
        params = dict(params) if isinstance(params, dict) else {}
        params.pop("_meta", None)
        msg_id = message.get("id")
        request = InputRequest(str(msg_id), str(message.get("method")), params)
        with self._cond:
            for known, sent in self._open.values():
                if (known.method, known.params) == (request.method, request.params):
                    if len(sent) >= MAX_OPEN_QUESTIONS:
                        return False
                    sent.append((msg_id, reply))
                    return True
            if len(self._open) >= MAX_OPEN_QUESTIONS:
                return False
            self._open[request.key] = (request, [(msg_id, reply)])
            self._cond.notify_all()
        return True

    def wait(self, seconds: float) -> list[InputRequest]:
        """What the task asks and was not answered, waiting up to `seconds` for a first
        request (less if the held call ends, or none is held)."""
        deadline = time.monotonic() + seconds
        with self._cond:
            while not self._open and self.held and self.ended is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return self.unanswered()

    def unanswered(self) -> list[InputRequest]:
        with self._cond:
            return [request for request, _ in self._open.values()]

    def answer(self, responses: JsonObject) -> None:
        """Send each response (by key) as the result of the request it answers, each time
        it was sent."""
        for key, result in responses.items():
            with self._cond:
                _, sent = self._open.pop(key)
            for msg_id, reply in sent:
                reply({"jsonrpc": "2.0", "id": msg_id, "result": result})
