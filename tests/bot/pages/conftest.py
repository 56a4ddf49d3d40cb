"""A local GitHub holding a private and a public repository, and Reprobot's web app serving
their report pages from a real HTTP server of its own (uvicorn on a free port, in a thread)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from pydantic import SecretStr

from reprobot.bot.context import AppContext, build_context
from reprobot.bot.pages.links import PageLinks, page_links
from reprobot.bot.webhooks.app import create_app
from reprobot.settings import Settings
from tests.bot.pages.test_report_page import _page
from tests.support.github_server import GitHubServer, make_app_key
from tests.support.servers import free_port

APP_ID = 4242
INSTALLATION = 77
PRIVATE = "acme/durations"
PUBLIC = "acme/open"
SECRET = "report pages webhook secret"


@pytest.fixture(scope="module")
def app_key() -> tuple[str, bytes]:
    return make_app_key()


@pytest.fixture
def github(app_key: tuple[str, bytes], tmp_path: Path) -> Iterator[GitHubServer]:
    """The App installed on ``acme``, which owns PRIVATE (private) and PUBLIC."""
    with GitHubServer(APP_ID, app_key[1], tmp_path / "git") as server:
        server.add_installation(INSTALLATION, "acme")
        server.add_repo(PRIVATE, INSTALLATION, private=True)
        server.add_repo(PUBLIC, INSTALLATION)
        yield server


class PagesApp:
    """Reprobot's web app over ``ctx``, listening on ``port``; ``browser`` keeps its cookies
    and follows redirects, to the local GitHub and back, as a browser does."""

    def __init__(self, ctx: AppContext, port: int) -> None:
        self.ctx = ctx
        self.url = f"http://127.0.0.1:{port}"
        self.links: PageLinks = page_links(ctx.settings)
        config = uvicorn.Config(
            create_app(ctx), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the web app did not start")
            time.sleep(0.01)
        self.browser = httpx.Client(follow_redirects=True, timeout=30)

    def page(self, repo: str, *, private: bool) -> str:
        """Keep a verdict page of ``repo``; return its link."""
        document = _page().model_dump_json()
        stored = self.ctx.pages.save(
            "verdict", repo, 7, "c" * 40, "verified", document, private=private
        )
        return self.links.url(stored.id)

    def stop(self) -> None:
        self.browser.close()
        self._server.should_exit = True
        self._thread.join(timeout=15)
        self.ctx.close()


@pytest.fixture
def start_app(
    github: GitHubServer, app_key: tuple[str, bytes], tmp_path: Path
) -> Iterator[Callable[..., PagesApp]]:
    """Start the web app with sign-in set up for the local GitHub (its client id and secret,
    its callback URL registered there); ``settings`` override Reprobot's settings."""
    started: list[PagesApp] = []
    key_path = tmp_path / "app.pem"
    key_path.write_text(app_key[0])

    def start(**settings: Any) -> PagesApp:
        port = free_port()
        public_url = f"http://127.0.0.1:{port}"
        github.set_oauth_callback(f"{public_url}/auth/callback")
        values: dict[str, Any] = {
            "cache_dir": tmp_path / f"cache-{len(started)}",
            "webhook_secret": SecretStr(SECRET),
            "app_id": APP_ID,
            "private_key_path": key_path,
            "public_url": public_url,
            "github_url": github.base_url,
            "github_api_url": github.api_url,
            "oauth_client_id": github.oauth_client_id,
            "oauth_client_secret": SecretStr(github.oauth_client_secret),
            **settings,
        }
        app = PagesApp(build_context(Settings(**values)), port)
        started.append(app)
        return app

    yield start
    for app in started:
        app.stop()
