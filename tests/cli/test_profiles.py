"""Profiles: one TOML file, read and written safely; resolution through a profile."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from mcptask.cli.app import run
from mcptask.cli.options import Common
from mcptask.cli.settings import resolve
from mcptask.client.session import McpClient
from mcptask.errors import UsageError
from mcptask.store import profiles
from mcptask.store.profiles import ConfigSource, Profile, Reference

URL = "http://127.0.0.1:9/mcp"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "config"
    monkeypatch.setenv("MCPTASK_CONFIG_DIR", str(directory))
    for name in ("MCPTASK_URL", "MCPTASK_SERVER", "MCPTASK_PROFILE", "MCPTASK_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return directory / "profiles.toml"


def test_a_profile_round_trips_with_references_and_mode_0600(config: Path) -> None:
    profile = Profile(
        name="prod",
        url="https://mcp.example.com/mcp",
        headers={"X-Tenant": "acme", "X-Api-Key": Reference("env", "PROD_KEY")},
        token=Reference("file", "~/.prod-token"),
        protocol="2025-11-25",
        timeout=60.0,
        keep_session=True,
        session_id="abc",
        source=ConfigSource("/home/me/project/.mcp.json", "prod-api"),
    )
    profiles.save_profile(config, profile, make_default=True)
    book = profiles.load(config)
    assert book.profiles == {"prod": profile}
    assert book.default == "prod"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(config.parent.stat().st_mode) == 0o700
    # References are written as references: the file names where a secret is, not what it is.
    assert '[profiles.prod.headers.X-Api-Key]\nenv = "PROD_KEY"' in config.read_text()


def test_resolution_through_a_profile(config: Path) -> None:
    profiles.save_profile(
        config,
        Profile(
            name="p",
            url=URL,
            headers={"X-Api-Key": Reference("env", "KEY"), "X-Tenant": "acme"},
            token=Reference("env", "TOKEN"),
            timeout=12.0,
        ),
        make_default=True,
    )
    book = profiles.load(config)
    env = {"KEY": "k3y", "TOKEN": "t0k"}
    chosen = resolve(Common(profile="p"), book=book, environ=env)
    assert chosen.profile == "p"
    assert chosen.settings.url == URL
    assert chosen.settings.timeout == 12.0
    assert chosen.settings.headers == {
        "X-Api-Key": "k3y",
        "X-Tenant": "acme",
        "Authorization": "Bearer t0k",
    }
    # The default profile applies when nothing else names a server ...
    assert resolve(Common(), book=book, environ=env).profile == "p"
    # ... but not when the line or the environment does.
    assert resolve(Common(url="http://h/mcp"), book=book, environ=env).profile is None
    assert resolve(Common(), book=book, environ={"MCPTASK_URL": URL}).profile is None
    # The line wins field by field.
    line = resolve(
        Common(profile="p", timeout=3.0, header=["X-Tenant: other"]), book=book, environ=env
    )
    assert line.settings.timeout == 3.0
    assert line.settings.headers["X-Tenant"] == "other"
    with pytest.raises(UsageError, match="header 'X-Api-Key': the environment variable KEY"):
        resolve(Common(profile="p"), book=book, environ={"TOKEN": "t"})


def test_credentials_are_saved_only_when_asked(config: Path) -> None:
    chosen = resolve(
        Common(url=URL, header=["Authorization: Bearer s3cret", "X-Tenant: acme"]),
        book=profiles.load(config),
        environ={},
    )
    with pytest.raises(UsageError, match="-H Authorization looks like a credential") as caught:
        chosen.to_profile("p", save_secrets=False)
    assert "s3cret" not in caught.value.message
    saved = chosen.to_profile("p", save_secrets=True)
    assert saved.headers["Authorization"] == "Bearer s3cret"
    referenced = resolve(
        Common(url=URL, token_env="PROD"), book=profiles.load(config), environ={"PROD": "x"}
    )
    assert referenced.to_profile("p", save_secrets=False).token == Reference("env", "PROD")


def test_a_relative_token_file_is_saved_as_an_absolute_path(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tok").write_text("t\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    chosen = resolve(
        Common(url=URL, token_file=Path("tok")), book=profiles.load(config), environ={}
    )
    # The profile is used from other directories: a relative path would read another file.
    assert chosen.to_profile("p", save_secrets=False).token == Reference(
        "file", str(tmp_path / "tok")
    )


BROKEN = """default = "prod"

