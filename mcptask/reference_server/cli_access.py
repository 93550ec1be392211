"""The command line of who may reach the reference server, and for how long: bearer tokens,
the OAuth demo (--oauth), idle timeouts.

Secrets on a command line are visible to every user of the machine (`ps`): each one given
as a flag can also come from a file or from the environment, which --help recommends.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from mcptask.reference_server.config import OAuthConfig, PreRegistered, ServerConfig
from mcptask.reference_server.scripting import bounded

REQUIRE_TOKEN_ENV = "MCPTASK_REFERENCE_REQUIRE_TOKEN"
OAUTH_CLIENTS_ENV = "MCPTASK_REFERENCE_OAUTH_CLIENTS"
VISIBLE = "visible to other users of this machine (ps); prefer"


SECONDS = bounded(float, 0, what="number of seconds >= 0")


def add_access_arguments(parser: argparse.ArgumentParser, http: argparse._ArgumentGroup) -> None:
    """Add the token and timeout options to the `http` group, and the OAuth group."""
    http.add_argument(
        "--require-token",
        metavar="TOKEN",
        help=f"require Authorization: Bearer TOKEN (else 401); {VISIBLE} --require-token-file "
        f"or ${REQUIRE_TOKEN_ENV}",
    )
    http.add_argument(
        "--require-token-file",
        metavar="FILE",
        help="like --require-token, the token being the first line of FILE",
    )
    http.add_argument("--forbid-token", metavar="TOKEN", help="answer 403 to this bearer token")
    http.add_argument(
        "--connection-idle-timeout",
        type=SECONDS,
        default=ServerConfig.connection_idle_seconds,
        dest="connection_idle_seconds",
        metavar="SECONDS",
        help="close a connection that sends no request for this long; 0: never "
        f"(default {ServerConfig.connection_idle_seconds:g})",
    )
    http.add_argument(
        "--session-idle-timeout",
        type=SECONDS,
        default=ServerConfig.session_idle_seconds,
        dest="session_idle_seconds",
        metavar="SECONDS",
        help="forget a 2025-11-25 session unused for this long (then 404); an open GET "
        f"stream keeps it in use; 0: never (default {ServerConfig.session_idle_seconds:g})",
    )

    group = parser.add_argument_group(
        "OAuth (HTTP only)",
        "A demo authorization server, for trying sign-in and testing clients, not for "
        "protecting anything: it registers any client and approves every authorization "
        "request at once, with no user and no consent page. It does check what a client "
        "must prove: the authorization code is single-use, short-lived and bound to its "
        "client, redirect_uri and PKCE (S256) challenge; tokens are bound to this server "
        "and to the client, whose tasks no other client sees.",
    )
    group.add_argument(
        "--oauth",
        action="store_true",
        help="protect /mcp with a built-in OAuth 2.1 authorization server on the same origin "
        "(try: mcptask login URL); scopes tasks:read, tasks:write (cancel, tools/call)",
    )
    group.add_argument(
        "--oauth-token-ttl",
        type=int,
        default=OAuthConfig.token_ttl_seconds,
        metavar="SECONDS",
        help=f"lifetime of access tokens (default {OAuthConfig.token_ttl_seconds}); refresh "
        "tokens renew them",
    )
    group.add_argument(
        "--oauth-client",
        action="append",
        default=[],
        metavar="ID:SECRET",
        help="pre-register a confidential client (client credentials, or browser sign-in); "
        f"{VISIBLE} --oauth-clients-file or ${OAUTH_CLIENTS_ENV}",
    )
    group.add_argument(
        "--oauth-clients-file",
        metavar="FILE",
        help="pre-register the confidential clients of FILE, one ID:SECRET a line (# starts "
        f"a comment); ${OAUTH_CLIENTS_ENV} may hold such entries too, separated by spaces",
    )
    group.add_argument(
        "--oauth-client-key",
        action="append",
        default=[],
        metavar="ID=PUBLIC_KEY_PEM",
        help="pre-register a client that signs in with a JWT assertion (private_key_jwt)",
    )


def _read(option: str, path: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{option}: cannot read {path}: {exc}") from None


def required_token(args: argparse.Namespace) -> str | None:
    """--require-token, its file or its variable; ValueError for bad values."""
    if args.require_token is not None and args.require_token_file is not None:
        raise ValueError("give --require-token or --require-token-file, not both")
    if args.require_token_file is not None:
        lines = _read("--require-token-file", args.require_token_file).splitlines()
        token = lines[0].strip() if lines else ""
        if not token:
            raise ValueError(f"--require-token-file: {args.require_token_file} is empty")
        return token
    if args.require_token is not None:
        return str(args.require_token)
    return os.environ.get(REQUIRE_TOKEN_ENV) or None


def _client_entries(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(where, ID:SECRET) of every pre-registered confidential client."""
    entries = [("--oauth-client", value) for value in args.oauth_client]
    if args.oauth_clients_file is not None:
        text = _read("--oauth-clients-file", args.oauth_clients_file)
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                entries.append(("--oauth-clients-file", line))
    entries += [("$" + OAUTH_CLIENTS_ENV, v) for v in os.environ.get(OAUTH_CLIENTS_ENV, "").split()]
    return entries


def oauth_config(args: argparse.Namespace) -> OAuthConfig | None:
    """The OAuth demo's settings (None without --oauth); ValueError for bad values."""
    if not args.oauth:
        if args.oauth_client or args.oauth_client_key or args.oauth_clients_file:
            raise ValueError(
                "--oauth-client, --oauth-clients-file and --oauth-client-key go with --oauth"
            )
        return None
    if args.oauth_token_ttl < 1:
        raise ValueError("--oauth-token-ttl must be at least 1 second")
    clients: list[PreRegistered] = []
    for where, value in _client_entries(args):
        client_id, separator, secret = value.partition(":")
        if not separator or not client_id or not secret:
            raise ValueError(f"{where} takes ID:SECRET")
        clients.append(PreRegistered(client_id, secret=secret))
    for value in args.oauth_client_key:
        client_id, separator, path = value.partition("=")
        if not separator or not client_id or not path:
            raise ValueError("--oauth-client-key takes ID=PUBLIC_KEY_PEM_FILE")
        pem = _read("--oauth-client-key", path)
        if "PUBLIC KEY-----" not in pem:
            raise ValueError(f"--oauth-client-key: {path} holds no PEM public key")
        clients.append(PreRegistered(client_id, public_key_pem=pem))
    return OAuthConfig(token_ttl_seconds=args.oauth_token_ttl, clients=tuple(clients))
