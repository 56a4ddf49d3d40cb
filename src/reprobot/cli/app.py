"""``reprobot app manifest``, ``reprobot app register`` and ``reprobot app image``: create the
GitHub App from ``infra/app.yml``, store its credentials, and build its container image."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reprobot.bot import (
    DEFAULT_TAG,
    build_app_image,
    build_manifest,
    convert,
    manifest_page,
    write_credentials,
)
from reprobot.console import progress_for
from reprobot.settings import Settings
from reprobot.validation import connect


def register(sub: Any) -> None:
    app = sub.add_parser("app", help="register the GitHub App from its manifest")
    app_sub = app.add_subparsers(dest="app_command", required=True)
    manifest = app_sub.add_parser(
        "manifest", help="write the page that registers the App on GitHub"
    )
    manifest.add_argument(
        "--url", required=True, help="the public base URL of `reprobot serve` (https://...)"
    )
    manifest.add_argument("--name", default=None, help="the App's name (must be unique)")
    manifest.add_argument("--org", default=None, help="register under this organisation")
    manifest.add_argument(
        "--github-url", default="https://github.com", help="GitHub (Enterprise Server) web URL"
    )
    manifest.add_argument("--out", type=Path, default=Path("register-reprobot.html"))
    manifest.set_defaults(handler=cmd_manifest)
    reg = app_sub.add_parser(
        "register", help="trade the code GitHub returned for the App's id, key and secret"
    )
    reg.add_argument("--code", required=True, help="the code parameter of GitHub's redirect")
    reg.add_argument("--dir", type=Path, default=Path("."), help="where to write .env and key")
    reg.set_defaults(handler=cmd_register)
    image = app_sub.add_parser(
        "image", help="build the App's container image (for infra/compose.yaml)"
    )
    image.add_argument("--tag", default=DEFAULT_TAG, help=f"image tag (default {DEFAULT_TAG})")
    image.set_defaults(handler=cmd_image)


def cmd_manifest(args: argparse.Namespace, settings: Settings) -> int:
    page = manifest_page(build_manifest(args.url, args.name), args.github_url, args.org)
    args.out.write_text(page, encoding="utf-8")
    print(f"Open {args.out.resolve()} in a browser signed in to GitHub and press the button.")
    print(f"GitHub then redirects to {args.url.rstrip('/')}/registered?code=CODE; run")
    print("    reprobot app register --code CODE")
    return 0


def cmd_image(args: argparse.Namespace, settings: Settings) -> int:
    tag = build_app_image(connect(), settings, args.tag, progress_for(args))
    print(tag)
    return 0


def cmd_register(args: argparse.Namespace, settings: Settings) -> int:
    creds = convert(args.code, settings.github_api_url)
    key_path, env_path = write_credentials(creds, args.dir, settings.github_api_url)
    print(f"Registered {creds.html_url or creds.slug} (App id {creds.app_id}).")
    print(f"Private key: {key_path}")
    print(f"Settings:    {env_path} (REPROBOT_APP_ID, REPROBOT_PRIVATE_KEY_PATH, ...)")
    if creds.html_url:
        print(f"Install it on repositories: {creds.html_url}/installations/new")
    return 0
