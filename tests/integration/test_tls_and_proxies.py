"""HTTPS and proxies, end to end: the real mcptask against the reference server behind a TLS
terminator with a certificate made here (trustme), and behind a CONNECT proxy."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trustme

from tests.cli_process import run_mcptask
from tests.conftest import StartServer
from tests.network import ConnectProxy, TlsTerminator


@pytest.fixture
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def https_url(reference_server: StartServer, ca: trustme.CA) -> Iterator[str]:
    plain = reference_server("--seed", "working=2")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    port = urlsplit(plain).port
    assert port is not None
    with TlsTerminator(port, context) as tls:
        yield f"https://127.0.0.1:{tls.port}/mcp"


@pytest.fixture
def ca_file(ca: trustme.CA, tmp_path: Path) -> Path:
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return path


def test_an_untrusted_certificate_is_refused_naming_tls(https_url: str) -> None:
    result = run_mcptask("list", "--url", https_url, "-o", "ids")
    result.assert_one_line_error(3, "TLS: cannot verify the certificate", "--ca-cert")


def test_ca_cert_trusts_it(https_url: str, ca_file: Path) -> None:
    result = run_mcptask("list", "--url", https_url, "--ca-cert", str(ca_file), "-o", "ids")
    assert result.code == 0, result.stderr
    assert result.stdout.split() == ["working-002", "working-001"]
    assert result.stderr == ""


def test_ssl_cert_file_trusts_it(https_url: str, ca_file: Path) -> None:
    result = run_mcptask(
        "list", "--url", https_url, "-o", "ids", env={"SSL_CERT_FILE": str(ca_file)}
    )
    assert result.code == 0, result.stderr
    assert result.stdout.split() == ["working-002", "working-001"]


def test_insecure_accepts_it_with_a_warning(https_url: str) -> None:
    result = run_mcptask("list", "--url", https_url, "--insecure", "-o", "ids")
    assert result.code == 0, result.stderr
    assert result.stdout.split() == ["working-002", "working-001"]
    assert "--insecure: the server's TLS certificate is not verified" in result.stderr


def test_a_bad_ca_file_is_a_usage_error(https_url: str, tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("not a certificate\n", encoding="utf-8")
    result = run_mcptask("list", "--url", https_url, "--ca-cert", str(bogus))
    result.assert_one_line_error(2, "cannot read --ca-cert")


def test_https_proxy_is_honoured(https_url: str, ca_file: Path) -> None:
    target = urlsplit(https_url).netloc
    with ConnectProxy() as proxy:
        env = {"HTTPS_PROXY": f"http://127.0.0.1:{proxy.port}", "NO_PROXY": ""}
        result = run_mcptask(
            "list", "--url", https_url, "--ca-cert", str(ca_file), "-o", "ids", env=env
        )
        assert result.code == 0, result.stderr
        assert result.stdout.split() == ["working-002", "working-001"]
        assert target in proxy.targets
        tunnelled = len(proxy.targets)
        env["NO_PROXY"] = "127.0.0.1"
        bypass = run_mcptask(
            "list", "--url", https_url, "--ca-cert", str(ca_file), "-o", "ids", env=env
        )
        assert bypass.code == 0, bypass.stderr
        assert len(proxy.targets) == tunnelled  # NO_PROXY: straight to the server


def test_a_dead_proxy_is_unreachable(https_url: str, ca_file: Path) -> None:
    with ConnectProxy() as proxy:
        port = proxy.port
    result = run_mcptask(
        "list",
        "--url",
        https_url,
        "--ca-cert",
        str(ca_file),
        env={"HTTPS_PROXY": f"http://127.0.0.1:{port}"},
    )
    result.assert_one_line_error(3)


def test_credentials_to_a_remote_host_over_plain_http_are_refused() -> None:
    # Every request would go through the proxy: the refusal comes before any connection.
    with ConnectProxy() as proxy:
        origin = f"http://127.0.0.1:{proxy.port}"
        result = run_mcptask(
            "list",
            "--url",
            "http://192.0.2.1:9/mcp",
            env={
                "MCPTASK_TOKEN": "s3cret",
                "HTTP_PROXY": origin,
                "http_proxy": origin,
                "NO_PROXY": "",
                "no_proxy": "",
            },
        )
    result.assert_one_line_error(
        4, "refusing to send credentials over plain http:// to 192.0.2.1", "use https://"
    )
    assert "s3cret" not in result.stderr
    assert proxy.accepted == 0


def test_an_unreadable_ssl_cert_file_is_a_one_line_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-ca.pem"
    result = run_mcptask(
        "list", "--url", "https://127.0.0.1:9/mcp", env={"SSL_CERT_FILE": str(missing)}
    )
    assert result.code == 2, result.stderr
    assert "cannot load the CA certificates that SSL_CERT_FILE or SSL_CERT_DIR names" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
