"""git over smart HTTP: clone and fetch with an installation token, never push."""

from __future__ import annotations

import base64
import gzip
import os
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.github_server.clients import (
    CORE,
    FOREIGN,
    FORK,
    REPO,
    api_calls,
)
from tests.support.github_server import (
    GitHubServer,
    git_auth_header,
)
from tests.support.repos import commit_files
from tests.support.widgets import Sources

# --- git ------------------------------------------------------------------------------------


def run_git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd or Path.cwd()),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_git_clone_with_an_installation_token(
    server: GitHubServer, token: str, sources: Sources, tmp_path: Path
) -> None:
    header = f"http.extraHeader={git_auth_header(token)}"
    assert header.endswith(base64.b64encode(f"x-access-token:{token}".encode()).decode())

    cloned = run_git("-c", header, "clone", "-q", server.git_url(REPO), str(tmp_path / "clone"))

    assert cloned.returncode == 0, cloned.stderr
    assert run_git("rev-parse", "HEAD", cwd=tmp_path / "clone").stdout.strip() == sources.main_sha
    assert (tmp_path / "clone" / "widgets" / "core.py").read_text() == CORE
    git_calls = [c for c in server.calls if c.path.startswith("/git/")]
    # Protocol v2 posts twice: ls-refs, then fetch.
    assert [(c.method, c.path.rsplit("/", 1)[-1], c.status) for c in git_calls] == [
        ("GET", "refs", 200),
        ("POST", "git-upload-pack", 200),
        ("POST", "git-upload-pack", 200),
    ]
    assert git_calls[1].headers["git-protocol"] == "version=2"
    assert git_calls[0].query == {"service": "git-upload-pack"}


def test_git_clone_without_a_valid_token_fails(
    server: GitHubServer, token: str, tmp_path: Path
) -> None:
    anonymous = run_git("clone", "-q", server.git_url(REPO), str(tmp_path / "a"))
    wrong = run_git(
        "-c",
        f"http.extraHeader={git_auth_header('ghs_' + 'x' * 36)}",
        "clone",
        "-q",
        server.git_url(REPO),
        str(tmp_path / "b"),
    )
    foreign = run_git(
        "-c",
        f"http.extraHeader={git_auth_header(token)}",
        "clone",
        "-q",
        server.git_url(FOREIGN),
        str(tmp_path / "c"),
    )

    assert anonymous.returncode != 0 and wrong.returncode != 0 and foreign.returncode != 0
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    statuses = [c.status for c in api_calls(server)]
    assert statuses == [401, 401, 404]
    with httpx.Client() as client:
        refused = client.get(f"{server.git_url(REPO)}/info/refs?service=git-upload-pack")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == 'Basic realm="GitHub"'


@pytest.mark.parametrize("protocol", ["0", "2"])
def test_git_fetches_commits_by_sha(
    server: GitHubServer, token: str, sources: Sources, tmp_path: Path, protocol: str
) -> None:
    # The fork's commit reaches the base repository as refs/pull/4/head, as on GitHub.
    server.add_pull(
        REPO, 4, "Fork fix", None, sources.fork_sha, sources.main_sha, head_full_name=FORK
    )
    work = tmp_path / "work"
    run_git("init", "-q", str(work))
    options = ["-c", f"http.extraHeader={git_auth_header(token)}", "-c"]
    options.append(f"protocol.version={protocol}")

    for sha in (sources.first_sha, sources.fork_sha):
        fetched = run_git(*options, "fetch", "-q", server.git_url(REPO), sha, cwd=work)
        assert fetched.returncode == 0, fetched.stderr
        assert run_git("rev-parse", "FETCH_HEAD", cwd=work).stdout.strip() == sha
    by_ref = run_git(*options, "fetch", "-q", server.git_url(REPO), "refs/pull/4/head", cwd=work)
    assert by_ref.returncode == 0, by_ref.stderr
    assert run_git("rev-parse", "FETCH_HEAD", cwd=work).stdout.strip() == sources.fork_sha


def pkt_line(text: str) -> bytes:
    return f"{len(text) + 5:04x}{text}\n".encode()


def test_upload_pack_takes_gzipped_chunked_requests(
    server: GitHubServer, token: str, sources: Sources
) -> None:
    # What git sends for a fetch with a long negotiation: a gzipped body, chunked.
    request = (
        pkt_line(f"want {sources.main_sha} ofs-delta no-progress") + b"0000" + pkt_line("done")
    )
    packed = gzip.compress(request)
    credentials = base64.b64encode(f"x-access-token:{token}".encode()).decode()

    answer = httpx.post(
        f"{server.git_url(REPO)}/git-upload-pack",
        content=iter([packed[:10], packed[10:]]),
        headers={
            "authorization": f"Basic {credentials}",
            "content-type": "application/x-git-upload-pack-request",
            "content-encoding": "gzip",
        },
    )

    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/x-git-upload-pack-result"
    assert answer.content.startswith(b"0008NAK\nPACK")
    sent = api_calls(server)[-1]
    assert sent.headers["transfer-encoding"] == "chunked" and sent.json is None


def test_git_push_is_refused(server: GitHubServer, token: str, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    header = f"http.extraHeader={git_auth_header(token)}"
    assert run_git("-c", header, "clone", "-q", server.git_url(REPO), str(clone)).returncode == 0
    commit_files(clone, {"new.txt": "new\n"}, "a push")

    pushed = run_git("-c", header, "push", "-q", "origin", "HEAD:main", cwd=clone)

    assert pushed.returncode != 0
    assert server.calls[-1].status == 403
    assert server.calls[-1].query == {"service": "git-receive-pack"}
