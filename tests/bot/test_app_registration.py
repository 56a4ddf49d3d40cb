"""Registering the App from ``infra/app.yml``: the manifest, the page that posts it, and the
code traded for credentials on a local GitHub, which ``reprobot serve`` then starts from."""

from __future__ import annotations

import json
import os
import re
import stat
from html import unescape
from pathlib import Path

import pytest
from pydantic import SecretStr

from reprobot.bot.errors import AppConfigError, GitHubError
from reprobot.bot.github.auth import REPRODUCE_PERMISSIONS, GitHubApp
from reprobot.bot.github.registration import (
    AppCredentials,
    build_manifest,
    convert,
    manifest_page,
    write_credentials,
)
from reprobot.cli.main import main
from reprobot.settings import Settings
from tests.support.github_server import GitHubServer, make_app_key


def test_the_manifest_asks_for_the_least_it_needs() -> None:
    manifest = build_manifest("https://bot.example.org/reprobot/")
    assert manifest["default_permissions"] == {
        "metadata": "read",
        "contents": "read",
        "issues": "write",
        "pull_requests": "read",
        "checks": "write",
    }
    assert set(manifest["default_events"]) == {
        "issues",
        "issue_comment",
        "pull_request",
        "check_run",
    }
    assert manifest["hook_attributes"] == {
        "url": "https://bot.example.org/reprobot/webhook",
        "active": True,
    }
    assert manifest["redirect_url"] == "https://bot.example.org/reprobot/registered"
    assert manifest["callback_urls"] == ["https://bot.example.org/reprobot/auth/callback"]
    with pytest.raises(AppConfigError):
        build_manifest("javascript:alert(1)")


def test_the_page_posts_the_manifest_and_escapes_it() -> None:
    manifest = build_manifest("https://bot.example.org", name="Repro'bot <test>")
    page = manifest_page(manifest, "https://github.com", org="my-org")
    assert "action='https://github.com/organizations/my-org/settings/apps/new'" in page
    value = re.search(r"name='manifest' value='([^']*)'", page)
    assert value is not None
    assert json.loads(unescape(value[1]))["name"] == "Repro'bot <test>"
    assert "<test>" not in page
    with pytest.raises(AppConfigError):
        manifest_page(manifest, "https://github.com", org="x'><script>")


@pytest.mark.github
def test_register_stores_credentials_that_serve_starts_from(tmp_path: Path) -> None:
    key, public = make_app_key()
    with GitHubServer(5151, public, tmp_path / "git") as github:
        github.add_installation(11, "octo")
        github.add_repo("octo/widgets", 11)
        github.add_manifest_code("abc123", key, "hook secret")
        with pytest.raises(GitHubError, match="codes last one hour"):
            convert("not-issued", github.api_url)
        os.environ["REPROBOT_GITHUB_API_URL"] = github.api_url
        try:
            code = main(["app", "register", "--code", "abc123", "--dir", str(tmp_path / "app")])
        finally:
            del os.environ["REPROBOT_GITHUB_API_URL"]
        assert code == 0
        env_path = tmp_path / "app" / ".env"
        assert stat.S_IMODE(env_path.stat().st_mode) == 0o600
        settings = Settings(_env_file=env_path)
        assert settings.app_id == 5151
        assert settings.webhook_secret == SecretStr("hook secret")
        # The App's OAuth client, for the sign-in of private repositories' pages.
        assert settings.oauth_client_id == f"Iv23li{5151:014d}"
        assert settings.oauth_client_secret.get_secret_value() == "0" * 40
        assert settings.private_key_path is not None
        assert stat.S_IMODE(settings.private_key_path.stat().st_mode) == 0o600
        # The stored key signs JWTs GitHub accepts.
        token = GitHubApp.from_settings(settings).token(11, "octo/widgets", REPRODUCE_PERMISSIONS)
        assert token.token.startswith("ghs_")
        # The code worked once; the files are never overwritten.
        assert main(["app", "register", "--code", "abc123", "--dir", str(tmp_path / "app")]) == 2


def test_credentials_are_not_overwritten(tmp_path: Path) -> None:
    creds = AppCredentials(1, "bot", "", "-----BEGIN RSA PRIVATE KEY-----\n", "hush-hush")
    write_credentials(creds, tmp_path, "https://api.github.com")
    with pytest.raises(AppConfigError, match="exists"):
        write_credentials(creds, tmp_path, "https://api.github.com")
    assert "hush-hush" not in repr(creds) and "PRIVATE" not in repr(creds)
    with_client = AppCredentials(1, "bot", "", "pem", "hook", "Iv1.abc", "client-hush")
    assert "client-hush" not in repr(with_client)


def test_manifest_command_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "register.html"
    assert main(["app", "manifest", "--url", "https://bot.example.org", "--out", str(out)]) == 0
    assert "https://github.com/settings/apps/new" in out.read_text()
