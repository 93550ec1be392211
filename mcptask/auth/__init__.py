"""Sign-in with OAuth 2.1 as the MCP authorization specification describes it.

`flow.McpAuth` is the httpx auth flow: a token on every request, sign-in on 401, one step-up
on 403 insufficient_scope. `discovery` finds the authorization server, `clients` the client
identity, `grants` makes token requests, `browser` the browser step, `sign_in` the two
sign-ins (client credentials for machines, authorization code for people); tokens are kept by
`mcptask.store.tokens`. Only `config` and `flow` are imported by a command that never signs
in: `flow` imports the rest when first needed. Everything here raises mcptask errors
(AuthError and its kinds, UnreachableError for an authorization server that cannot be reached).
"""
