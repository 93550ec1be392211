"""`mcptask login`: sign in to a server and keep the token for later commands."""

from __future__ import annotations

from dataclasses import replace

from mcptask.cli.invocation import Invocation
from mcptask.cli.options import Common, ServerUrlArgument, with_server_options
from mcptask.errors import UsageError


@with_server_options
def login(
    target: ServerUrlArgument = None,
    *,
    common: Common,
) -> None:
    """Sign in to a server (OAuth: the browser, or --auth client-credentials) and cache the
    token; later commands use it, and refresh it, without asking again."""
    from mcptask.auth.flow import McpAuth
    from mcptask.client.connection import sign_in
    from mcptask.output.views.connection import LoginView, SignIn

    if target is not None:
        if common.url or common.server or common.profile:
            raise UsageError("give the server either as TARGET or with --url/--profile, not both")
        if not target.startswith(("http://", "https://")):
            raise UsageError(
                "login signs in to Streamable HTTP servers: give a URL (a --server process "
                "takes its credentials from its environment, --env)"
            )
        common = replace(common, url=target)
    invocation = Invocation(common, force_sign_in=True)
    settings = invocation.settings
    if settings.url is None or settings.auth is None:
        raise UsageError(
            "login signs in to Streamable HTTP servers (--url, or a profile with a url)"
        )
    if settings.auth.method == "none":
        raise UsageError("--auth none: nothing to sign in with")
    view = LoginView(invocation.screen)
    auth = sign_in(settings, log=invocation.log, notice=invocation.screen.warn)
    assert isinstance(auth, McpAuth)
    with invocation.client(auth=auth) as client:
        server = client.server
        if auth.signed_in is None and not auth.sign_in_unprompted():
            invocation.screen.warn(
                f"{settings.url} did not ask for sign-in and publishes no OAuth metadata: "
                "nothing to do"
            )
    view.show(SignIn(server.name, settings.url, auth.signed_in, settings.auth.cache_path))
