"""The host's package-index settings: ``pip config list`` parsing and the container environment."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from reprobot.settings import Settings
from reprobot.validation.env.pipconf import (
    IndexSettings,
    host_index_settings,
    parse_pip_config_list,
)

CA_PATH = "/run/reprobot/ca.pem"

# What ``pip config list`` printed on a developer machine: environment variables first
# (":env:" sorts first), then the [global] section of the configuration files.
HOST_OUTPUT = """\
:env:.cert='/etc/ssl/certs/ca-certificates.crt'
:env:.default-timeout='180'
:env:.disable-pip-version-check='1'
:env:.find-links='/opt/wheels'
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.find-links='/opt/wheels'
"""


def _settings(**overrides: object) -> Settings:
    values: dict[str, object] = {
        "pip_index_url": "",
        "pip_extra_index_urls": [],
        "pip_ca_bundle": None,
        **overrides,
    }
    return Settings(**values)  # type: ignore[arg-type]


# --- parse_pip_config_list ------------------------------------------------------------------


def test_parse_host_output() -> None:
    assert parse_pip_config_list(HOST_OUTPUT) == {
        "cert": "/etc/ssl/certs/ca-certificates.crt",
        "default-timeout": "180",
        "disable-pip-version-check": "1",
        "find-links": "/opt/wheels",
        "extra-index-url": "file:///opt/pypi/simple file:///opt/pypi-more/simple",
    }


def test_parse_strips_both_kinds_of_quotes() -> None:
    # pip prints repr(value): a value holding a single quote comes out in double quotes.
    text = "global.index-url=\"https://h.example/it's/simple\"\nglobal.timeout='60'\n"
    assert parse_pip_config_list(text) == {
        "index-url": "https://h.example/it's/simple",
        "timeout": "60",
    }


def test_parse_keeps_equals_signs_inside_values() -> None:
    text = "global.index-url='https://h.example/simple?token=abc&x=1'\n"
    assert parse_pip_config_list(text) == {"index-url": "https://h.example/simple?token=abc&x=1"}


def test_parse_ignores_lines_without_a_value() -> None:
    text = "\nWARNING: something odd\nglobal.timeout='5'\n\n"
    assert parse_pip_config_list(text) == {"timeout": "5"}


def test_parse_section_names_are_dropped() -> None:
    text = "install.trusted-host='a.example b.example'\n"
    assert parse_pip_config_list(text) == {"trusted-host": "a.example b.example"}


def test_parse_environment_variable_beats_config_file() -> None:
    # pip itself uses PIP_INDEX_URL over the [global] index-url of any configuration file;
    # ``pip config list`` prints the ":env:" line first because it sorts the keys.
    text = (
        ":env:.index-url='https://env.example/simple'\n"
        "global.index-url='https://file.example/simple'\n"
    )
    assert parse_pip_config_list(text)["index-url"] == "https://env.example/simple"


# --- IndexSettings.environment --------------------------------------------------------------


def test_environment_of_empty_settings() -> None:
    assert IndexSettings().environment(CA_PATH) == {"PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def test_environment_of_full_settings() -> None:
    index = IndexSettings(
        index_url="https://pypi.example/simple",
        extra_index_urls=("https://a.example/simple", "https://b.example/simple"),
        trusted_hosts=("a.example", "b.example"),
        ca_bundle=b"-----BEGIN CERTIFICATE-----\n",
        timeout="42",
    )
    assert index.environment("/somewhere/ca.pem") == {
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_INDEX_URL": "https://pypi.example/simple",
        "PIP_EXTRA_INDEX_URL": "https://a.example/simple https://b.example/simple",
        "PIP_TRUSTED_HOST": "a.example b.example",
        "PIP_DEFAULT_TIMEOUT": "42",
        "PIP_CERT": "/somewhere/ca.pem",
        "SSL_CERT_FILE": "/somewhere/ca.pem",
        "REQUESTS_CA_BUNDLE": "/somewhere/ca.pem",
    }


def test_empty_ca_bundle_sets_no_cert_variables() -> None:
    env = IndexSettings(ca_bundle=b"").environment(CA_PATH)
    assert not {"PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"} & set(env)


def test_repr_hides_the_ca_bundle() -> None:
    assert "SECRETISH" not in repr(IndexSettings(ca_bundle=b"SECRETISH"))


# --- host_index_settings through the real pip ------------------------------------------------


@pytest.fixture
def pip_conf(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[str], Path]:
    """Point pip at one configuration file of the test's own; no PIP_* variables of the host."""
    for name in list(os.environ):
        if name.startswith("PIP_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))

    def write(text: str) -> Path:
        path = tmp_path / "pip.conf"
        path.write_text(text)
        monkeypatch.setenv("PIP_CONFIG_FILE", str(path))
        return path

    return write


def test_host_settings_from_pip_configuration(
    pip_conf: Callable[[str], Path], tmp_path: Path
) -> None:
    ca = tmp_path / "corp-ca.pem"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\ncorp\n-----END CERTIFICATE-----\n")
    pip_conf(
        "[global]\n"
        "index-url = https://pypi.corp.example/simple\n"
        "extra-index-url = https://x.example/simple file:///opt/local/simple http://y.example/s\n"
        "trusted-host = pypi.corp.example y.example\n"
        "timeout = 42\n"
        f"cert = {ca}\n"
    )
    index = host_index_settings(_settings())
    assert index.index_url == "https://pypi.corp.example/simple"
    assert index.extra_index_urls == ("https://x.example/simple", "http://y.example/s")
    assert index.trusted_hosts == ("pypi.corp.example", "y.example")
    assert index.timeout == "42"
    assert index.ca_bundle == ca.read_bytes()


def test_file_indexes_are_dropped(pip_conf: Callable[[str], Path], tmp_path: Path) -> None:
    pip_conf(
        "[global]\n"
        "index-url = file:///opt/pypi/simple\n"
        "extra-index-url = file:///opt/pypi/simple /opt/plain/folder\n"
        f"cert = {tmp_path / 'absent.pem'}\n"
    )
    index = host_index_settings(_settings())
    assert index.index_url == ""
    assert index.extra_index_urls == ()
    env = index.environment(CA_PATH)
    assert "PIP_INDEX_URL" not in env
    assert "PIP_EXTRA_INDEX_URL" not in env


def test_default_timeout_is_used_when_timeout_is_absent(pip_conf: Callable[[str], Path]) -> None:
    pip_conf("[global]\ndefault-timeout = 77\n")
    assert host_index_settings(_settings()).timeout == "77"


def test_settings_override_pip_configuration(
    pip_conf: Callable[[str], Path], tmp_path: Path
) -> None:
    conf_ca = tmp_path / "conf-ca.pem"
    conf_ca.write_bytes(b"from pip.conf")
    ours = tmp_path / "ours.pem"
    ours.write_bytes(b"-----BEGIN CERTIFICATE-----\nours\n")
    pip_conf(
        "[global]\n"
        "index-url = https://from-conf.example/simple\n"
        "extra-index-url = https://extra-from-conf.example/simple\n"
        f"cert = {conf_ca}\n"
    )
    index = host_index_settings(
        _settings(
            pip_index_url="https://ours.example/simple",
            pip_extra_index_urls=["https://ours-extra.example/simple"],
            pip_ca_bundle=ours,
        )
    )
    assert index.index_url == "https://ours.example/simple"
    assert index.extra_index_urls == ("https://ours-extra.example/simple",)
    assert index.ca_bundle == b"-----BEGIN CERTIFICATE-----\nours\n"
    env = index.environment(CA_PATH)
    assert env["PIP_INDEX_URL"] == "https://ours.example/simple"
    assert env["PIP_EXTRA_INDEX_URL"] == "https://ours-extra.example/simple"
    assert env["PIP_CERT"] == CA_PATH
    assert env["SSL_CERT_FILE"] == CA_PATH
    assert env["REQUESTS_CA_BUNDLE"] == CA_PATH


def test_index_override_keeps_extras_from_pip_configuration(
    pip_conf: Callable[[str], Path],
) -> None:
    pip_conf("[global]\nextra-index-url = https://extra-from-conf.example/simple\n")
    index = host_index_settings(_settings(pip_index_url="https://ours.example/simple"))
    assert index.index_url == "https://ours.example/simple"
    assert index.extra_index_urls == ("https://extra-from-conf.example/simple",)


def test_system_bundle_is_the_fallback(
    pip_conf: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    system = tmp_path / "system.pem"
    system.write_bytes(b"system bundle")
    monkeypatch.setenv("SSL_CERT_FILE", str(system))
    # os.devnull as the configuration file makes pip read no configuration file at all.
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    index = host_index_settings(_settings())
    assert index.ca_bundle == b"system bundle"
    assert index.index_url == ""


def test_multi_line_extra_index_url(pip_conf: Callable[[str], Path]) -> None:
    # The usual way to list several extra indexes in pip.conf; pip reads both.
    pip_conf(
        "[global]\n"
        "extra-index-url =\n"
        "    https://extra-one.example/simple\n"
        "    https://extra-two.example/simple\n"
    )
    index = host_index_settings(_settings())
    assert index.extra_index_urls == (
        "https://extra-one.example/simple",
        "https://extra-two.example/simple",
    )


def test_environment_variable_index_beats_config_file(
    pip_conf: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pip_conf("[global]\nindex-url = https://file.example/simple\n")
    monkeypatch.setenv("PIP_INDEX_URL", "https://env.example/simple")
    assert host_index_settings(_settings()).index_url == "https://env.example/simple"
