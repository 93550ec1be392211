"""The `--oauth` options of `mcptask reference-server`."""

from __future__ import annotations

import argparse
from pathlib import Path

from mcptask.reference_server.oauth.config import OAuthConfig, PreRegistered


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the OAuth group to the reference server's parser."""
    group = parser.add_argument_group("OAuth (HTTP only)")
    group.add_argument(
        "--oauth",
        action="store_true",
        help="protect /mcp with a built-in OAuth 2.1 authorization server on the same origin "
        "(try: mcptask login URL); scopes tasks:read, tasks:write (cancel, tools/call)",
    )
    group.add_argument(
        "--oauth-token-ttl",
        type=int,
        default=3600,
        metavar="SECONDS",
        help="lifetime of access tokens (default 3600); refresh tokens renew them",
    )
    group.add_argument(
        "--oauth-client",
        action="append",
        default=[],
        metavar="ID:SECRET",
        help="pre-register a confidential client (client credentials, or browser sign-in)",
    )
    group.add_argument(
        "--oauth-client-key",
        action="append",
        default=[],
        metavar="ID=PUBLIC_KEY_PEM",
        help="pre-register a client that signs in with a JWT assertion (private_key_jwt)",
    )


def parse(args: argparse.Namespace) -> OAuthConfig | None:
    """The OAuth settings, or None without --oauth; ValueError for bad values."""
    if not args.oauth:
        if args.oauth_client or args.oauth_client_key:
            raise ValueError("--oauth-client and --oauth-client-key go with --oauth")
        return None
    if args.oauth_token_ttl < 1:
        raise ValueError("--oauth-token-ttl must be at least 1 second")
    clients: list[PreRegistered] = []
    for value in args.oauth_client:
        client_id, separator, secret = value.partition(":")
        if not separator or not client_id or not secret:
            raise ValueError("--oauth-client takes ID:SECRET")
        clients.append(PreRegistered(client_id, secret=secret))
    for value in args.oauth_client_key:
        client_id, separator, path = value.partition("=")
        if not separator or not client_id or not path:
            raise ValueError("--oauth-client-key takes ID=PUBLIC_KEY_PEM_FILE")
        try:
            pem = Path(path).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"--oauth-client-key: cannot read {path}: {exc}") from None
        if "PUBLIC KEY-----" not in pem:
            raise ValueError(f"--oauth-client-key: {path} holds no PEM public key")
        clients.append(PreRegistered(client_id, public_key_pem=pem))
    return OAuthConfig(token_ttl_seconds=args.oauth_token_ttl, clients=tuple(clients))
