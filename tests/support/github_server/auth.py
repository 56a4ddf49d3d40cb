"""Authentication (App JWTs, installation tokens and their narrowing) and the App's routes."""

from __future__ import annotations

import copy
import re
import secrets
import time
from urllib.parse import unquote

import jwt

from tests.support.github_server.base import ServerBase
from tests.support.github_server.records import (
    _TOKEN_ALPHABET,
    JSON,
    NOT_ACCESSIBLE,
    PERMISSION_LEVELS,
    _Answer,
    _HttpError,
    _Installation,
    _iso,
    _not_found,
    _Repo,
    _Request,
    _Token,
)


class AuthRoutes(ServerBase):
    """Authentication (App JWTs, installation tokens and their narrowing) and the App's routes."""

    # --- authentication -------------------------------------------------------------------

    def _verify_jwt(self, req: _Request) -> None:
        scheme, _, credential = req.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not credential:
            raise _HttpError(401, "A JSON web token could not be decoded")
        try:
            claims = jwt.decode(
                credential.strip(),
                self._public_key,
                algorithms=["RS256"],
                options={"require": ["exp", "iat", "iss"], "verify_iss": False},
            )
        except jwt.ExpiredSignatureError as exc:
            raise _HttpError(
                401,
                "'Expiration time' claim ('exp') must be a numeric value representing the "
                "future time at which the assertion expires",
            ) from exc
        except jwt.PyJWTError as exc:
            raise _HttpError(401, "A JSON web token could not be decoded") from exc
        if str(claims["iss"]) != str(self.app_id):
            # Another App's JWT: GitHub would check it against that App's key.
            raise _HttpError(401, "A JSON web token could not be decoded")
        if int(claims["exp"]) - int(claims["iat"]) > 600:
            raise _HttpError(401, "'Expiration time' claim ('exp') is too far in the future")

    def _token_for(self, credential: str) -> _Token | None:
        with self._lock:
            token = self._tokens.get(credential)
        if token is None or token.expires <= time.time():
            return None
        return token

    def _authenticate(self, req: _Request) -> None:
        scheme, _, credential = req.headers.get("authorization", "").partition(" ")
        token = None
        if scheme.lower() in ("token", "bearer"):
            token = self._token_for(credential.strip())
        if token is None:
            raise _HttpError(401, "Bad credentials")
        req.token = token

    def _covered(self, token: _Token, full_name: str) -> _Repo | None:
        """The repository if the token may see it."""
        with self._lock:
            repo = self._repos.get(full_name.lower())
        if repo is None or repo.installation_id != token.installation_id:
            return None
        if token.repositories is not None and repo.full_name.lower() not in token.repositories:
            return None
        return repo

    def _repo_of(self, req: _Request, match: re.Match[str]) -> _Repo:
        assert req.token is not None
        repo = self._covered(req.token, f"{unquote(match['owner'])}/{unquote(match['repo'])}")
        if repo is None:
            # GitHub hides repositories a token cannot see.
            raise _not_found()
        return repo

    @staticmethod
    def _need(req: _Request, level: str, *permissions: str) -> None:
        """Refuse unless the token has ``level`` on one of ``permissions``."""
        assert req.token is not None
        wanted = PERMISSION_LEVELS[level]
        for name in permissions:
            have = req.token.permissions.get(name, "none")
            if name == "metadata":
                have = "read" if have == "none" else have
            if PERMISSION_LEVELS.get(have, 0) >= wanted:
                return
        accepted = "; ".join(f"{name}={level}" for name in permissions)
        raise _HttpError(403, NOT_ACCESSIBLE, headers={"x-accepted-github-permissions": accepted})

    # --- App routes (JWT) -----------------------------------------------------------------

    def _installation_object(self, installation: _Installation) -> JSON:
        api = self.api_url
        return {
            "id": installation.id,
            "client_id": f"Iv23li{self.app_id:014d}",
            "account": self._user(installation.account),
            "repository_selection": "selected",
            "access_tokens_url": f"{api}/app/installations/{installation.id}/access_tokens",
            "repositories_url": f"{api}/installation/repositories",
            "html_url": f"{self.base_url}/settings/installations/{installation.id}",
            "app_id": self.app_id,
            "app_slug": self.app_slug,
            "target_id": self._user_id(installation.account),
            "target_type": "User",
            "permissions": dict(installation.permissions),
            "events": ["check_run", "issue_comment", "issues", "pull_request"],
            "created_at": installation.created_at,
            "updated_at": installation.created_at,
            "single_file_name": None,
            "has_multiple_single_files": False,
            "single_file_paths": [],
            "suspended_by": None,
            "suspended_at": None,
        }

    def _get_app(self, req: _Request, match: re.Match[str]) -> _Answer:
        with self._lock:
            return _Answer(200, self._app_object())

    def _get_installation(self, req: _Request, match: re.Match[str]) -> _Answer:
        with self._lock:
            installation = self._installations.get(int(match["id"]))
            if installation is None:
                raise _not_found()
            return _Answer(200, self._installation_object(installation))

    def _get_repo_installation(self, req: _Request, match: re.Match[str]) -> _Answer:
        with self._lock:
            repo = self._repos.get(f"{unquote(match['owner'])}/{unquote(match['repo'])}".lower())
            if repo is None:
                raise _not_found()
            installation = self._installations[repo.installation_id]
            return _Answer(200, self._installation_object(installation))

    def _create_token(self, req: _Request, match: re.Match[str]) -> _Answer:
        body = req.json if req.json is not None else {}
        if not isinstance(body, dict):
            raise _HttpError(400, "Problems parsing JSON")
        with self._lock:
            installation = self._installations.get(int(match["id"]))
            if installation is None:
                raise _not_found()
            own = [r for r in self._repos.values() if r.installation_id == installation.id]
            names = body.get("repositories")
            ids = body.get("repository_ids")
            selected: list[_Repo] | None = None
            if names is not None or ids is not None:
                selected = []
                for name in names or []:
                    found = [
                        r for r in own if isinstance(name, str) and r.name.lower() == name.lower()
                    ]
                    if not found:
                        raise _HttpError(
                            422,
                            "There is at least one repository that does not exist or is not "
                            "accessible to the parent installation.",
                        )
                    selected.extend(found)
                for repo_id in ids or []:
                    found = [r for r in own if r.id == repo_id]
                    if not found:
                        raise _HttpError(
                            422,
                            "There is at least one repository that does not exist or is not "
                            "accessible to the parent installation.",
                        )
                    selected.extend(found)
            requested = body.get("permissions")
            if requested is None:
                permissions = dict(installation.permissions)
            else:
                if not isinstance(requested, dict):
                    raise _HttpError(422, "Invalid request.\n\npermissions must be an object.")
                for name, level in requested.items():
                    granted = installation.permissions.get(name, "none")
                    if level not in ("read", "write", "admin") or (
                        PERMISSION_LEVELS[level] > PERMISSION_LEVELS.get(granted, 0)
                    ):
                        raise _HttpError(
                            422, "The permissions requested are not granted to this installation."
                        )
                # GitHub adds metadata read to every token.
                permissions = {"metadata": "read", **requested}
            value = "ghs_" + "".join(secrets.choice(_TOKEN_ALPHABET) for _ in range(36))
            expires = time.time() + self.token_ttl_s
            expires_at = _iso(expires)
            record: JSON = {
                "installation_id": installation.id,
                "token": value,
                "expires_at": expires_at,
                "repositories": list(names) if names is not None else None,
                "repository_ids": list(ids) if ids is not None else None,
                "permissions": dict(permissions),
            }
            repo_keys = None
            if selected is not None:
                repo_keys = frozenset(r.full_name.lower() for r in selected)
            self._tokens[value] = _Token(
                value, installation.id, expires, repo_keys, permissions, record
            )
            answer: JSON = {
                "token": value,
                "expires_at": expires_at,
                "permissions": dict(permissions),
                "repository_selection": "all" if selected is None else "selected",
            }
            if selected is not None:
                unique = {r.id: r for r in selected}
                answer["repositories"] = [copy.deepcopy(r.object) for r in unique.values()]
            return _Answer(201, answer)
