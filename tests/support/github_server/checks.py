"""Check runs and collaborator permissions."""

from __future__ import annotations

import copy
import re
from urllib.parse import unquote

from tests.support.github_server.issues import IssueRoutes
from tests.support.github_server.records import (
    CHECK_OUTPUT_MAX,
    CHECK_STATUSES,
    CONCLUSIONS,
    JSON,
    PERMISSION_LEVELS,
    ROLES,
    _Answer,
    _HttpError,
    _node_id,
    _not_found,
    _now_iso,
    _Repo,
    _Request,
    _run_git,
    _valid_iso,
    _validation,
)


class CheckRoutes(IssueRoutes):
    """Check runs and collaborator permissions."""

    # --- check runs -----------------------------------------------------------------------

    def _check_fields(self, body: JSON, creating: bool) -> None:
        """Refuse a check run request GitHub would refuse."""
        if creating:
            for name in ("name", "head_sha"):
                if not isinstance(body.get(name), str) or not body[name]:
                    raise _HttpError(422, f'Invalid request.\n\n"{name}" wasn\'t supplied.')
        status = body.get("status")
        if status is not None and status not in CHECK_STATUSES:
            raise _validation("CheckRun", "invalid", "status")
        conclusion = body.get("conclusion")
        if conclusion is not None and conclusion not in CONCLUSIONS:
            raise _validation("CheckRun", "invalid", "conclusion")
        if status == "completed" and conclusion is None and creating:
            raise _validation("CheckRun", "missing_field", "conclusion")
        for name in ("started_at", "completed_at"):
            if body.get(name) is not None and not _valid_iso(body[name]):
                raise _validation("CheckRun", "invalid", name)
        output = body.get("output")
        if output is not None:
            if not isinstance(output, dict):
                raise _validation("CheckRun", "invalid", "output")
            for name in ("title", "summary"):
                if not isinstance(output.get(name), str):
                    raise _HttpError(422, f'Invalid request.\n\n"{name}" wasn\'t supplied.')
            for name in ("summary", "text"):
                text = output.get(name)
                if isinstance(text, str) and len(text) > CHECK_OUTPUT_MAX:
                    raise _HttpError(
                        422,
                        f"Invalid request.\n\nOnly {CHECK_OUTPUT_MAX} characters are allowed; "
                        f"{len(text)} were supplied.",
                    )
            annotations = output.get("annotations") or []
            if not isinstance(annotations, list) or len(annotations) > 50:
                raise _validation("CheckRun", "invalid", "annotations")

    def _apply_check_fields(self, run: JSON, body: JSON) -> None:
        for name in ("name", "details_url", "external_id", "started_at"):
            if name in body:
                run[name] = body[name]
        if "status" in body:
            run["status"] = body["status"]
        if body.get("conclusion") is not None:
            # A conclusion completes the run, as on GitHub.
            run["conclusion"] = body["conclusion"]
            run["status"] = "completed"
        if "completed_at" in body:
            run["completed_at"] = body["completed_at"]
        if run["status"] == "completed" and run["completed_at"] is None:
            run["completed_at"] = _now_iso()
        output = body.get("output")
        if isinstance(output, dict):
            run["output"].update(
                {
                    "title": output.get("title"),
                    "summary": output.get("summary"),
                    "text": output.get("text"),
                }
            )
            run["output"]["annotations_count"] += len(output.get("annotations") or [])

    def _minimal_pulls(self, repo: _Repo, head_sha: str) -> list[JSON]:
        """The open pull requests from the repository itself whose head is ``head_sha``; as
        on GitHub, pull requests from forks are left out."""
        found = []
        for (key, number), pull in self._pulls.items():
            obj = pull.object
            issue = self._issues[(key, number)]
            if key != repo.full_name.lower() or obj["head"]["sha"] != head_sha:
                continue
            if pull.head_full_name.lower() != key or issue["state"] != "open":
                continue
            found.append(
                {
                    "id": obj["id"],
                    "number": number,
                    "url": obj["url"],
                    "head": {
                        "ref": obj["head"]["ref"],
                        "sha": obj["head"]["sha"],
                        "repo": {"id": repo.id, "url": repo.object["url"], "name": repo.name},
                    },
                    "base": {
                        "ref": obj["base"]["ref"],
                        "sha": obj["base"]["sha"],
                        "repo": {"id": repo.id, "url": repo.object["url"], "name": repo.name},
                    },
                }
            )
        return found

    def _create_check_run(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "write", "checks")
        body = req.json if isinstance(req.json, dict) else {}
        self._check_fields(body, creating=True)
        head_sha = body["head_sha"]
        bare = self.bare_path(repo.full_name)
        if bare.is_dir() and (
            not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", head_sha)
            or _run_git(bare, "cat-file", "-e", f"{head_sha}^{{commit}}").returncode != 0
        ):
            raise _HttpError(422, f"No commit found for SHA: {head_sha}")
        with self._lock:
            run_id = next(self._ids)
            suite_key = (repo.full_name.lower(), head_sha)
            if suite_key not in self._check_suites:
                self._check_suites[suite_key] = next(self._ids)
            url = f"{self.api_url}/repos/{repo.full_name}/check-runs/{run_id}"
            run: JSON = {
                "id": run_id,
                "name": body["name"],
                "node_id": _node_id("CheckRun", run_id),
                "head_sha": head_sha,
                "external_id": "",
                "url": url,
                "html_url": f"{self.base_url}/{repo.full_name}/runs/{run_id}",
                "details_url": f"{self.base_url}/apps/{self.app_slug}",
                "status": "queued",
                "conclusion": None,
                "started_at": _now_iso(),
                "completed_at": None,
                "output": {
                    "title": None,
                    "summary": None,
                    "text": None,
                    "annotations_count": 0,
                    "annotations_url": f"{url}/annotations",
                },
                "check_suite": {"id": self._check_suites[suite_key]},
                "app": self._app_object(),
                "pull_requests": self._minimal_pulls(repo, head_sha),
            }
            self._apply_check_fields(run, body)
            self._check_runs[run_id] = (repo.full_name.lower(), run)
            return _Answer(201, copy.deepcopy(run), {"location": url})

    def _check_run_of(self, req: _Request, match: re.Match[str]) -> JSON:
        repo = self._repo_of(req, match)
        with self._lock:
            found = self._check_runs.get(int(match["id"]))
        if found is None or found[0] != repo.full_name.lower():
            raise _not_found()
        return found[1]

    def _get_check_run(self, req: _Request, match: re.Match[str]) -> _Answer:
        run = self._check_run_of(req, match)
        self._need(req, "read", "checks")
        with self._lock:
            return _Answer(200, copy.deepcopy(run))

    def _update_check_run(self, req: _Request, match: re.Match[str]) -> _Answer:
        run = self._check_run_of(req, match)
        self._need(req, "write", "checks")
        body = req.json if isinstance(req.json, dict) else {}
        self._check_fields(body, creating=False)
        with self._lock:
            self._apply_check_fields(run, body)
            return _Answer(200, copy.deepcopy(run))

    # --- collaborators --------------------------------------------------------------------

    def _get_permission(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "metadata")
        login = unquote(match["user"])
        with self._lock:
            default = "admin" if login.lower() == repo.owner.lower() else "none"
            role = repo.permissions.get(login.lower(), default)
            permission = ROLES[role]
            user = self._user(login)
            levels = PERMISSION_LEVELS[permission]
            user["permissions"] = {
                "admin": role == "admin",
                "maintain": role in ("admin", "maintain"),
                "push": levels >= 2,
                "triage": role in ("admin", "maintain", "write", "triage"),
                "pull": levels >= 1,
            }
            user["role_name"] = role
            return _Answer(200, {"permission": permission, "role_name": role, "user": user})
