"""Transports carry JSON-RPC messages to a server and back (Streamable HTTP, stdio).

They turn httpx and OS errors into mcptask errors; nothing above them sees httpx.
"""

from mcptask.transport.base import NotificationHandler, Transport, WireLog

__all__ = ["NotificationHandler", "Transport", "WireLog"]
