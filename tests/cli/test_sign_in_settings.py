"""The sign-in settings: line > profile > environment, refusals before anything is sent,
what a profile saves, and login/logout on the command line (in process)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mcptask.auth.config import AuthSettings
from mcptask.cli.app import app, run
from mcptask.cli.options import Common
from mcptask.cli.settings import resolve
from mcptask.errors import UsageError
from mcptask.store.profiles import Profile, ProfileBook, Reference, load, save_profile

URL = "http://127.0.0.1:9/mcp"
NOWHERE = ProfileBook(Path("/nonexistent/profiles.toml"))


def auth(
    environ: dict[str, str] | None = None, book: ProfileBook = NOWHERE, **line: Any
) -> AuthSettings:
    settings = resolve(Common(**line), book=book, environ=environ or {}).settings.auth
    assert settings is not None
    return settings


def test_defaults_and_the_environment() -> None:
    settings = auth(url=URL)
    assert (settings.method, settings.client_id, settings.client_secret) == ("auto", None, None)
    assert settings.cache_path is not None
    assert settings.cache_path.name == "tokens.json"
    settings = auth(
        {
            "MCPTASK_AUTH": "client-credentials",
            "MCPTASK_CLIENT_ID": "robot",
            "MCPTASK_CLIENT_SECRET": "shh-secret",
            "MCPTASK_SCOPE": "a  b",
            "MCPTASK_STATE_DIR": "/var/lib/mcptask-test",
        },
        url=URL,
    )
    assert (settings.method, settings.client_id, settings.scope) == (
        "client-credentials",
        "robot",
        "a b",
    )
    assert settings.client_secret == "shh-secret"
    assert settings.cache_path == Path("/var/lib/mcptask-test/tokens.json")
    assert "shh-secret" not in repr(settings)
    assert settings.has_client_credentials


def test_the_line_wins_over_the_profile_which_wins_over_the_environment(tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text("from-profile-file\n")
    profile = Profile(
        "p",
        url=URL,
        auth="browser",
        client_id="profile-id",
        client_secret=Reference("file", str(secret_file)),
        scope="profile-scope",
    )
    book = ProfileBook(tmp_path / "profiles.toml", {"p": profile})
    environ = {"MCPTASK_CLIENT_ID": "env-id", "MCPTASK_CLIENT_SECRET": "env-secret"}
    settings = auth(environ, book, profile="p")
    assert (settings.method, settings.client_id, settings.scope) == (
        "browser",
        "profile-id",
        "profile-scope",
    )
    assert settings.client_secret == "from-profile-file"
    settings = auth(environ, book, profile="p", auth="auto", client_id="line-id", scope="s")
    assert (settings.method, settings.client_id, settings.scope) == ("auto", "line-id", "s")


def test_client_credentials_are_bound_to_the_issuer_configured_with_them() -> None:
    environ = {"MCPTASK_CLIENT_ID": "robot", "MCPTASK_CLIENT_SECRET": "shh"}
    unbound = auth(environ, url=URL)
    assert unbound.client_issuer is None
    assert not unbound.credentials_for("https://as.example.com")
    bound = auth({**environ, "MCPTASK_CLIENT_ISSUER": "https://as.example.com/"}, url=URL)
    assert bound.credentials_for("https://as.example.com")
    assert not bound.credentials_for("https://evil.example.com")
    line = auth(
        {**environ, "MCPTASK_CLIENT_ISSUER": "https://as.example.com"},
        url=URL,
        client_issuer="http://127.0.0.1:8765",
    )
    assert line.credentials_for("http://127.0.0.1:8765")
    assert not line.credentials_for("https://as.example.com")


@pytest.mark.parametrize(
    ("line", "environ", "message"),
    [
        ({"url": URL, "auth": "magic"}, {}, "--auth takes one of"),
        ({"url": URL, "auth": "client-credentials"}, {}, "needs a client id"),
        ({"url": URL}, {"MCPTASK_CLIENT_SECRET": "x"}, "without a client id"),
        (
            {"url": URL, "client_id": "c", "client_key_file": Path("/no/key.pem")},
            {},
            "does not exist",
        ),
        ({"server": "srv", "auth": "browser"}, {}, "--url servers only"),
        ({"server": "srv", "no_browser": True}, {}, "--url servers only"),
        ({"server": "srv", "client_issuer": "https://as"}, {}, "--url servers only"),
        ({"url": URL}, {"MCPTASK_CLIENT_ISSUER": "http://as.example.com"}, "https:// URL"),
        ({"url": URL, "client_issuer": "login.example.com"}, {}, "https:// URL"),
    ],
)
def test_refused_before_anything_is_sent(
    line: dict[str, Any], environ: dict[str, str], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        resolve(Common(**line), book=NOWHERE, environ=environ)


def test_a_stdio_server_has_no_sign_in() -> None:
    assert resolve(Common(server="srv"), book=NOWHERE, environ={}).settings.auth is None


def test_a_profile_saves_the_method_and_references_never_the_secret(tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text("file-secret")
    resolved = resolve(
        Common(
            url=URL,
            auth="client-credentials",
            client_id="robot",
            client_secret_file=secret_file,
            scope="tasks:read",
        ),
        book=NOWHERE,
        environ={"MCPTASK_CLIENT_SECRET": "ambient-secret"},
    )
    profile = resolved.to_profile("ci", save_secrets=False)
    path = tmp_path / "profiles.toml"
    save_profile(path, profile)
    text = path.read_text()
    assert "file-secret" not in text
    assert "ambient-secret" not in text
    again = load(path).get("ci")
    assert again.auth == "client-credentials"
    assert again.client_id == "robot"
    assert again.client_secret == Reference("file", str(secret_file))
    assert again.scope == "tasks:read"


def test_login_and_logout_refuse_what_they_cannot_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPTASK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("MCPTASK_CONFIG_DIR", str(tmp_path / "config"))
    assert run(["login", "mcptask reference-server --stdio"]) == 2
    assert run(["login", URL, "--auth", "none"]) == 2
    assert run(["logout", URL, "--all"]) == 2
    assert run(["logout", "--all", "-o", "json"]) == 0
    result = CliRunner().invoke(app, ["login", "--help"])
    assert "Sign in to a server" in result.output
    assert "--no-browser" in result.output


def test_logout_needs_no_credential_and_refuses_what_is_not_a_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MCPTASK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("MCPTASK_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("NOPE", raising=False)
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "profiles.toml").write_text(
        f'[profiles.x]\nurl = "{URL}"\ntoken = {{ env = "NOPE" }}\n', encoding="utf-8"
    )
    # The profile's token cannot be read (its variable is unset): logging out still works.
    assert run(["logout", "-P", "x", "-o", "json"]) == 0
    assert '"forgotten": []' in capsys.readouterr().out
    assert run(["logout", "not-a-url"]) == 2
    assert "invalid server URL 'not-a-url'" in capsys.readouterr().err
    assert run(["logout", "HTTPS://Server.Test/mcp", "-o", "json"]) == 0  # schemes know no case
    assert '"forgotten": []' in capsys.readouterr().out
