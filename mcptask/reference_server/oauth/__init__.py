"""The reference server's optional OAuth 2.1 authorization server (`--oauth`).

A demo and a test fixture, like the rest of the reference server: the same origin serves
the MCP endpoint as a protected resource and the authorization server that issues its
tokens, so that `mcptask login` can be tried with nothing else installed.

    config    OAuthConfig: token lifetime, pre-registered clients (secrets, public keys)
    server    AuthorizationServer: request in, response out (no sockets): the metadata
              documents (RFC 9728, RFC 8414), dynamic registration (RFC 7591), an
              authorization endpoint that approves at once and redirects back, the token
              endpoint (authorization code with PKCE S256, refresh with rotation, client
              credentials; client_secret_basic/_post, none, private_key_jwt), and the
              resource side: the bearer check of every MCP request (401, 403 + scope)
    clients   client registrations and client authentication at the token endpoint
"""
