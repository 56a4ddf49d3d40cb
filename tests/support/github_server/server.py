"""The server itself: state set-up, lifecycle, routing and the HTTP side."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import time
import uuid
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.github_server.oauth import OAUTH_PREFIX, OAuthState
from tests.support.github_server.records import (
    _REPO,
    API_PREFIX,
    DOCS,
    GRAPHQL_PATH,
    JSON,
    RATE_LIMIT,
    Call,
    _Answer,
    _Fault,
    _HttpError,
    _Installation,
    _not_found,
    _now_iso,
    _Pull,
    _Repo,
    _Request,
    _Route,
    _Token,
)
from tests.support.github_server.scenario import Scenario


class GitHubServer(Scenario):
    """GitHub for one App, with its installations, repositories and their issues, pull
    requests, comments, labels and check runs; use as a context manager.

    ``public_key_pem`` verifies the App's JWTs; bare repositories served over git are found at
    ``git_root/owner/repo.git``; installation tokens live ``token_ttl_s`` seconds."""

    def __init__(
        self,
        app_id: int,
        public_key_pem: bytes,
        git_root: Path,
        app_slug: str = "reprobot",
        token_ttl_s: int = 3600,
    ) -> None:
        self.app_id = app_id
        self.app_slug = app_slug
        self.git_root = Path(git_root)
        self.token_ttl_s = token_ttl_s
        public_key = serialization.load_pem_public_key(public_key_pem)
        if not isinstance(public_key, rsa.RSAPublicKey):
            raise ValueError("an App's key is an RSA key")
        self._public_key = public_key
        self._lock = threading.RLock()
        self._ids = itertools.count(1000)
        self._started_at = _now_iso()
        self._installations: dict[int, _Installation] = {}
        self._repos: dict[str, _Repo] = {}  # lower-cased full name -> repo
        self._forks: dict[str, JSON] = {}  # repository objects of unregistered head repos
        self._issues: dict[tuple[str, int], JSON] = {}
        self._issue_labels: dict[tuple[str, int], list[str]] = {}  # lower-cased label names
        self._pulls: dict[tuple[str, int], _Pull] = {}
        self._comments: dict[int, tuple[str, int, JSON]] = {}  # id -> (repo key, number, obj)
        self._check_runs: dict[int, tuple[str, JSON]] = {}
        self._check_suites: dict[tuple[str, str], int] = {}
        self._tokens: dict[str, _Token] = {}
        self._user_ids: dict[str, int] = {}
        self._rate_used: dict[str, int] = {}
        self._rate_reset: dict[str, int] = {}
        self._faults: list[_Fault] = []
        self._manifest_codes: dict[str, JSON] = {}
        self._calls: list[Call] = []
        self._oauth = OAuthState()
        self._routes = self._route_table()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        # Handler threads of clients that gave up, or keep a connection open, must not delay
        # the test's end.
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits for the next poll, and tests start many servers.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # --- lifecycle ------------------------------------------------------------------------

    def __enter__(self) -> GitHubServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # --- requests -------------------------------------------------------------------------

    def _route_table(self) -> list[tuple[str, re.Pattern[str], _Route, bool]]:
        """(method, pattern, handler, authenticated by an App JWT) for each REST route."""
        table: list[tuple[str, str, _Route, bool]] = [
            ("GET", r"/app", self._get_app, True),
            ("GET", r"/app/installations/(?P<id>\d+)", self._get_installation, True),
            (
                "POST",
                r"/app/installations/(?P<id>\d+)/access_tokens",
                self._create_token,
                True,
            ),
            ("GET", _REPO + r"/installation", self._get_repo_installation, True),
            ("GET", _REPO, self._get_repo, False),
            ("GET", _REPO + r"/branches/(?P<branch>.+)", self._get_branch, False),
            ("GET", _REPO + r"/contents(?:/(?P<path>.*))?", self._get_contents, False),
            ("GET", _REPO + r"/issues/(?P<number>\d+)", self._get_issue, False),
            ("GET", _REPO + r"/issues/(?P<number>\d+)/comments", self._list_comments, False),
            ("POST", _REPO + r"/issues/(?P<number>\d+)/comments", self._create_comment, False),
            ("GET", _REPO + r"/issues/comments/(?P<id>\d+)", self._get_comment, False),
            ("PATCH", _REPO + r"/issues/comments/(?P<id>\d+)", self._update_comment, False),
            ("GET", _REPO + r"/labels", self._list_labels, False),
            ("GET", _REPO + r"/labels/(?P<name>[^/]+)", self._get_label, False),
            ("POST", _REPO + r"/labels", self._create_label, False),
            ("GET", _REPO + r"/issues/(?P<number>\d+)/labels", self._list_issue_labels, False),
            ("POST", _REPO + r"/issues/(?P<number>\d+)/labels", self._add_labels, False),
            ("PUT", _REPO + r"/issues/(?P<number>\d+)/labels", self._set_labels, False),
            (
                "DELETE",
                _REPO + r"/issues/(?P<number>\d+)/labels/(?P<name>[^/]+)",
                self._delete_label,
                False,
            ),
            ("GET", _REPO + r"/pulls/(?P<number>\d+)", self._get_pull, False),
            ("POST", _REPO + r"/check-runs", self._create_check_run, False),
            ("GET", _REPO + r"/check-runs/(?P<id>\d+)", self._get_check_run, False),
            ("PATCH", _REPO + r"/check-runs/(?P<id>\d+)", self._update_check_run, False),
            (
                "GET",
                _REPO + r"/collaborators/(?P<user>[^/]+)/permission",
                self._get_permission,
                False,
            ),
        ]
        return [(m, re.compile(p + r"/?"), h, jwt_auth) for m, p, h, jwt_auth in table]

    def _dispatch(self, req: _Request) -> _Answer:
        fault = self._take_fault(req)
        if fault is not None:
            if fault.after:
                self._carry_out(req)
            body = fault.body or {
                "message": HTTPStatus(fault.status).phrase,
                "documentation_url": DOCS,
            }
            return _Answer(fault.status, body, dict(fault.headers), delay_s=fault.delay_s)
        return self._carry_out(req)

    def _carry_out(self, req: _Request) -> _Answer:
        try:
            if req.path.startswith("/git/"):
                return self._git_http(req)
            if req.path.rstrip("/") == GRAPHQL_PATH and req.method == "POST":
                self._authenticate(req)
                answer = self._graphql(req)
                answer.resource = "graphql"
                return answer
            if req.path.startswith(OAUTH_PREFIX):
                return self._oauth_web(req)
            if req.path.startswith(API_PREFIX + "/"):
                # A user's token (the App's user authorization) asks what its user may see.
                return self._as_user(req) or self._rest(req)
            raise _not_found()
        except _HttpError as error:
            return error.answer()

    def _take_fault(self, req: _Request) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.method in ("*", req.method) and fault.pattern.search(req.path):
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _rest(self, req: _Request) -> _Answer:
        route = req.path[len(API_PREFIX) :]
        by_id = re.fullmatch(r"/repositories/(\d+)(/.*)?", route)
        if by_id:
            # GitHub's Link headers point at /repositories/{id}/...; both spellings work.
            with self._lock:
                repo = next((r for r in self._repos.values() if r.id == int(by_id[1])), None)
            if repo is None:
                raise _not_found()
            route = f"/repos/{repo.full_name}{by_id[2] or ''}"
        conversion = re.fullmatch(r"/app-manifests/([^/]+)/conversions", route)
        if conversion and req.method == "POST":
            # The manifest flow's last step needs no authentication: the code is the secret.
            return self._convert_manifest(conversion[1])
        for method, pattern, handler, jwt_auth in self._routes:
            match = pattern.fullmatch(route)
            if match is None or method != req.method:
                continue
            if jwt_auth:
                self._verify_jwt(req)
            else:
                self._authenticate(req)
            return handler(req, match)
        raise _not_found()

    def _convert_manifest(self, code: str) -> _Answer:
        with self._lock:
            app = self._manifest_codes.pop(code, None)
        if app is None:
            raise _not_found()
        return _Answer(201, app)

    # --- the HTTP side --------------------------------------------------------------------

    def _response_headers(self, req: _Request, answer: _Answer, body: bytes) -> dict[str, str]:
        headers = {"x-github-request-id": self._request_id()}
        if answer.resource is not None:
            credential = req.headers.get("authorization", "anonymous")
            with self._lock:
                used = self._rate_used.get(credential, 0) + 1
                self._rate_used[credential] = used
                reset = self._rate_reset.setdefault(credential, int(time.time()) + 3600)
            headers.update(
                {
                    "x-ratelimit-limit": str(RATE_LIMIT),
                    "x-ratelimit-remaining": str(max(RATE_LIMIT - used, 0)),
                    "x-ratelimit-used": str(used),
                    "x-ratelimit-reset": str(reset),
                    "x-ratelimit-resource": answer.resource,
                    "x-github-media-type": "github.v3; format=json",
                    "x-github-api-version-selected": req.headers.get(
                        "x-github-api-version", "2022-11-28"
                    ),
                }
            )
            if req.method == "GET" and answer.status == 200:
                headers["cache-control"] = "private, max-age=60, s-maxage=60"
                headers["vary"] = "Accept, Authorization, Cookie, X-GitHub-OTP, Accept-Encoding"
                headers["etag"] = f'W/"{hashlib.sha256(body).hexdigest()}"'
        headers.update(answer.headers)
        return headers

    @staticmethod
    def _request_id() -> str:
        raw = uuid.uuid4().hex.upper()
        return f"{raw[:4]}:{raw[4:9]}:{raw[9:16]}:{raw[16:23]}:{raw[23:31]}"

    def _record(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive as on GitHub; every answer has a content-length.
            protocol_version = "HTTP/1.1"
            # Idle keep-alive connections end after a while instead of holding a thread.
            timeout = 60
            # Headers and body go out in two writes; with Nagle's algorithm the second waits
            # for the client's delayed ACK, 40 ms a request on a kept-alive connection.
            disable_nagle_algorithm = True

            def version_string(self) -> str:
                return "GitHub.com"

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def do_PATCH(self) -> None:
                self._handle()

            def do_PUT(self) -> None:
                self._handle()

            def do_DELETE(self) -> None:
                self._handle()

            def _read_body(self) -> bytes:
                if "chunked" in self.headers.get("transfer-encoding", "").lower():
                    # git sends large fetch negotiations chunked.
                    chunks: list[bytes] = []
                    while True:
                        size = int(self.rfile.readline(65537).split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                                pass
                            return b"".join(chunks)
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline(65537)
                length = int(self.headers.get("content-length") or 0)
                return self.rfile.read(length) if length else b""

            def _handle(self) -> None:
                started = time.monotonic()
                url = urlsplit(self.path)
                headers = {k.lower(): v for k, v in self.headers.items()}
                body = self._read_body()
                parsed: Any = None
                is_git = url.path.startswith("/git/")
                if body and not is_git:
                    try:
                        parsed = json.loads(body)
                    except ValueError:
                        parsed = None
                req = _Request(
                    self.command,
                    url.path,
                    url.query,
                    dict(parse_qsl(url.query, keep_blank_values=True)),
                    headers,
                    body,
                    parsed,
                )
                if body and not is_git and parsed is None:
                    problem = {"message": "Problems parsing JSON", "documentation_url": DOCS}
                    answer = _Answer(400, problem)
                else:
                    answer = server._dispatch(req)
                if answer.delay_s:
                    time.sleep(answer.delay_s)
                if answer.raw is not None:
                    data = answer.raw
                elif answer.body is None:
                    data = b""
                else:
                    data = json.dumps(answer.body).encode()
                out_headers = server._response_headers(req, answer, data)
                status = answer.status
                if (
                    status == 200
                    and req.method == "GET"
                    and answer.resource is not None
                    and headers.get("if-none-match") == out_headers.get("etag")
                ):
                    status, data = 304, b""
                # Recorded before the answer goes out, so that a client that has its answer
                # finds the call in ``calls``.
                server._record(
                    Call(
                        req.method,
                        url.path,
                        req.query,
                        status,
                        parsed,
                        headers,
                        started,
                        time.monotonic(),
                    )
                )
                try:
                    self.send_response(status)
                    if data or status not in (204, 304):
                        self.send_header("content-type", answer.content_type)
                    self.send_header("content-length", str(len(data)))
                    for key, value in out_headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client timed out and left

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output quiet

        return Handler
