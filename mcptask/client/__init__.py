"""The MCP client: negotiation of the protocol era, the capability gate, typed task calls.

- `session`: McpClient, the gate and the task calls
- `negotiate`: server/discover, initialize, and the fallback between them
- `eras`: LegacyEra and ModernEra, everything that differs between 2025-11-25 and 2026-07-28
- `answers`: JSON-RPC answers read into results or mcptask errors
- `connect`: a connected client from connection settings
"""
