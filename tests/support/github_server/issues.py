"""Issue routes: issues, comments, labels and pull requests."""

from __future__ import annotations

import copy
import re
from urllib.parse import unquote, urlencode

from tests.support.github_server.records import (
    COMMENT_BODY_MAX,
    JSON,
    NOT_ACCESSIBLE,
    _Answer,
    _HttpError,
    _not_found,
    _now_iso,
    _Repo,
    _Request,
    _validation,
)
from tests.support.github_server.repos import RepoRoutes


class IssueRoutes(RepoRoutes):
    """Issue routes: issues, comments, labels and pull requests."""

    def _issue_key(self, req: _Request, match: re.Match[str]) -> tuple[_Repo, int, bool]:
        """The repository, number and pull-request-ness of the issue a route names, after
        checking the token may read it."""
        repo = self._repo_of(req, match)
        number = int(match["number"])
        with self._lock:
            issue = self._issues.get((repo.full_name.lower(), number))
        if issue is None:
            self._need(req, "read", "issues", "pull_requests")
            raise _not_found()
        is_pull = "pull_request" in issue
        self._need(req, "read", "issues", *(("pull_requests",) if is_pull else ()))
        return repo, number, is_pull

    def _get_issue(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo, number, _ = self._issue_key(req, match)
        with self._lock:
            return _Answer(200, copy.deepcopy(self._issues[(repo.full_name.lower(), number)]))

    def _list_comments(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo, number, _ = self._issue_key(req, match)
        with self._lock:
            key = repo.full_name.lower()
            items = [
                copy.deepcopy(obj)
                for k, n, obj in self._comments.values()
                if k == key and n == number
            ]
        link_base = f"{self.api_url}/repositories/{repo.id}/issues/{number}/comments"
        return self._paginate(req, items, link_base)

    @staticmethod
    def _paginate(req: _Request, items: list[JSON], link_base: str) -> _Answer:
        def number(name: str, default: int) -> int:
            try:
                return int(req.query.get(name, default))
            except ValueError:
                return default

        per_page = min(max(number("per_page", 30), 1), 100)
        page = max(number("page", 1), 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []

        def link(target: int, rel: str) -> str:
            params = {"per_page": str(per_page)} if "per_page" in req.query else {}
            params["page"] = str(target)
            return f'<{link_base}?{urlencode(params)}>; rel="{rel}"'

        if page > 1:
            links.append(link(min(page - 1, last), "prev"))
        if page < last:
            links.append(link(page + 1, "next"))
            links.append(link(last, "last"))
        if page > 1:
            links.append(link(1, "first"))
        headers = {"link": ", ".join(links)} if links else {}
        return _Answer(200, chunk, headers)

    def _comment_body(self, req: _Request) -> str:
        body = req.json.get("body") if isinstance(req.json, dict) else None
        if not isinstance(body, str):
            raise _HttpError(422, 'Invalid request.\n\n"body" wasn\'t supplied.')
        if not body.strip():
            raise _validation("IssueComment", "missing_field", "body")
        if len(body) > COMMENT_BODY_MAX:
            raise _validation(
                "IssueComment",
                "custom",
                "body",
                f"body is too long (maximum is {COMMENT_BODY_MAX} characters)",
            )
        return body

    def _create_comment(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo, number, is_pull = self._issue_key(req, match)
        self._need(req, "write", "issues", *(("pull_requests",) if is_pull else ()))
        body = self._comment_body(req)
        with self._lock:
            comment = self._new_comment(
                repo, number, body, self._user(self._bot_login), "NONE", self._app_object()
            )
            return _Answer(201, copy.deepcopy(comment), {"location": comment["url"]})

    def _comment_of(self, req: _Request, match: re.Match[str]) -> tuple[_Repo, JSON]:
        repo = self._repo_of(req, match)
        with self._lock:
            found = self._comments.get(int(match["id"]))
            is_pull = found is not None and "pull_request" in self._issues[found[:2]]
        if found is None or found[0] != repo.full_name.lower():
            self._need(req, "read", "issues", "pull_requests")
            raise _not_found()
        self._need(req, "read", "issues", *(("pull_requests",) if is_pull else ()))
        return repo, found[2]

    def _get_comment(self, req: _Request, match: re.Match[str]) -> _Answer:
        _, comment = self._comment_of(req, match)
        with self._lock:
            return _Answer(200, copy.deepcopy(comment))

    def _update_comment(self, req: _Request, match: re.Match[str]) -> _Answer:
        _, comment = self._comment_of(req, match)
        self._need(req, "write", "issues", "pull_requests")
        body = self._comment_body(req)
        with self._lock:
            if comment["user"]["login"] != self._bot_login:
                raise _HttpError(403, NOT_ACCESSIBLE)
            comment["body"] = body
            comment["updated_at"] = _now_iso()
            return _Answer(200, copy.deepcopy(comment))

    def _list_labels(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "issues", "pull_requests")
        with self._lock:
            items = copy.deepcopy(list(repo.labels.values()))
        return self._paginate(req, items, f"{self.api_url}/repositories/{repo.id}/labels")

    def _get_label(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "issues", "pull_requests")
        with self._lock:
            label = repo.labels.get(unquote(match["name"]).lower())
            if label is None:
                raise _not_found()
            return _Answer(200, copy.deepcopy(label))

    def _create_label(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "write", "issues", "pull_requests")
        body = req.json if isinstance(req.json, dict) else {}
        name = body.get("name")
        if not isinstance(name, str) or not name.strip():
            raise _validation("Label", "missing_field", "name")
        color = str(body.get("color") or "ededed").lstrip("#")
        if not re.fullmatch(r"[0-9a-fA-F]{6}", color):
            raise _validation("Label", "invalid", "color")
        description = body.get("description")
        if description is not None and len(str(description)) > 100:
            raise _validation(
                "Label",
                "custom",
                "description",
                "description is too long (maximum is 100 characters)",
            )
        with self._lock:
            if name.lower() in repo.labels:
                raise _validation("Label", "already_exists", "name")
            label = self._label_object(repo, name, color.lower(), description)
            repo.labels[name.lower()] = label
            return _Answer(201, copy.deepcopy(label), {"location": label["url"]})

    def _list_issue_labels(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo, number, _ = self._issue_key(req, match)
        with self._lock:
            labels = self._issues[(repo.full_name.lower(), number)]["labels"]
            return _Answer(200, copy.deepcopy(labels))

    @staticmethod
    def _label_names(req: _Request) -> list[str]:
        # GitHub takes {"labels": [...]}, a bare list, and names or {"name": ...} objects.
        raw = req.json.get("labels") if isinstance(req.json, dict) else req.json
        if not isinstance(raw, list):
            raise _HttpError(422, 'Invalid request.\n\n"labels" wasn\'t supplied.')
        names = []
        for item in raw:
            name = item.get("name") if isinstance(item, dict) else item
            if not isinstance(name, str) or not name.strip():
                raise _validation("Label", "invalid", "name")
            names.append(name)
        return names

    def _apply_labels(self, req: _Request, match: re.Match[str], replace: bool) -> _Answer:
        repo, number, is_pull = self._issue_key(req, match)
        self._need(req, "write", "issues", *(("pull_requests",) if is_pull else ()))
        names = self._label_names(req)
        with self._lock:
            key = (repo.full_name.lower(), number)
            current = [] if replace else list(self._issue_labels[key])
            for name in names:
                if name.lower() not in repo.labels:
                    # As on GitHub, labeling with an unknown name creates the label.
                    repo.labels[name.lower()] = self._label_object(repo, name, "ededed", None)
                if name.lower() not in current:
                    current.append(name.lower())
            self._issue_labels[key] = current
            self._sync_labels(repo, number)
            return _Answer(200, copy.deepcopy(self._issues[key]["labels"]))

    def _add_labels(self, req: _Request, match: re.Match[str]) -> _Answer:
        return self._apply_labels(req, match, replace=False)

    def _set_labels(self, req: _Request, match: re.Match[str]) -> _Answer:
        return self._apply_labels(req, match, replace=True)

    def _delete_label(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo, number, is_pull = self._issue_key(req, match)
        self._need(req, "write", "issues", *(("pull_requests",) if is_pull else ()))
        name = unquote(match["name"]).lower()
        with self._lock:
            key = (repo.full_name.lower(), number)
            if name not in self._issue_labels[key]:
                raise _HttpError(404, "Label does not exist")
            self._issue_labels[key].remove(name)
            self._sync_labels(repo, number)
            return _Answer(200, copy.deepcopy(self._issues[key]["labels"]))

    def _get_pull(self, req: _Request, match: re.Match[str]) -> _Answer:
        repo = self._repo_of(req, match)
        self._need(req, "read", "pull_requests")
        key = (repo.full_name.lower(), int(match["number"]))
        with self._lock:
            pull = self._pulls.get(key)
            if pull is None:
                raise _not_found()
            issue = self._issues[key]
            obj = copy.deepcopy(pull.object)
            # The issue side holds what pull requests share with issues.
            for name in ("title", "body", "state", "locked", "comments", "closed_at"):
                obj[name] = issue[name]
            obj["labels"] = copy.deepcopy(issue["labels"])
            obj["updated_at"] = max(obj["updated_at"], issue["updated_at"])
            return _Answer(200, obj)
