"""Streamable HTTP transport: POST/GET/DELETE on one endpoint, for both protocol eras.

- server: the HTTP server and request handler; the checks every request gets, then the
  router's choice of era endpoint (the only era decision, made in eras/router.py)
- framing: bytes on the wire (bodies, heads, JSON or SSE answers, chunked streams, faults)
- legacy: 2025-11-25 sessions, resumable POST streams, the GET stream, DELETE
- modern: 2026-07-28 stateless POSTs, header checks, subscriptions/listen streams
- policy (Origin, bearer token, Accept, 2026-07-28 headers), sessions

It turns HTTP requests into dispatcher calls and replies into HTTP answers; it knows nothing
about task semantics.
"""

from mcptask.reference_server.http.server import ENDPOINT, http_server, serve_http

__all__ = ["ENDPOINT", "http_server", "serve_http"]
