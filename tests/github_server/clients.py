"""What the tests of the local GitHub share: the names of its scenario, and the clients that
talk to it."""

from __future__ import annotations

import itertools
import time
from typing import Any

import httpx
import jwt
from githubkit import GitHub, TokenAuthStrategy

from tests.support.github_server import (
    Call,
    GitHubServer,
)

APP_ID = 4242
INSTALLATION = 77
OTHER_INSTALLATION = 78
REPO = "octo-org/widgets"
SIBLING = "octo-org/gadgets"
FOREIGN = "elsewhere/thing"
FORK = "contributor/widgets"
# Longer than one 60-character base64 line, so the content shows GitHub's line wrapping.
CORE = "def area(w, h):\n    return w * h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
CLOSING_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      closingIssuesReferences(first: 10) { nodes { number title repository { nameWithOwner } } }
    }
  }
}
"""


def app_jwt(
    private_key: str, *, iss: str = str(APP_ID), age_s: int = 30, lifetime_s: int = 600
) -> str:
    iat = int(time.time()) - age_s
    claims = {"iss": iss, "iat": iat, "exp": iat + lifetime_s}
    return jwt.encode(claims, private_key, algorithm="RS256")


def request_token(
    server: GitHubServer,
    private_key: str,
    body: dict[str, Any] | None = None,
    installation: int = INSTALLATION,
) -> httpx.Response:
    return httpx.post(
        f"{server.api_url}/app/installations/{installation}/access_tokens",
        headers={"authorization": f"Bearer {app_jwt(private_key)}"},
        json=body,
    )


def kit(server: GitHubServer, token: str) -> GitHub[TokenAuthStrategy]:
    # No HTTP cache, so that every call is a plain one: githubkit's cache revalidates with
    # If-None-Match, answered 304 when nothing changed.
    return GitHub(
        TokenAuthStrategy(token), base_url=server.api_url, http_cache=False, auto_retry=False
    )


def api(server: GitHubServer, token: str | None) -> httpx.Client:
    headers = {"authorization": f"token {token}"} if token else {}
    return httpx.Client(base_url=server.api_url, headers=headers)


def api_calls(server: GitHubServer) -> list[Call]:
    """The calls after the one that got the test's token."""
    return [c for c in server.calls if not c.path.endswith("/access_tokens")]


def overlapping(calls: list[Call]) -> bool:
    """Whether any two of ``calls`` were being answered at the same time."""
    ordered = sorted(calls, key=lambda c: c.started)
    return any(b.started < a.finished for a, b in itertools.pairwise(ordered))
