"""Sign-in with OAuth 2.1 as the MCP authorization specification describes it.

    config     how one invocation signs in (method, client identity), and the MCP server's
               URL as an RFC 8707 resource; no heavy imports
    discovery  the WWW-Authenticate challenge, Protected Resource Metadata and Authorization
               Server metadata (MCP-specific, written by hand: the URL orders and the
               resource and issuer checks)
    clients    which client identity to use: pre-registered, metadata document, or registered
    grants     token requests (client credentials, authorization code, refresh), with authlib
    browser    the browser step: PKCE, the authorization URL, a loopback redirect
    sign_in    the two sign-ins: client credentials (machines), authorization code (people)
    flow       `McpAuth`, the httpx auth flow: a token on every request, sign-in on 401,
               one step-up on 403 insufficient_scope

Tokens are kept by `mcptask.store.tokens`. Only `config` and `flow` are
imported by a command that never signs in: `flow` imports the rest when first needed.
Everything here raises mcptask errors (AuthError and its kinds, UnreachableError for an
authorization server that cannot be reached).
"""
