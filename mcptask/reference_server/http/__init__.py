"""Streamable HTTP for both protocol eras: server (checks every request gets, then the era's
endpoint: the modern one there, legacy), framing (bytes on the wire, faults), policy (Origin,
tokens, headers) and sessions. It knows nothing about task semantics."""
