"""A package index made by a test: a real HTTP server speaking the simple repository API's JSON
form (PEP 691) with upload times (PEP 700), serving wheels the test builds."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def wheel_bytes(name: str, version: str, modules: dict[str, str]) -> bytes:
    """A pure-Python wheel of ``name`` ``version`` holding ``modules`` (path -> source)."""
    dist = f"{re.sub(r'[-.]+', '_', name)}-{version}.dist-info"
    entries = dict(modules)
    entries[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    entries[f"{dist}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = []
    for path, text in entries.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    entries[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in entries.items():
            archive.writestr(path, text)
    return buffer.getvalue()


@dataclass
class _Release:
    filename: str
    data: bytes
    upload_time: str


@dataclass
class PackageIndex:
    """Projects and their files; ``url`` is the index's base once started."""

    releases: dict[str, list[_Release]] = field(default_factory=dict)
    html_only: set[str] = field(default_factory=set)
    requests: list[str] = field(default_factory=list)

    def add_wheel(self, name: str, version: str, modules: dict[str, str], uploaded: str) -> None:
        wheel = f"{re.sub(r'[-.]+', '_', name)}-{version}-py3-none-any.whl"
        project = re.sub(r"[-_.]+", "-", name).lower()
        self.releases.setdefault(project, []).append(
            _Release(wheel, wheel_bytes(name, version, modules), uploaded)
        )

    def page(self, project: str) -> dict[str, Any]:
        return {
            "meta": {"api-version": "1.1"},
            "name": project,
            "files": [
                {
                    # Relative, as many indexes write them: the client resolves them.
                    "filename": r.filename,
                    "url": f"../../files/{r.filename}",
                    "hashes": {"sha256": hashlib.sha256(r.data).hexdigest()},
                    "upload-time": r.upload_time,
                }
                for r in self.releases.get(project, [])
            ],
        }

    def __enter__(self) -> PackageIndex:
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                index.requests.append(self.path)
                index.answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/simple/"

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0]
        simple = re.fullmatch(r"/simple/([^/]+)/?", path)
        if simple and simple.group(1) in self.releases:
            project = simple.group(1)
            if project in self.html_only:
                links = "".join(
                    f'<a href="../../files/{r.filename}">{r.filename}</a>'
                    for r in self.releases[project]
                )
                body = f"<html><head></head><body>{links}</body></html>".encode()
                return _send(handler, "text/html", body)
            return _send(handler, JSON_TYPE, json.dumps(self.page(project)).encode())
        found = re.fullmatch(r"/files/([^/]+)", path)
        for releases in self.releases.values():
            for release in releases:
                if found and release.filename == found.group(1):
                    return _send(handler, "application/octet-stream", release.data)
        handler.send_error(404)


def _send(handler: BaseHTTPRequestHandler, kind: str, body: bytes) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
