"""Repository routes: the repository, its branches and contents."""

from __future__ import annotations

import base64
import copy
import re
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, unquote

from tests.support.github_server.auth import AuthRoutes
from tests.support.github_server.records import (
    JSON,
    _Answer,
    _HttpError,
    _node_id,
    _not_found,
    _Repo,
    _Request,
    _run_git,
)


class RepoRoutes(AuthRoutes):
    """Repository routes: the repository, its branches and contents."""

    # --- repository routes ----------------------------------------------------------------

    def _get_repo(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "metadata")
        with self._lock:
            return _Answer(200, copy.deepcopy(repo.object))

    def _bare(self, repo: _Repo) -> Path:
        path = self.bare_path(repo.full_name)
        if not path.is_dir():
            raise _HttpError(409, "Git Repository is empty.")
        return path

    def _commit_object(self, repo: _Repo, bare: Path, sha: str) -> JSON:
        shown = _run_git(
            bare,
            "show",
            "-s",
            "--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B",
            sha,
        )
        fields = shown.stdout.decode("utf-8", "replace").split("\x00")
        full, tree, parents, an, ae, ad, cn, ce, cd, message = fields[:10]
        api = f"{self.api_url}/repos/{repo.full_name}"
        web = f"{self.base_url}/{repo.full_name}"

        def when(date: str) -> str:
            return datetime.fromisoformat(date).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

        return {
            "sha": full,
            "node_id": _node_id("Commit", int(full[:7], 16)),
            "commit": {
                "author": {"name": an, "email": ae, "date": when(ad)},
                "committer": {"name": cn, "email": ce, "date": when(cd)},
                "message": message.rstrip("\n"),
                "tree": {"sha": tree, "url": f"{api}/git/trees/{tree}"},
                "url": f"{api}/git/commits/{full}",
                "comment_count": 0,
                "verification": {
                    "verified": False,
                    "reason": "unsigned",
                    "signature": None,
                    "payload": None,
                    "verified_at": None,
                },
            },
            "url": f"{api}/commits/{full}",
            "html_url": f"{web}/commit/{full}",
            "comments_url": f"{api}/commits/{full}/comments",
            "author": None,
            "committer": None,
            "parents": [
                {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{web}/commit/{p}"}
                for p in parents.split()
            ],
        }

    def _get_branch(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "metadata")
        branch = unquote(match["branch"]).rstrip("/")
        bare = self._bare(repo)
        parsed = _run_git(bare, "rev-parse", "--verify", "-q", f"refs/heads/{branch}^{{commit}}")
        if parsed.returncode != 0 or branch.startswith("-"):
            raise _HttpError(404, "Branch not found")
        sha = parsed.stdout.decode().strip()
        api = f"{self.api_url}/repos/{repo.full_name}/branches/{quote(branch)}"
        commit = self._commit_object(repo, bare, sha)
        body = {
            "name": branch,
            "commit": commit,
            "_links": {"self": api, "html": f"{self.base_url}/{repo.full_name}/tree/{branch}"},
            "protected": False,
            "protection": {
                "enabled": False,
                "required_status_checks": {
                    "enforcement_level": "off",
                    "contexts": [],
                    "checks": [],
                },
            },
            "protection_url": f"{api}/protection",
        }
        return _Answer(200, body)

    def _content_entry(
        self, repo: _Repo, ref: str, path: str, kind: str, sha: str, size: int
    ) -> JSON:
        api = f"{self.api_url}/repos/{repo.full_name}"
        url = f"{api}/contents/{quote(path)}?ref={quote(ref, safe='')}"
        web_kind = "tree" if kind == "dir" else "blob"
        html = f"{self.base_url}/{repo.full_name}/{web_kind}/{ref}/{quote(path)}"
        git = f"{api}/git/{'trees' if kind == 'dir' else 'blobs'}/{sha}"
        download = None
        if kind == "file":
            download = f"{self.base_url}/raw/{repo.full_name}/{ref}/{quote(path)}"
        return {
            "type": kind,
            "size": size,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "url": url,
            "git_url": git,
            "html_url": html,
            "download_url": download,
            "_links": {"self": url, "git": git, "html": html},
        }

    @staticmethod
    def _ls_tree(bare: Path, treeish: str) -> list[tuple[str, str, str, int, str]]:
        """(mode, type, sha, size, name) of the entries ``git ls-tree -l`` lists."""
        listed = _run_git(bare, "ls-tree", "-l", "-z", treeish)
        if listed.returncode != 0:
            return []
        entries = []
        for item in listed.stdout.decode("utf-8", "replace").split("\x00"):
            if not item:
                continue
            meta, _, name = item.partition("\t")
            mode, kind, sha, size = meta.split()
            entries.append((mode, kind, sha, int(size) if size.isdigit() else 0, name))
        return entries

    def _get_contents(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "contents")
        bare = self._bare(repo)
        ref = req.query.get("ref") or repo.default_branch
        path = unquote(match["path"] or "").strip("/")
        commit = _run_git(bare, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
        if ref.startswith("-") or commit.returncode != 0:
            raise _HttpError(404, f"No commit found for the ref {ref}")
        sha = commit.stdout.decode().strip()
        kinds = {"blob": "file", "tree": "dir", "commit": "submodule"}
        if path:
            found = [
                e
                for e in self._ls_tree(bare, f"{sha}:{path.rpartition('/')[0]}")
                if e[4] == path.rpartition("/")[2]
            ]
            if not found:
                raise _not_found()
            mode, kind, object_sha, size, _ = found[0]
        else:
            mode, kind, object_sha, size = "040000", "tree", "", 0
        if kind == "tree":
            listing = [
                self._content_entry(
                    repo,
                    ref,
                    f"{path}/{name}" if path else name,
                    "symlink" if m == "120000" else kinds[k],
                    s,
                    n,
                )
                for m, k, s, n, name in self._ls_tree(bare, f"{sha}:{path}")
            ]
            return _Answer(200, listing)
        if kind != "blob":
            raise _not_found()
        entry = self._content_entry(repo, ref, path, "file", object_sha, size)
        data = _run_git(bare, "cat-file", "blob", object_sha).stdout
        accept = req.headers.get("accept", "")
        if "vnd.github.raw" in accept or "vnd.github.v3.raw" in accept:
            return _Answer(
                200,
                raw=data,
                content_type="application/vnd.github.raw",
                headers={"x-github-media-type": "github.v3; param=raw"},
            )
        if mode == "120000":
            entry["type"] = "symlink"
            entry["target"] = data.decode("utf-8", "replace")
            return _Answer(200, entry)
        if len(data) > 1_000_000:
            # GitHub leaves out the content of files over 1 MB; clients must ask for raw.
            entry.update({"content": "", "encoding": "none"})
        else:
            encoded = base64.b64encode(data).decode()
            lines = [encoded[i : i + 60] for i in range(0, len(encoded), 60)]
            entry.update({"content": "".join(line + "\n" for line in lines), "encoding": "base64"})
        return _Answer(200, entry)
