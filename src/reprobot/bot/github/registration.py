"""Registering the App from its manifest (GitHub's manifest flow).

1. ``manifest_page`` renders a page whose form posts ``infra/app.yml`` (with this server's URLs)
   to GitHub; the person registering presses the button, names the App and creates it.
2. GitHub redirects to the manifest's ``redirect_url`` with a one-hour ``code``.
3. ``convert`` trades the code for the App's id, private key and webhook secret
   (``POST /app-manifests/{code}/conversions``), and ``write_credentials`` stores them where
   ``reprobot serve`` reads them.
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from githubkit import GitHub, UnauthAuthStrategy
from githubkit.exception import GitHubException, RequestFailed

from reprobot.bot.errors import AppConfigError, GitHubError

_CODE = re.compile(r"^[A-Za-z0-9_-]{1,200}$")
_ORG = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")


def manifest_path() -> Path:
    """``infra/app.yml``: packaged into the wheel, or read from the source checkout."""
    packaged = files("reprobot").joinpath("_infra", "app.yml")
    if packaged.is_file():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[4] / "infra" / "app.yml"


def build_manifest(
    base_url: str, name: str | None = None, source: Path | None = None
) -> dict[str, Any]:
    """The App manifest with this server's addresses: the webhook at ``BASE/webhook``, the
    redirect after registration at ``BASE/registered`` and the sign-in callback of private
    report pages at ``BASE/auth/callback``."""
    if not base_url.startswith(("https://", "http://")):
        raise AppConfigError(f"the App's URL must be http(s): {base_url!r}")
    base = base_url.rstrip("/")
    data: dict[str, Any] = yaml.safe_load((source or manifest_path()).read_text())
    data["url"] = base
    data["hook_attributes"] = {"url": f"{base}/webhook", "active": True}
    data["redirect_url"] = f"{base}/registered"
    # Where GitHub sends a reader back after signing in to read a private repository's page.
    data["callback_urls"] = [f"{base}/auth/callback"]
    if name:
        data["name"] = name
    return data


def manifest_page(manifest: dict[str, Any], github_url: str, org: str | None = None) -> str:
    """An HTML page with the form that starts the registration on ``github_url``."""
    if org is not None and not _ORG.match(org):
        raise AppConfigError(f"not an organisation name: {org!r}")
    base = github_url.rstrip("/")
    target = f"{base}/organizations/{org}/settings/apps/new" if org else f"{base}/settings/apps/new"
    value = html.escape(json.dumps(manifest), quote=True)
    return (
        "<!doctype html>\n<html><head><meta charset='utf-8'><title>Register Reprobot</title>"
        "</head><body>\n"
        f"<p>Register the GitHub App <b>{html.escape(str(manifest.get('name', '')))}</b> "
        f"with webhook <code>{html.escape(manifest['hook_attributes']['url'])}</code>.</p>\n"
        f"<form action='{html.escape(target, quote=True)}' method='post'>\n"
        f"<input type='hidden' name='manifest' value='{value}'>\n"
        "<button type='submit'>Create the GitHub App</button>\n</form>\n</body></html>\n"
    )


@dataclass(frozen=True)
class AppCredentials:
    app_id: int
    slug: str
    html_url: str
    pem: str
    webhook_secret: str
    # The App's OAuth client, for the sign-in that private repositories' pages need.
    client_id: str = ""
    client_secret: str = ""

    def __repr__(self) -> str:  # the key and the secret never go to a log
        return f"AppCredentials(app_id={self.app_id}, slug={self.slug!r})"


def convert(code: str, api_url: str) -> AppCredentials:
    """Trade the code GitHub gave after registration for the App's credentials."""
    if not _CODE.match(code):
        raise AppConfigError("the code is the `code` parameter of the page GitHub redirected to")
    github: GitHub[Any] = GitHub(UnauthAuthStrategy(), base_url=api_url)
    try:
        data = github.rest.apps.create_from_manifest(code).json()
    except RequestFailed as exc:
        raise GitHubError(
            f"GitHub refused the code ({exc.response.status_code}); codes last one hour and "
            "work once",
            status=exc.response.status_code,
        ) from exc
    except GitHubException as exc:
        raise GitHubError(f"cannot reach GitHub: {exc!r}") from exc
    return AppCredentials(
        app_id=int(data["id"]),
        slug=str(data.get("slug") or ""),
        html_url=str(data.get("html_url") or ""),
        pem=str(data["pem"]),
        webhook_secret=str(data.get("webhook_secret") or ""),
        client_id=str(data.get("client_id") or ""),
        client_secret=str(data.get("client_secret") or ""),
    )


def write_credentials(creds: AppCredentials, directory: Path, api_url: str) -> tuple[Path, Path]:
    """Write the private key and an ``.env`` file (both readable by the owner only) into
    ``directory``; return their paths. Existing files are not overwritten."""
    directory.mkdir(parents=True, exist_ok=True)
    key_path = (directory / f"{creds.slug or 'reprobot'}.private-key.pem").resolve()
    env_path = directory / ".env"
    for path in (key_path, env_path):
        if path.exists():
            raise AppConfigError(f"{path} exists; move it away or choose another --dir")
    lines = [
        f"REPROBOT_APP_ID={creds.app_id}",
        f"REPROBOT_PRIVATE_KEY_PATH={key_path}",
        f"REPROBOT_WEBHOOK_SECRET={creds.webhook_secret}",
        f"REPROBOT_GITHUB_API_URL={api_url}",
    ]
    if creds.client_id and creds.client_secret:
        lines += [
            f"REPROBOT_OAUTH_CLIENT_ID={creds.client_id}",
            f"REPROBOT_OAUTH_CLIENT_SECRET={creds.client_secret}",
        ]
    for path, text in ((key_path, creds.pem), (env_path, "\n".join(lines) + "\n")):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
    return key_path, env_path
