"""Sign-in with OAuth 2.1 as the MCP authorization specification describes it.

`flow.McpAuth` is the httpx auth flow; `discovery` finds the authorization server, `grants`
chooses the client identity and makes token requests (the client credentials grant for
machines), `browser` signs people in (authorization code + PKCE); tokens are kept by
`mcptask.store.tokens`. A command that never signs in imports only `config` and `flow`.
"""
