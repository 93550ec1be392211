"""The MCP wire vocabulary, with no behaviour of its own: read tolerantly (unknown fields
kept), written exactly. Callers import from the submodules: `jsonrpc`, `handshake`, `tasks`,
`tools`.
"""
