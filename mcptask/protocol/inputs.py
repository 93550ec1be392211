"""What a task in `input_required` asks (each a server-to-client request in miniature:
`elicitation/create`, a form of flat fields or a URL to visit, `sampling/createMessage` or
`roots/list`), and the answers. All of it is the server's text, never trusted: the views
sanitize it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from mcptask.errors import ProtocolViolation
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import Task

ELICITATION = "elicitation/create"
ACTIONS = ("accept", "decline", "cancel")
FIELD_TYPES = ("string", "number", "integer", "boolean")  # the spec's forms are flat
TRUE_WORDS = frozenset({"true", "yes", "y", "1", "on"})
FALSE_WORDS = frozenset({"false", "no", "n", "0", "off"})


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of an elicitation form."""

    name: str
    schema: JsonObject
    required: bool

    @property
    def type(self) -> str:
        """One of FIELD_TYPES (`string` for an enum without a type)."""
        kind = self.schema.get("type")
        return kind if kind in FIELD_TYPES else "string"

    @property
    def choices(self) -> list[str] | None:
        """What an enum field allows (`enum`, or each `oneOf`/`anyOf` item's `const`), None for
        a free field."""
        schema = self.schema
        options = schema.get("enum")
        if options is None:
            for key in ("oneOf", "anyOf"):
                items = schema.get(key)
                if isinstance(items, list):
                    options = [item.get("const") for item in items if isinstance(item, dict)]
        if isinstance(options, list) and options and all(isinstance(o, str) for o in options):
            return list(options)
        return None

    @property
    def secret(self) -> bool:
        """A field whose value is never echoed nor shown (`format: password`, `writeOnly`)."""
        return self.schema.get("format") == "password" or self.schema.get("writeOnly") is True

    @property
    def default(self) -> Any:
        return self.schema.get("default")

    def constraints(self) -> list[str]:
        """The field's limits in words (`min 1`, `max length 40`, ...)."""
        words = {
            "minimum": "min",
            "maximum": "max",
            "minLength": "min length",
            "maxLength": "max length",
            "pattern": "pattern",
            "format": "format",
        }
        return [f"{word} {self.schema[key]}" for key, word in words.items() if key in self.schema]

    def coerce(self, text: str) -> Any:
        """Typed text (KEY=VALUE, a prompt) as this field's type; ValueError says why not."""
        kind = self.type
        shown = "the value (hidden)" if self.secret else repr(text)
        try:
            if kind == "integer":
                return int(text)
            if kind == "number":
                number = float(text)
                if not math.isfinite(number):  # not a JSON number: nothing could send it
                    raise ValueError
                return int(number) if number.is_integer() and "." not in text else number
        except ValueError:
            raise ValueError(f"{self.name}: {shown} is not a {kind}") from None
        if kind == "boolean":
            word = text.strip().lower()
            if word in TRUE_WORDS or word in FALSE_WORDS:
                return word in TRUE_WORDS
            raise ValueError(f"{self.name}: {shown} is not true or false")
        return text


@dataclass(frozen=True, slots=True)
class InputRequest:
    """One thing a task asks for, under its key."""

    key: str
    method: str
    params: JsonObject

    @property
    def message(self) -> str:
        """The elicitation's message, or an empty string."""
        message = self.params.get("message")
        return message if isinstance(message, str) else ""

    @property
    def is_url(self) -> bool:
        """An elicitation in URL mode: a URL to visit, not a form to fill."""
        return self.method == ELICITATION and self.params.get("mode") == "url"

    @property
    def url(self) -> str:
        url = self.params.get("url")
        return url if isinstance(url, str) else ""

    @property
    def url_host(self) -> str:
        """What a person must check before visiting the URL."""
        try:
            return urlsplit(self.url).hostname or ""
        except ValueError:
            return ""

    @property
    def schema(self) -> JsonObject:
        """The form's `requestedSchema` (an empty object schema when none was sent)."""
        schema = self.params.get("requestedSchema")
        return schema if isinstance(schema, dict) else {"type": "object", "properties": {}}

    @property
    def fields(self) -> list[FormField]:
        properties = self.schema.get("properties")
        required = self.schema.get("required")
        needed = required if isinstance(required, list) else []
        return [
            FormField(name, schema if isinstance(schema, dict) else {}, name in needed)
            for name, schema in (properties.items() if isinstance(properties, dict) else ())
        ]

    def secrets_in(self, response: object) -> dict[str, object]:
        """The values of this form's secret fields that `response` (an answer) holds."""
        content = response.get("content") if isinstance(response, dict) else None
        if not isinstance(content, dict):
            return {}
        return {f.name: content[f.name] for f in self.fields if f.secret and f.name in content}


def read_input_requests(task: Task) -> list[InputRequest]:
    """The requests a task carries (none in 2025-11-25: there they come as the server's own
    requests)."""
    requests = task.extra.get("inputRequests")
    if requests is None:
        return []
    if not isinstance(requests, dict):
        raise ProtocolViolation("the server's inputRequests is not an object")
    read: list[InputRequest] = []
    for key, request in requests.items():
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise ProtocolViolation(f"the server's inputRequests[{key!r}] is not a request")
        params = request.get("params")
        read.append(
            InputRequest(key, request["method"], params if isinstance(params, dict) else {})
        )
    return read


def elicitation_response(action: str, content: JsonObject | None = None) -> JsonObject:
    """An elicitation result (`content`: an accepted form's)."""
    return {"action": action} if content is None else {"action": action, "content": content}


def task_message(task: Task) -> str:
    """What a table shows of a task: its `statusMessage`, else what it asks."""
    if task.statusMessage or task.status != "input_required":
        return task.statusMessage or ""
    try:
        asked = read_input_requests(task)
    except ProtocolViolation:
        return ""
    return next((f"asks: {request.message}" for request in asked if request.message), "")
