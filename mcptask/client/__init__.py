"""The MCP client: negotiation of the protocol era, the capability gate, typed task calls.

- `session`: McpClient, the session, the gate and the task calls
- `exchange`: requests with fresh ids, the one retry loop (`RetryPolicy`), round trips
- `error_codes`: JSON-RPC answers read into results or mcptask errors (every error code)
- `negotiate`: server/discover, initialize, and the fallback between them
- `eras`: LegacyEra and ModernEra, everything that differs between 2025-11-25 and 2026-07-28
- `connection`: a connected client from connection settings
"""