[profiles.prod]
url = "http://127.0.0.1:9/mcp
"""


def test_a_broken_file_does_not_stop_a_command_that_names_its_server(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.parent.mkdir(parents=True)
    config.write_text(BROKEN, encoding="utf-8")
    assert run(["list", "--url", URL, "--timeout", "2", "--retries", "0"]) == 3  # the server
    _, err = capsys.readouterr()
    assert str(config) not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["profiles"],
        ["profiles", "--delete", "prod"],
        ["profiles", "--default", "prod"],
        ["connect", URL, "--save", "other"],
    ],
)
def test_a_broken_file_is_named_with_its_line_and_never_overwritten(
    argv: list[str], config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.parent.mkdir(parents=True)
    config.write_text(BROKEN, encoding="utf-8")
    before = (config.read_bytes(), config.stat().st_mtime_ns)
    assert run(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert str(config) in err
    assert "line 4" in err
    assert len(err.strip().splitlines()) == 1
    assert (config.read_bytes(), config.stat().st_mtime_ns) == before


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[profiles.p]\nurl = "u"\nserver = "s"\n', "line 1: profile 'p': needs exactly one of"),
        ('\n\n[profiles.p]\nurl = "u"\ntimeout = -1\n', "line 3: profile 'p': timeout must be"),
        ('[profiles.p]\nurl = "u"\nheaders = { A = 1 }\n', "headers.A must be a string"),
        ('[profiles.p]\nurl = "u"\ncolour = true\n', "unknown setting 'colour'"),
        ('[profiles.p]\nurl = "u"\nsource = "x"\n', "source must be { file"),
        ('[profiles.p]\nurl = "u"\nsource = { file = "f" }\n', "source must be { file"),
        ('default = "q"\n[profiles.p]\nurl = "u"\n', "line 1: default 'q' names no profile"),
    ],
)
def test_a_file_with_wrong_settings_is_a_config_error(
    config: Path, text: str, fragment: str
) -> None:
    config.parent.mkdir(parents=True)
    config.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=fragment.replace("(", r"\(")):
        profiles.load(config)


def test_the_profiles_command_lists_deletes_and_sets_the_default(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b"):
        profiles.save_profile(config, Profile(name=name, url=f"http://127.0.0.1:9/{name}"))
    assert run(["profiles", "-o", "ids"]) == 0
    assert capsys.readouterr().out.split() == ["a", "b"]
    assert run(["profiles", "--default", "b", "-o", "json"]) == 0
    assert '"default": "b"' in capsys.readouterr().out
    assert run(["profiles", "--delete", "b", "-o", "ids"]) == 0
    assert capsys.readouterr().out.split() == ["a"]
    assert profiles.load(config).default is None
    assert run(["profiles", "--delete", "zzz"]) == 2
    assert "no profile named 'zzz'" in capsys.readouterr().err


def test_the_profiles_listing_never_shows_a_saved_secret(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profiles.save_profile(
        config,
        Profile(name="p", url=URL, headers={"Authorization": "Bearer s3cret"}, token="t0ken"),
    )
    for output in ("table", "json", "jsonl", "ids"):
        assert run(["profiles", "-o", output]) == 0
        out, err = capsys.readouterr()
        assert "s3cret" not in out + err
        assert "t0ken" not in out + err


def test_an_invalid_profile_name_is_refused_before_connecting(
    config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def handshake(self: McpClient, **options: object) -> None:
        raise AssertionError("connected")

    monkeypatch.setattr(McpClient, "connect", handshake)
    assert run(["connect", URL, "--save", "../evil"]) == 2
    assert "invalid profile name" in capsys.readouterr().err
    assert run(["connect", URL, "--default"]) == 2
    assert "go with --save NAME" in capsys.readouterr().err
    assert not config.exists()


def test_concurrent_saves_lose_no_profile(config: Path) -> None:
    def save(index: int) -> None:
        profiles.save_profile(config, Profile(name=f"p{index}", url=f"http://h/{index}"))

    threads = [threading.Thread(target=save, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(profiles.load(config).profiles) == sorted(f"p{i}" for i in range(8))
    leftovers = [
        p
        for p in os.listdir(config.parent)
        if p.startswith(".profiles.toml.") and not p.endswith(".lock")
    ]
    assert leftovers == []


def test_the_profiles_listing_shows_where_client_credentials_may_go(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    issuer = "https://as.example.com"
    profiles.save_profile(config, Profile(name="bound", url=URL, client_issuer=issuer))
    profiles.save_profile(config, Profile(name="plain", url=URL))
    assert run(["profiles", "-o", "table"]) == 0
    assert f"client issuer {issuer}" in capsys.readouterr().out
    assert run(["profiles", "-o", "jsonl"]) == 0
    bound, plain = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert (bound["clientIssuer"], plain["clientIssuer"]) == (issuer, None)
