"""How a 2025-11-25 task asks the client for input: with requests of the server's own
(`elicitation/create`, related to the task by `_meta`), sent on the stream of a `tasks/result`
call or once on the GET stream of the session that created the task, and answered by the
client's JSON-RPC response in the same session."""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from typing import Any

from mcptask.reference_server.records import INPUT_REQUIRED, TaskNotFoundError, TaskView
from mcptask.reference_server.scripting import RELATED_TASK_META
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.wire import ELICITATION_CREATE, JsonObject

# The client capability (declared in initialize) each kind of request to the client needs.
CLIENT_CAPABILITY = {
    ELICITATION_CREATE: "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
# How many sessions' capabilities, open questions and tasks' creators are remembered (the
# oldest are forgotten first).
MEMORY_LIMIT = 10_000


class ClientQuestions:
    """What each session declared it can be asked, the requests sent and not yet answered
    ((session, request id) -> (task id, input key)), and the session that created each task
    with the keys already announced to it (the GET stream's questions, sent once)."""

    def __init__(self, store: TaskStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._client_capabilities: OrderedDict[str | None, JsonObject] = OrderedDict()
        self._asked: OrderedDict[tuple[str | None, str], tuple[str, str]] = OrderedDict()
        self._creators: OrderedDict[str, tuple[str | None, set[str]]] = OrderedDict()
        self._ask_numbers = itertools.count(1)

    def declared(self, session_id: str | None, capabilities: object) -> None:
        with self._lock:
            self._client_capabilities[session_id] = (
                capabilities if isinstance(capabilities, dict) else {}
            )
            _bound(self._client_capabilities)

    def created(self, task_id: str, session_id: str | None) -> None:
        with self._lock:
            self._creators[task_id] = (session_id, set())
            _bound(self._creators)

    def askable(self, view: TaskView, session_id: str | None) -> set[str]:
        """The keys of what the task asks that the session's client declared it can be
        asked."""
        with self._lock:
            declared = self._client_capabilities.get(session_id, {})
        keys = set()
        for key, request in view.questions().items():
            capability = declared.get(CLIENT_CAPABILITY.get(str(request.get("method")), ""))
            if not isinstance(capability, dict):
                continue
            params = request.get("params")
            mode = params.get("mode", "form") if isinstance(params, dict) else "form"
            # An empty elicitation capability means form mode only (spec).
            if request.get("method") == ELICITATION_CREATE and capability:
                if mode not in capability:
                    continue
            elif request.get("method") == ELICITATION_CREATE and mode != "form":
                continue
            keys.add(key)
        return keys

    def questions(
        self, view: TaskView, session_id: str | None, skip: set[str]
    ) -> list[tuple[str, JsonObject]]:
        """(input key, JSON-RPC request with a new id, remembered until answered) of each
        question the task asks the session's client, but the keys in `skip`."""
        requests = view.questions()
        keys = sorted(self.askable(view, session_id) - skip)
        out = []
        with self._lock:
            for key in keys:
                msg_id = f"mcptask-ask-{next(self._ask_numbers)}"
                self._asked[(session_id, msg_id)] = (view.task_id, key)
                _bound(self._asked)
                request = requests[key]
                params = dict(request.get("params") or {})
                meta = dict(params.get("_meta") or {})
                meta[RELATED_TASK_META] = {"taskId": view.task_id}
                params["_meta"] = meta
                message = {"jsonrpc": "2.0", "id": msg_id, "method": request["method"]}
                out.append((key, {**message, "params": params}))
        return out

    def announce(self, view: TaskView) -> tuple[str | None, list[JsonObject]] | None:
        """For the session's GET stream, once per question: the session that created a task
        now in input_required, and the requests asking it what the task asks anew."""
        if view.status != INPUT_REQUIRED:
            return None
        with self._lock:
            creator = self._creators.get(view.task_id)
        if creator is None:
            return None
        session_id, announced = creator
        questions = self.questions(view, session_id, announced)
        announced.update(key for key, _ in questions)
        return session_id, [request for _, request in questions]

    def take_answer(self, message: JsonObject, session_id: str | None, owner: str | None) -> None:
        """The client's response to a request the server sent: its result answers the
        task's question, seen as `owner` (an error response leaves the task as it was, to
        be asked again)."""
        with self._lock:
            question = self._asked.pop((session_id, str(message.get("id"))), None)
        if question is None or not isinstance(message.get("result"), dict):
            return
        task_id, key = question
        try:
            self._store.provide_input(task_id, owner, {key: message["result"]})
        except TaskNotFoundError:
            return  # gone meanwhile: nothing to answer
        with self._lock:  # the same question sent elsewhere is answered now
            for stale in [k for k, v in self._asked.items() if v == question]:
                del self._asked[stale]


def _bound(memory: OrderedDict[Any, Any]) -> None:
    while len(memory) > MEMORY_LIMIT:
        memory.popitem(last=False)
