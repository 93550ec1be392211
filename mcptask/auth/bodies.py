"""The JSON bodies of answers from URLs that OAuth metadata chose: read as every answer is,
bounded in size (`max_answer_bytes`) and in depth (`answers.MAX_DEPTH`)."""

from __future__ import annotations

from typing import Any

import httpx

from mcptask.errors import ProtocolViolation
from mcptask.transport.answers import bound, max_answer_bytes, parse_json


def json_body(response: httpx.Response) -> Any:
    """The decoded body of a response not read yet; None when it is not JSON (or nested too
    deep to be an answer). A body over the bound raises ProtocolViolation: each caller
    turns it into its own error."""
    bound(response, max_answer_bytes())
    content = response.read()
    try:
        return parse_json(content, context="the answer")
    except ProtocolViolation:
        return None
