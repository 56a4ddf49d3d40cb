"""A real headless Chromium (Debian's ``chromium``), driven over the DevTools protocol.

Enough of the protocol for page tests: open a page at a given width, collect what a reader's
browser would complain about (console errors, uncaught exceptions, blocked content, dialogs),
every request the page made, its text, and a screenshot."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

_LISTENING = re.compile(rb"DevTools listening on (ws://\S+)")


def chromium_path() -> str:
    """Chromium's executable; the project's setup installs Debian's package, so a machine
    without one fails the test rather than skipping it."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(
        "no Chromium on this machine: run scripts/setup.sh, which installs Debian's chromium"
    )


@dataclass
class PageLoad:
    """What one load of a page showed and did."""

    text: str
    title: str
    requests: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


class Tab:
    """One page target, over its own DevTools connection."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        call = next(self._ids)
        self._ws.send(json.dumps({"id": call, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self._ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == call:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        self.events.append(message)
        if message.get("method") == "Page.javascriptDialogOpening":
            # A dialog blocks the page; dismiss it (and the test reports it).
            self._ws.send(
                json.dumps(
                    {
                        "id": next(self._ids),
                        "method": "Page.handleJavaScriptDialog",
                        "params": {"accept": False},
                    }
                )
            )

    def wait_for(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        seen = next((e for e in self.events if e.get("method") == method), None)
        deadline = time.monotonic() + timeout
        while seen is None:
            message = json.loads(self._ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if "id" not in message:
                self._event(message)
                if message.get("method") == method:
                    seen = message
        return seen

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def load(self, url: str, width: int, height: int, mobile: bool = False) -> PageLoad:
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=mobile,
        )
        self.events.clear()
        self.send("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        # Late console messages and requests of the page's script, if any.
        self.evaluate("new Promise(r => setTimeout(r, 300))")
        load = PageLoad(
            text=self.evaluate("document.body.innerText"), title=self.evaluate("document.title")
        )
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Network.requestWillBeSent":
                load.requests.append(params["request"]["url"])
            elif method == "Runtime.exceptionThrown":
                load.problems.append(f"exception: {params['exceptionDetails'].get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                load.problems.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                load.problems.append(f"log: {params['entry'].get('text')}")
            elif method == "Page.javascriptDialogOpening":
                load.dialogs.append(str(params.get("message")))
        return load

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))


class Chromium:
    """A headless Chromium with a profile of its own; ``tab()`` opens a page."""

    def __init__(self, profile: Path) -> None:
        self._proc = subprocess.Popen(
            [
                chromium_path(),
                "--headless=new",
                "--no-sandbox",  # tests run as root, where Chromium's own sandbox cannot start
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert self._proc.stderr is not None
        deadline = time.monotonic() + 60
        seen = b""
        while time.monotonic() < deadline:
            line = self._proc.stderr.readline()
            if not line and self._proc.poll() is not None:
                break
            seen += line
            match = _LISTENING.search(line)
            if match:
                self._endpoint = match.group(1).decode()
                break
        else:
            self.close()
            raise RuntimeError(f"Chromium did not start: {seen[-2000:]!r}")
        if not hasattr(self, "_endpoint"):
            raise RuntimeError(f"Chromium exited: {seen[-2000:]!r}")
        self._connections = contextlib.ExitStack()
        self._browser = self._connections.enter_context(
            connect(self._endpoint, max_size=None, open_timeout=30)
        )
        self._calls = itertools.count(1)

    def tab(self) -> Tab:
        call = next(self._calls)
        self._browser.send(
            json.dumps(
                {"id": call, "method": "Target.createTarget", "params": {"url": "about:blank"}}
            )
        )
        while True:
            message = json.loads(self._browser.recv(timeout=30))
            if message.get("id") == call:
                target = message["result"]["targetId"]
                break
        base = self._endpoint.split("/devtools/")[0]
        ws = self._connections.enter_context(
            connect(f"{base}/devtools/page/{target}", max_size=None, open_timeout=30)
        )
        return Tab(ws)

    def close(self) -> None:
        if hasattr(self, "_connections"):
            self._connections.close()
        self._proc.terminate()
        try:
            self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
