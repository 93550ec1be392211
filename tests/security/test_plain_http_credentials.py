"""Attack on the path to a server: a static credential (MCPTASK_TOKEN, --token-file,
--token-env, a profile's token, a credential-looking -H or profile header) bound for a plain
http:// URL on another machine, which anyone on the path can read. Against the real `mcptask`
process, with a proxy of the test's own playing mcp.example.com: mcptask refuses in one line
(exit 4), and no request leaves."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcptask.store.profiles import Profile, Reference, save_profile
from tests.cli_process import Result, run_mcptask
from tests.security.hostile_oauth import HostileServer, Seen, json_answer

REMOTE = "http://mcp.example.com/mcp"
SECRET = "s3cret-sentinel-over-http"


def _not_found(seen: Seen) -> tuple[int, dict[str, str], bytes]:
    return json_answer(404, {"error": "not_found"})


def _run(tmp_path: Path, *args: str, **env: str) -> tuple[list[Seen], Result]:
    """Run mcptask with every http:// request going through a proxy that records it."""
    with HostileServer(_not_found) as proxy:
        result = run_mcptask(
            *args,
            env={
                "MCPTASK_STATE_DIR": str(tmp_path / "state"),
                "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
                "HTTP_PROXY": proxy.origin,
                "http_proxy": proxy.origin,
                "NO_PROXY": "",
                "no_proxy": "",
                **env,
            },
        )
        return proxy.seen, result


def _refused(received: list[Seen], result: Result) -> None:
    assert received == []
    result.assert_one_line_error(
        4, "refusing to send credentials over plain http:// to mcp.example.com", "use https://"
    )
    assert SECRET not in result.stderr


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--url", REMOTE], {"MCPTASK_TOKEN": SECRET}),
        (["--url", REMOTE, "--token-env", "MY_TOKEN"], {"MY_TOKEN": SECRET}),
        (["--url", REMOTE, "-H", f"X-Api-Key: {SECRET}"], {}),
        (["--url", REMOTE, "-H", f"Authorization: Basic {SECRET}"], {}),
        (["--url", REMOTE, "--auth", "none", "-H", f"Cookie: sid={SECRET}"], {}),
    ],
)
def test_no_static_credential_goes_over_plain_http(
    tmp_path: Path, args: list[str], env: dict[str, str]
) -> None:
    _refused(*_run(tmp_path, "list", *args, **env))


def test_no_token_file_goes_over_plain_http(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(SECRET + "\n", encoding="utf-8")
    _refused(*_run(tmp_path, "list", "--url", REMOTE, "--token-file", str(token_file)))


@pytest.mark.parametrize(
    "profile",
    [
        Profile(name="p", url=REMOTE, token=Reference("env", "MY_TOKEN")),
        Profile(name="p", url=REMOTE, headers={"X-Api-Key": Reference("env", "MY_TOKEN")}),
    ],
)
def test_no_profile_credential_goes_over_plain_http(tmp_path: Path, profile: Profile) -> None:
    save_profile(tmp_path / "config" / "profiles.toml", profile)
    _refused(*_run(tmp_path, "list", "--profile", "p", MY_TOKEN=SECRET))


def test_without_credentials_the_request_goes(tmp_path: Path) -> None:
    # The control: the proxy does play mcp.example.com, and a plain request is not refused.
    received, result = _run(tmp_path, "list", "--url", REMOTE, "-H", "X-Tenant: t1")
    assert received, result.stderr
    assert all(seen.path == REMOTE for seen in received)
    assert "refusing" not in result.stderr
