"""The reference server's optional OAuth 2.1 authorization server (`--oauth`): a demo and a
test fixture on the MCP endpoint's own origin, so that `mcptask login` can be tried with
nothing else installed. server: requests in, responses out (metadata, registration,
authorize, token, the bearer check); clients: registrations and client authentication."""
