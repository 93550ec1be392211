"""The MCP wire vocabulary, with no behaviour of its own: what goes over the wire and how it
is read (tolerantly: unknown fields kept) and written (exactly: only what the specification
defines). Callers import from the submodules:

- `jsonrpc`: JSON-RPC 2.0 envelopes, `JsonObject`, the error codes that change what mcptask does
- `handshake`: versions and eras, capabilities (`TaskSupport`), `ServerInfo`, the modern `_meta`
- `tasks`: task statuses, `Task`, a page of `tasks/list`, the answer to `tasks/cancel`
- `tools`: `tools/list` entries, a task-augmented `tools/call`'s answer, a finished task's outcome
"""
