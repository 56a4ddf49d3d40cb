"""Webhook deliveries for tests and benchmarks: GitHub's real example payloads, changed where a
test needs it, serialised and signed as GitHub does."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path
from typing import Any

from githubkit.webhooks import sign

PAYLOADS = Path(__file__).resolve().parent / "payloads"
NAMES = sorted(p.stem for p in PAYLOADS.glob("*.json"))
if not NAMES:
    # A parametrisation over no payloads would pass silently; fail the collection instead.
    raise FileNotFoundError(f"no webhook payloads in {PAYLOADS}")


def load(name: str) -> dict[str, Any]:
    """The payload ``payloads/<name>.json`` (e.g. ``issues.opened``), as a fresh dict."""
    path = PAYLOADS / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"no webhook payload {name!r}: {path} is missing")
    data: dict[str, Any] = json.loads(path.read_text())
    return copy.deepcopy(data)


def _place(data: dict[str, Any], repo: str, installation_id: int | None) -> dict[str, Any]:
    owner, _, name = repo.partition("/")
    repository = data["repository"]
    repository.update(full_name=repo, name=name, default_branch="main")
    repository["owner"]["login"] = owner
    if installation_id is None:
        data.pop("installation", None)
    else:
        data["installation"] = {"id": installation_id, "node_id": "MDIzOkluc3RhbGxhdGlvbg=="}
    return data


def issue_opened(
    repo: str, installation_id: int | None, number: int, title: str, body: str
) -> dict[str, Any]:
    data = _place(load("issues.opened"), repo, installation_id)
    data["issue"].update(number=number, title=title, body=body, state="open")
    return data


def issue_edited(
    repo: str, installation_id: int, number: int, title: str, body: str, old_body: str
) -> dict[str, Any]:
    data = _place(load("issues.edited"), repo, installation_id)
    data["issue"].update(number=number, title=title, body=body, state="open")
    data["changes"] = {"body": {"from": old_body}}
    return data


def pull_request(
    action: str,
    repo: str,
    installation_id: int,
    number: int,
    head_sha: str,
    base_sha: str,
    body: str,
) -> dict[str, Any]:
    data = _place(load("pull_request.synchronize"), repo, installation_id)
    data["action"] = action
    data["number"] = number
    pull = data["pull_request"]
    pull.update(number=number, body=body, state="open")
    pull["head"]["sha"] = head_sha
    pull["base"]["sha"] = base_sha
    for side in ("head", "base"):
        pull[side]["repo"]["full_name"] = repo
    return data


def issue_comment(
    repo: str,
    installation_id: int,
    number: int,
    body: str,
    user: str = "maintainer",
    association: str = "OWNER",
    on_pull: bool = False,
    user_type: str = "User",
) -> dict[str, Any]:
    data = _place(load("issue_comment.created.with-installation"), repo, installation_id)
    data["issue"]["number"] = number
    data["issue"]["pull_request"] = (
        {"url": f"https://example.invalid/{repo}/pulls/{number}"} if on_pull else None
    )
    comment = data["comment"]
    comment.update(body=body, author_association=association, id=number * 1000 + 7)
    comment["user"].update(login=user, type=user_type)
    return data


def check_run_rerequested(
    repo: str, installation_id: int, app_id: int, name: str, head_sha: str, pulls: list[int]
) -> dict[str, Any]:
    data = _place(load("check_run.rerequested"), repo, installation_id)
    run = data["check_run"]
    run.update(name=name, head_sha=head_sha)
    run["app"]["id"] = app_id
    run["pull_requests"] = [{"number": n} for n in pulls]
    return data


def encode(data: dict[str, Any]) -> bytes:
    # GitHub sends compact JSON; the signature is over these exact bytes.
    return json.dumps(data, separators=(",", ":")).encode()


def headers(secret: str, event: str, body: bytes, delivery: str | None = None) -> dict[str, str]:
    """The headers GitHub sends with ``body``, signed with ``secret``."""
    return {
        "content-type": "application/json",
        "user-agent": "GitHub-Hookshot/test",
        "x-github-event": event,
        "x-github-delivery": delivery or str(uuid.uuid4()),
        "x-github-hook-id": "1",
        "x-github-hook-installation-target-type": "integration",
        "x-hub-signature-256": sign(secret, body, "sha256"),
        "x-hub-signature": sign(secret, body, "sha1"),
    }
