"""The MCP wire vocabulary, no behaviour: read tolerantly (unknown fields kept), written
exactly. Import from the submodules."""
