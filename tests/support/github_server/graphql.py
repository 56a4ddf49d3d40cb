"""The one GraphQL query an App makes here: a pull request's closing issues."""

from __future__ import annotations

import re

from tests.support.github_server.checks import CheckRoutes
from tests.support.github_server.records import (
    JSON,
    _Answer,
    _Request,
)


class GraphQLRoute(CheckRoutes):
    """The one GraphQL query an App makes here: a pull request's closing issues."""

    # --- GraphQL --------------------------------------------------------------------------

    def _graphql(self, req: _Request) -> _Answer:
        body = req.json if isinstance(req.json, dict) else {}
        query = body.get("query")
        variables = body.get("variables") or {}
        if not isinstance(query, str) or "closingIssuesReferences" not in query:
            return _Answer(200, {"errors": [{"message": "unsupported by this test server"}]})
        try:
            owner, name, number = variables["owner"], variables["name"], int(variables["number"])
        except (KeyError, TypeError, ValueError):
            return _Answer(
                200,
                {"errors": [{"message": "variables owner, name and number are required"}]},
            )
        assert req.token is not None
        full_name = f"{owner}/{name}"
        repo = self._covered(req.token, full_name)
        if repo is None:
            return _Answer(
                200,
                {
                    "data": {"repository": None},
                    "errors": [
                        {
                            "type": "NOT_FOUND",
                            "path": ["repository"],
                            "locations": [{"line": 1, "column": 1}],
                            "message": f"Could not resolve to a Repository with the name "
                            f"'{full_name}'.",
                        }
                    ],
                },
            )
        self._need(req, "read", "pull_requests")
        with self._lock:
            pull = self._pulls.get((repo.full_name.lower(), number))
            if pull is None:
                return _Answer(
                    200,
                    {
                        "data": {"repository": {"pullRequest": None}},
                        "errors": [
                            {
                                "type": "NOT_FOUND",
                                "path": ["repository", "pullRequest"],
                                "locations": [{"line": 1, "column": 1}],
                                "message": "Could not resolve to a PullRequest with the number "
                                f"of {number}.",
                            }
                        ],
                    },
                )
            nodes = []
            for issue_number in pull.closing_issues:
                node: JSON = {
                    "number": issue_number,
                    "repository": {"nameWithOwner": repo.full_name},
                }
                issue = self._issues.get((repo.full_name.lower(), issue_number))
                # Fields beyond number and repository come only when the query names them.
                if issue is not None:
                    extra = {
                        "title": issue["title"],
                        "state": issue["state"].upper(),
                        "url": issue["html_url"],
                        "body": issue["body"] or "",
                    }
                    for key, value in extra.items():
                        if re.search(rf"\b{key}\b", query):
                            node[key] = value
                nodes.append(node)
        connection: JSON = {"nodes": nodes}
        if re.search(r"\btotalCount\b", query):
            connection["totalCount"] = len(nodes)
        data = {"repository": {"pullRequest": {"closingIssuesReferences": connection}}}
        return _Answer(200, {"data": data})
