"""What the commands do, as plain functions over an `McpClient` (no printing here)."""
