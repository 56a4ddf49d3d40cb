"""A package index as it stood at a moment, served to pip inside an environment build.

Standard library only, Python 3.9+; imported by ``env_build.py`` in the build container, which
points every pip call (the spec's own install commands, pre-install steps and the isolated build
environments pip makes included) at it. For each project page pip asks for, it fetches the
upstream index's JSON page (PEP 691) and leaves out every file uploaded after the moment
(PEP 700's ``upload-time``): what ``pip install`` could have found on the day of the commit.

Three departures, each recorded and reported:

- a project whose index gives no upload times (an index without PEP 700, or an HTML-only one)
  is served whole: the moment cannot bound it;
- a compiled project that had, at the moment, no wheel for this Python but has one later gets
  its earliest release with such a wheel too. A release of the commit's era would have to be
  compiled from source on a Python newer than the era's, which fails far more often than the
  first build made for this Python differs from it;
- a project with no release at all at the moment (a requirement named later, by a pin of the
  benchmark's or a tool's) gets its first installable release.

A release the build names exactly (``name==1.2``, ``name==1.2.*``) is never hidden: a pin says
which release was meant, whenever it was uploaded.
"""

from __future__ import annotations

import base64
import json
import re
import ssl
import threading
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
_ACCEPT = JSON_TYPE + ", text/html;q=0.1"
_PROJECT = re.compile(r"^/(\d+)/([A-Za-z0-9._-]+)/?$")
_SDIST_SUFFIXES = (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".zip", ".tar")
_MAX_PAGE = 64 * 1024 * 1024

Tag = Tuple[str, str, str]


