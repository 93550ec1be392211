"""Which protocol era answers a message: decided here, once, for every transport.

The Router owns the dispatcher of each era the server speaks (--protocol-eras; None for
the other). A transport keeps one handler of its own per era served and asks for the era
of each message it reads; it never looks at a message's era itself. The rules:

- a server of one era answers every message in that era;
- a dual-era server answers in 2026-07-28 a message whose `params._meta` carries the
  modern protocol version or that names a method only 2026-07-28 has, and in 2025-11-25
  anything else (so `initialize` opens a legacy session);
- a request without a message (HTTP GET or DELETE, which only sessions have) belongs to
  the legacy era when it is served, else to the modern one, which refuses it.
"""

from __future__ import annotations

from mcptask.reference_server.config import ProtocolEras, ServerConfig
from mcptask.reference_server.eras.legacy import LegacyDispatcher
from mcptask.reference_server.eras.modern import ModernDispatcher
from mcptask.reference_server.eras.modern_wire import (
    META_PROTOCOL_VERSION,
    MODERN_ONLY_METHODS,
    client_capabilities,
    declares_tasks,
)
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.wire import MessageKind, classify


def is_modern_message(message: object) -> bool:
    """True for a message the modern era serves: it carries
    `params._meta["io.modelcontextprotocol/protocolVersion"]`, or names a modern-only method."""
    if not isinstance(message, dict):
        return False
    if message.get("method") in MODERN_ONLY_METHODS:
        return True
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta


class Router:
    """The dispatchers of the eras served, and the one decision of a message's era."""

    def __init__(self, config: ServerConfig, store: TaskStore) -> None:
        self.config = config
        eras = config.protocol_eras
        self.legacy = LegacyDispatcher(config, store) if eras.legacy else None
        self.modern = ModernDispatcher(config, store) if eras.modern else None
        # The eras served, legacy first.
        served = ((ProtocolEras.LEGACY, eras.legacy), (ProtocolEras.MODERN, eras.modern))
        self.eras = tuple(era for era, on in served if on)
        # The era of every message when only one is served; None on a dual-era server,
        # where each client's first message chooses.
        self.sole_era = self.eras[0] if len(self.eras) == 1 else None

    def era_of(self, message: object) -> ProtocolEras:
        if self.sole_era is not None:
            return self.sole_era
        return ProtocolEras.MODERN if is_modern_message(message) else ProtocolEras.LEGACY

    def era_without_message(self) -> ProtocolEras:
        """The era of a request that carries no message (HTTP GET, DELETE)."""
        return self.eras[0]

    def may_block(self, message: object, era: ProtocolEras) -> bool:
        """True when answering may take long (2025-11-25 tasks/result, a tool call run
        inline, not as a task): a transport without a thread per request answers it from a
        thread of its own."""
        if classify(message) is not MessageKind.REQUEST:
            return False
        assert isinstance(message, dict)
        method, params = message["method"], message.get("params")
        if era is ProtocolEras.LEGACY and method == "tasks/result":
            return True
        if method != "tools/call":
            return False
        if era is ProtocolEras.LEGACY:
            as_task = isinstance(params, dict) and params.get("task") is not None
        else:
            as_task = declares_tasks(client_capabilities(params))
        return not (as_task and self.config.tasks_enabled)
