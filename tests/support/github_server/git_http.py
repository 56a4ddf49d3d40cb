"""git's smart HTTP protocol (fetch only), through the real ``git http-backend``."""

from __future__ import annotations

import base64
import re
import subprocess
from urllib.parse import unquote

from tests.support.github_server.oauth import OAuthRoutes
from tests.support.github_server.records import (
    PERMISSION_LEVELS,
    _Answer,
    _git_env,
    _git_error,
    _http_backend,
    _Request,
)


class GitHttp(OAuthRoutes):
    """git's smart HTTP protocol (fetch only), through the real ``git http-backend``."""

    # --- git smart HTTP -------------------------------------------------------------------

    def _git_http(self, req: _Request) -> _Answer:
        match = re.fullmatch(
            r"/git/(?P<owner>[^/]+)/(?P<repo>[^/]+?)(?:\.git)?/(?P<rest>.*)", req.path
        )
        if match is None:
            raise _git_error(404, "Repository not found.")
        rest = match["rest"]
        service = req.query.get("service")
        if rest == "info/refs" and req.method == "GET" and service:
            wanted = service
        elif rest in ("git-upload-pack", "git-receive-pack") and req.method == "POST":
            wanted = rest
        else:
            raise _git_error(404, "Repository not found.")
        scheme, _, credential = req.headers.get("authorization", "").partition(" ")
        token = None
        user = ""
        if scheme.lower() == "basic":
            try:
                user, _, password = base64.b64decode(credential.strip()).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                password = ""
            token = self._token_for(password)
        if token is None:
            raise _git_error(
                401,
                "Invalid username or token. Password authentication is not supported for Git "
                "operations.",
                {"www-authenticate": 'Basic realm="GitHub"'},
            )
        repo = self._covered(token, f"{unquote(match['owner'])}/{unquote(match['repo'])}")
        if repo is None:
            raise _git_error(404, "Repository not found.")
        if wanted != "git-upload-pack":
            raise _git_error(403, f"Permission to {repo.full_name}.git denied to {user}.")
        contents = token.permissions.get("contents", "none")
        if PERMISSION_LEVELS.get(contents, 0) < 1:
            raise _git_error(403, f"Permission to {repo.full_name}.git denied to {user}.")
        bare = self.bare_path(repo.full_name)
        if not bare.is_dir():
            raise _git_error(404, "Repository not found.")
        env = _git_env()
        env.update(
            {
                "GIT_PROJECT_ROOT": str(self.git_root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "PATH_INFO": f"/{repo.owner}/{repo.name}.git/{rest}",
                "QUERY_STRING": req.query_string,
                "REQUEST_METHOD": req.method,
                "CONTENT_TYPE": req.headers.get("content-type", ""),
                "REMOTE_USER": user or "x-access-token",
                "REMOTE_ADDR": "127.0.0.1",
                "GIT_HTTP_MAX_REQUEST_BUFFER": "100M",
                # Clients fetch pull request heads and other commits by sha.
                "GIT_CONFIG_COUNT": "4",
                "GIT_CONFIG_KEY_0": "uploadpack.allowReachableSHA1InWant",
                "GIT_CONFIG_VALUE_0": "true",
                "GIT_CONFIG_KEY_1": "uploadpack.allowAnySHA1InWant",
                "GIT_CONFIG_VALUE_1": "true",
                "GIT_CONFIG_KEY_2": "uploadpack.allowFilter",
                "GIT_CONFIG_VALUE_2": "true",
                "GIT_CONFIG_KEY_3": "safe.directory",
                "GIT_CONFIG_VALUE_3": "*",
            }
        )
        if req.method == "POST":
            env["CONTENT_LENGTH"] = str(len(req.body))
        if "content-encoding" in req.headers:
            env["HTTP_CONTENT_ENCODING"] = req.headers["content-encoding"]
        if "git-protocol" in req.headers:
            env["HTTP_GIT_PROTOCOL"] = req.headers["git-protocol"]
        with subprocess.Popen(
            [str(_http_backend())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        ) as proc:
            try:
                out, err = proc.communicate(req.body, timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise _git_error(504, "git http-backend took too long") from None
        ends = [i for i in (out.find(b"\r\n\r\n"), out.find(b"\n\n")) if i >= 0]
        if not ends:
            message = err.decode("utf-8", "replace") or "git http-backend failed"
            raise _git_error(500, message)
        end = min(ends)
        head = out[:end].decode("latin-1")
        payload = out[end + (4 if out.startswith(b"\r\n\r\n", end) else 2) :]
        status = 200
        headers: dict[str, str] = {}
        content_type = "application/octet-stream"
        for line in head.splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name.lower() == "content-type":
                content_type = value.strip()
            elif name:
                headers[name.strip().lower()] = value.strip()
        return _Answer(
            status, raw=payload, content_type=content_type, headers=headers, resource=None
        )
