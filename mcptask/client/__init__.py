"""The MCP client: negotiation of the protocol era, the capability gate, typed task calls
(`session.McpClient`; docs/architecture.md maps the modules)."""
