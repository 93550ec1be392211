"""The official MCP conformance runner against mcptask's embedded reference server."""
