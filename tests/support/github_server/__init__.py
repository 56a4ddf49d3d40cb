"""A real HTTP server on 127.0.0.1 that speaks GitHub's protocols for the calls a GitHub App makes.

It answers REST v3 under ``/api/v3`` (the GitHub Enterprise layout, so clients take it as their
base URL), one GraphQL query (``closingIssuesReferences`` of a pull request) at
``/api/graphql``, and git's smart HTTP protocol (fetch only) under ``/git/{owner}/{repo}.git``
through the real ``git http-backend``. Authentication is checked for real: App JWTs are
verified with PyJWT against the App's public key, installation tokens are issued by
``POST /app/installations/{id}/access_tokens`` and checked on every call, including their
repository and permission narrowing.

Answers carry GitHub's headers (rate limit, request id, media type, and on ``GET`` the
``cache-control: private, max-age=60`` and ``etag`` GitHub sends; ``If-None-Match`` answers
304) and GitHub's error bodies. Objects have the shapes of GitHub's own (as its webhook payloads
show them, completed with the fields githubkit's typed models require) with their URLs
pointing at this server.

Tests set up state with plain methods (``add_repo``, ``add_issue``, ``add_pull``, ...), read
what the client did with ``comments``, ``issue_labels``, ``check_runs``, ``tokens`` and
``calls``, and make the next matching requests fail with ``fail_next`` (or the rate limit and
server error helpers built on it).

Where it differs from GitHub on purpose:

- ``GET .../collaborators/{user}/permission`` answers 200 ``"permission": "none"`` for a user
  who is no collaborator; GitHub answers 404 for such users on private repositories.
- git over HTTP always needs a token, also for public repositories.
- ``add_pull`` and ``set_pull_head`` write ``refs/pull/{n}/head`` into the base repository's
  bare repository (fetching the commit from the head repository's bare repository when that
  exists), as GitHub keeps such a ref; nothing else ever writes to the bare repositories.

The server is built in layers, one module per concern, each class extending the one below it:
``base`` (state, addresses, the objects it builds) ← ``auth`` ← ``repos`` ← ``issues`` ←
``checks`` ← ``graphql`` ← ``git_http`` ← ``scenario`` (what tests do to it) ← ``server``
(lifecycle, routing, the HTTP side). ``records`` holds the constants, records and errors.
"""

from tests.support.github_server.records import (
    COMMENT_BODY_MAX,
    SECONDARY_RATE_LIMIT_MESSAGE,
    Call,
    git_auth_header,
    make_app_key,
    make_bare_repo,
)
from tests.support.github_server.server import GitHubServer

__all__ = [
    "COMMENT_BODY_MAX",
    "SECONDARY_RATE_LIMIT_MESSAGE",
    "Call",
    "GitHubServer",
    "git_auth_header",
    "make_app_key",
    "make_bare_repo",
]