def parse_time(text: object) -> Optional[datetime]:
    """An ISO 8601 time (``2020-10-28T17:40:12.345Z``) as an aware UTC datetime, or None."""
    if not isinstance(text, str) or not text:
        return None
    value = text.strip().replace("Z", "+00:00")
    # fromisoformat in 3.9 takes at most six fraction digits.
    value = re.sub(r"(\.\d{6})\d+", r"\1", value)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def wheel_tags(filename: str) -> Optional[List[Tag]]:
    """The (interpreter, abi, platform) tags a wheel's file name declares, or None."""
    if not filename.endswith(".whl"):
        return None
    parts = filename[:-4].split("-")
    if len(parts) not in (5, 6):
        return None
    pythons, abis, platforms = parts[-3], parts[-2], parts[-1]
    return [
        (py, abi, plat)
        for py in pythons.split(".")
        for abi in abis.split(".")
        for plat in platforms.split(".")
    ]


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_EXACT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([^\s;,#]+)\s*(?:[;#].*)?$")


def exact_pins(lines: List[str]) -> Dict[str, List[str]]:
    """The releases requirement ``lines`` name exactly (``name==1.2``, ``name[x]==1.2.*``), by
    normalized project name; a line with a range or several specifiers names none."""
    pins: Dict[str, List[str]] = {}
    for line in lines:
        match = _EXACT.match(line)
        if match:
            pins.setdefault(_normalize(match.group(1)), []).append(match.group(2))
    return pins


def file_version(filename: str, project: str) -> Optional[str]:
    """The release a distribution file belongs to, read from its name."""
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        return parts[1] if len(parts) in (5, 6) else None
    for suffix in _SDIST_SUFFIXES:
        if filename.lower().endswith(suffix):
            stem = filename[: -len(suffix)]
            break
    else:
        return None
    # An sdist is NAME-VERSION with NAME spelled as its author liked: split where the
    # normalized prefix equals the project's name.
    wanted = _normalize(project)
    for i, ch in enumerate(stem):
        if ch == "-" and _normalize(stem[:i]) == wanted:
            return stem[i + 1 :] or None
    return None


class Bounded:
    """What bounding one project's page did: the files it hid and what it let through."""

    def __init__(self) -> None:
        self.hidden = 0
        self.unbounded = False
        self.admitted: Optional[str] = None  # a release let through for its wheel
        self.admitted_at: Optional[datetime] = None  # and when it was uploaded
        self.pinned_later: Optional[datetime] = None  # a pinned release uploaded after the moment


def matches(version: str, pattern: str) -> bool:
    """Whether ``version`` is the release ``pattern`` pins (``1.2``, ``1.2.0`` or ``1.2.*``)."""
    if pattern.endswith(".*"):
        return (version + ".").startswith(pattern[:-1])
    return _release_key(version) == _release_key(pattern)


def _release_key(version: str) -> str:
    return re.sub(r"(\.0+)+$", "", version.strip().lower())


def bound_page(
    page: Dict[str, Any],
    project: str,
    moment: datetime,
    compatible: Callable[[Tag], bool],
    pinned: Tuple[str, ...] = (),
) -> Tuple[Dict[str, Any], Bounded]:
    """``page`` (a PEP 691 project page) without the files uploaded after ``moment``.

    ``compatible`` says whether this Python installs a wheel of a tag; ``pinned`` are the
    version patterns the build names exactly, kept whatever their date. A file with no upload
    time is kept; a page none of whose files has one is kept whole (``unbounded``)."""
    files = [f for f in page.get("files", []) if isinstance(f, dict)]
    note = Bounded()
    timed = [(f, parse_time(f.get("upload-time"))) for f in files]
    if files and all(t is None for _, t in timed):
        note.unbounded = True
        return page, note

    def named(file: Dict[str, Any]) -> bool:
        version = file_version(str(file.get("filename", "")), project)
        return version is not None and any(matches(version, p) for p in pinned)

    kept = [f for f, t in timed if t is None or t <= moment or named(f)]
    pinned_later = [t for f, t in timed if t is not None and t > moment and named(f)]
    note.pinned_later = max(pinned_later) if pinned_later else None
    later = [(f, t) for f, t in timed if t is not None and t > moment and not named(f)]
    if not any(_installs(f, compatible, platform_only=False) for f in kept):
        built = [(t, f) for f, t in later if _installs(f, compatible, platform_only=True)]
        if not built and not any(not f.get("yanked") for f in kept):
            # The project had no release yet at the moment (a requirement named later, by a
            # pin of the benchmark's or a tool's): its first installable release stands in.
            built = [
                (t, f)
                for f, t in later
                if _installs(f, compatible, platform_only=False) or _is_sdist(f)
            ]
        if built:
            uploaded, first = min(built, key=lambda pair: pair[0])
            release = file_version(str(first.get("filename", "")), project)
            if release is not None:
                note.admitted = release
                note.admitted_at = uploaded
                kept += [
                    f
                    for f, _ in later
                    if file_version(str(f.get("filename", "")), project) == release
                ]
    note.hidden = len(files) - len(kept)
    out = dict(page)
    out["files"] = kept
    if isinstance(page.get("versions"), list):
        names = {file_version(str(f.get("filename", "")), project) for f in kept}
        out["versions"] = [v for v in page["versions"] if v in names]
    return out, note


def _installs(file: Dict[str, Any], compatible: Callable[[Tag], bool], platform_only: bool) -> bool:
    if file.get("yanked"):
        return False
    tags = wheel_tags(str(file.get("filename", "")))
    if not tags:
        return False
    return any(compatible(tag) and not (platform_only and tag[2] == "any") for tag in tags)


def _is_sdist(file: Dict[str, Any]) -> bool:
    name = str(file.get("filename", "")).lower()
    return not file.get("yanked") and name.endswith(_SDIST_SUFFIXES)


def absolute_urls(page: Dict[str, Any], base: str) -> Dict[str, Any]:
    """``page`` with every file URL absolute: pip resolves relative ones against the proxy."""
    files = []
    for file in page.get("files", []):
        if isinstance(file, dict) and isinstance(file.get("url"), str):
            file = dict(file, url=urllib.parse.urljoin(base, file["url"]))  # noqa: PLW2901
        files.append(file)
    return dict(page, files=files)


def with_base(html: bytes, base: str) -> bytes:
    """An HTML project page with a ``<base>`` naming its upstream address (pip honours it)."""
    if re.search(rb"<base\s", html, re.I):
        return html
    tag = ('<base href="%s">' % base.replace('"', "%22")).encode()
    head = re.search(rb"<head[^>]*>", html, re.I)
    if head:
        return html[: head.end()] + tag + html[head.end() :]
    return tag + html


def this_python() -> Callable[[Tag], bool]:
    """Whether the running interpreter installs a wheel of a tag (pip's own tag list)."""
    from pip._vendor.packaging.tags import sys_tags  # the build venv always has pip

    supported: Set[Tag] = {(t.interpreter, t.abi, t.platform) for t in sys_tags()}
    return lambda tag: tag in supported


def default_index() -> str:
    """The index pip uses when none is configured, as pip itself names it."""
    from pip._internal.models.index import PyPI

    return str(PyPI.simple_url)


def _request(url: str) -> urllib.request.Request:
    parts = urllib.parse.urlsplit(url)
    headers = {"Accept": _ACCEPT, "User-Agent": "reprobot-dated-index"}
    if parts.username is not None:
        # urllib does not send credentials written into the address; pip would.
        user = urllib.parse.unquote(parts.username)
        secret = urllib.parse.unquote(parts.password or "")
        token = base64.b64encode(("%s:%s" % (user, secret)).encode()).decode()
        headers["Authorization"] = "Basic " + token
        netloc = parts.hostname or ""
        if parts.port:
            netloc += ":%d" % parts.port
        url = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    return urllib.request.Request(url, headers=headers)


class DatedIndex:
    """A local index in front of ``upstreams`` (simple-index base addresses), bounded at ``moment``.

    ``urls`` gives the local address standing for each upstream, in the same order."""

    def __init__(
        self,
        upstreams: List[str],
        moment: datetime,
        compatible: Callable[[Tag], bool],
        timeout: float = 60.0,
        cafile: Optional[str] = None,
        pinned: Optional[Dict[str, List[str]]] = None,
    ) -> None:
        self.pinned = {_normalize(k): tuple(v) for k, v in (pinned or {}).items()}
        # The CA bundle pip is given (a local CA in front of the index) must be trusted here too.
        self.context = ssl.create_default_context(cafile=cafile or None)
        self.upstreams = [u if u.endswith("/") else u + "/" for u in upstreams]
        self.moment = moment
        self.compatible = compatible
        self.timeout = timeout
        self.lock = threading.Lock()
        self.unbounded: Set[str] = set()
        self.admitted: Dict[str, str] = {}
        self.admitted_at: Dict[str, datetime] = {}
        self.pinned_later: Dict[str, datetime] = {}
        self.hidden = 0
        self.projects = 0
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                index.serve(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def urls(self) -> List[str]:
        port = self.server.server_address[1]
        return ["http://127.0.0.1:%d/%d/" % (port, i) for i in range(len(self.upstreams))]

    def __enter__(self) -> DatedIndex:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def report(self) -> Dict[str, Any]:
        with self.lock:
            return {
                "projects": self.projects,
                "hidden_files": self.hidden,
                "unbounded": sorted(self.unbounded),
                "admitted": dict(sorted(self.admitted.items())),
                "admitted_at": {k: _stamp(v) for k, v in sorted(self.admitted_at.items())},
                # Releases the build pins exactly that came out after the moment: a pin list made
                # later than the commit (the benchmark's), whose own requirements may be later too.
                "pinned_later": {k: _stamp(v) for k, v in sorted(self.pinned_later.items())},
            }

    def serve(self, handler: BaseHTTPRequestHandler) -> None:
        match = _PROJECT.match(urllib.parse.urlsplit(handler.path).path)
        if match is None or int(match.group(1)) >= len(self.upstreams):
            return _answer(handler, 404, "text/plain", b"not a project page\n")
        project = match.group(2)
        upstream = self.upstreams[int(match.group(1))] + project + "/"
        try:
            opened = urllib.request.urlopen(_request(upstream), timeout=self.timeout, context=self.context)
            with opened as response:
                body = response.read(_MAX_PAGE + 1)
                kind = response.headers.get("Content-Type", "")
                where = response.geturl()
        except urllib.error.HTTPError as exc:
            return _answer(handler, exc.code, "text/plain", str(exc).encode())
        except (OSError, ValueError) as exc:
            return _answer(handler, 502, "text/plain", str(exc).encode())
        if len(body) > _MAX_PAGE:
            return _answer(handler, 502, "text/plain", b"project page too large\n")
        if "json" not in kind:
            # No JSON, so no upload times: pip gets the page as it is, and the report says so.
            with self.lock:
                self.projects += 1
                self.unbounded.add(project)
            return _answer(handler, 200, kind or "text/html", with_base(body, where))
        try:
            page = json.loads(body.decode("utf-8"))
        except ValueError:
            return _answer(handler, 502, "text/plain", b"upstream gave invalid JSON\n")
        if not isinstance(page, dict):
            return _answer(handler, 502, "text/plain", b"upstream gave no project page\n")
        bounded, note = bound_page(
            absolute_urls(page, where),
            project,
            self.moment,
            self.compatible,
            self.pinned.get(_normalize(project), ()),
        )
        with self.lock:
            self.projects += 1
            self.hidden += note.hidden
            if note.unbounded:
                self.unbounded.add(project)
            if note.admitted:
                self.admitted[project] = note.admitted
            if note.admitted_at:
                self.admitted_at[project] = note.admitted_at
            if note.pinned_later:
                self.pinned_later[project] = note.pinned_later
        _answer(handler, 200, JSON_TYPE, json.dumps(bounded).encode())


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _answer(handler: BaseHTTPRequestHandler, status: int, kind: str, body: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
