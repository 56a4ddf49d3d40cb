"""The local GitHub these tests talk to, and the App's clients for it."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from reprobot.bot.github.auth import (
    GitHubApp,
)
from reprobot.bot.github.limits import MutationThrottler, RetryPolicy
from reprobot.settings import Settings
from tests.support.github_server import Call, GitHubServer, make_app_key

# githubkit caches App JWTs process-wide by App id: an id of this folder's own, for its key.
APP_ID = 5302


@functools.cache
def shared_app_key() -> tuple[str, bytes]:
    """The key of ``APP_ID``: githubkit caches App JWTs process-wide by App id, so every test
    of this App id, in whichever folder, signs with one key."""
    return make_app_key()


INSTALLATION = 41
OTHER_INSTALLATION = 42
REPO = "octo-org/widgets"
SIBLING = "octo-org/gadgets"
FORK = "contributor/widgets"
CORE = "def area(w, h):\n    return w * h\n"
MARK = "<!-- reprobot:reproduction -->"


def start_server(key: tuple[str, bytes], git_root: Path, token_ttl_s: int = 3600) -> GitHubServer:
    srv = GitHubServer(APP_ID, key[1], git_root, token_ttl_s=token_ttl_s).__enter__()
    srv.add_installation(INSTALLATION, "octo-org")
    srv.add_installation(OTHER_INSTALLATION, "elsewhere")
    srv.add_repo(REPO, INSTALLATION)
    srv.add_repo(SIBLING, INSTALLATION)
    srv.add_repo("elsewhere/thing", OTHER_INSTALLATION)
    srv.add_issue(
        REPO, 1, "area() is wrong", "area(2, 3) gives 5", user="reporter", author_association="NONE"
    )
    return srv


def make_app(
    server: GitHubServer, key: str, clock: Callable[[], datetime] | None = None
) -> GitHubApp:
    return GitHubApp(
        APP_ID,
        key,
        server.api_url,
        retry=RetryPolicy(max_retries=2, max_wait_s=5, backoff_s=0.02),
        throttler=MutationThrottler(pause_s=0.0),
        clock=clock or (lambda: datetime.now(UTC)),
    )


def api_calls(server: GitHubServer, method: str = "", path_regex: str = "") -> list[Call]:
    return [
        c
        for c in server.calls
        if not c.path.endswith("/access_tokens")
        and (not method or c.method == method)
        and (not path_regex or re.search(path_regex, c.path))
    ]


def token_calls(server: GitHubServer) -> list[Call]:
    return [c for c in server.calls if c.path.endswith("/access_tokens")]


def settings_for(
    server: GitHubServer, tmp_path: Path, key_path: Path | None, **kw: object
) -> Settings:
    values: dict[str, object] = {
        "cache_dir": tmp_path / "cache",
        "app_id": APP_ID,
        "private_key_path": key_path,
        "github_api_url": server.api_url,
        "github_mutation_pause_s": 0.0,
        **kw,
    }
    return Settings(**values)  # type: ignore[arg-type]
