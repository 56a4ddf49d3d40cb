"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol.

It answers ``POST /v1/chat/completions`` from a script: a queue of scripted replies (text,
tool calls, an HTTP error status with headers such as ``retry-after``, a delay before
answering), and records every request it receives so tests can read what the client sent.
It is a plain ``ThreadingHTTPServer`` so that it starts in milliseconds and a slow reply does
not hold up the next request.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

API_KEY = "sk-test-7f3a9c-do-not-leak"


@dataclass(frozen=True)
class ScriptedCall:
    """A tool call the scripted model makes; a ``str`` argument is sent verbatim (it may be
    malformed JSON), a mapping is JSON-encoded."""

    name: str
    arguments: str | Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Scripted:
    """One scripted answer. ``status`` other than 200 answers an OpenAI-style error body;
    ``repeat`` keeps the answer at the head of the queue forever."""

    text: str | None = None
    tool_calls: tuple[ScriptedCall, ...] = ()
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    finish_reason: str | None = None
    total_tokens: int | None = None
    error: str = "scripted failure"
    raw_body: str | None = None
    repeat: bool = False


def reply(text: str, **kwargs: Any) -> Scripted:
    return Scripted(text=text, **kwargs)


def call(name: str, arguments: str | Mapping[str, Any] | None = None, **kwargs: Any) -> Scripted:
    """An answer holding one tool call."""
    return Scripted(tool_calls=(ScriptedCall(name, arguments or {}),), **kwargs)


def failure(status: int, **kwargs: Any) -> Scripted:
    return Scripted(status=status, **kwargs)


@dataclass(frozen=True)
class Recorded:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def protocol_error(body: Mapping[str, Any]) -> str:
    """What is wrong with a request's conversation, as OpenAI checks it: a model, messages with
    known roles, and an answer (a ``tool`` message) to every tool call before anything else."""
    if not body.get("model"):
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty array"
    open_calls: set[str] = set()
    for message in messages:
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"invalid role {role!r}"
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                return "a tool message must answer a tool call of the assistant message before it"
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            return (
                "an assistant message with tool_calls must be followed by a tool message for each"
            )
        if role == "assistant":
            open_calls = {c["id"] for c in message.get("tool_calls") or []}
    if open_calls:
        return "the tool calls of the last assistant message have no tool messages"
    return ""


class OpenAIServer:
    """The server, its script and its record of requests; use as a context manager.

    ``supports_n`` False makes it answer one choice whatever ``n`` asks for, as many
    OpenAI-compatible servers do."""

    def __init__(self, supports_n: bool = True) -> None:
        self.supports_n = supports_n
        self.requests: list[Recorded] = []
        self._script: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        # Handler threads of replies a client gave up on must not delay the test's end.
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits for the next poll, and tests start many servers.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *answers: Scripted) -> None:
        with self._lock:
            self._script.extend(answers)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests]

    def __enter__(self) -> OpenAIServer:
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

    # --- answering ------------------------------------------------------------------------

    def _next(self, wanted: int) -> list[Scripted]:
        """The answers for one request: one, or up to ``wanted`` text answers as choices."""
        with self._lock:
            if not self._script:
                return []
            first = self._script[0] if self._script[0].repeat else self._script.popleft()
            taken = [first]
            mergeable = first.status == 200 and first.raw_body is None and not first.repeat
            while mergeable and self.supports_n and len(taken) < wanted and self._script:
                following = self._script[0]
                if following.status != 200 or following.raw_body is not None or following.repeat:
                    break
                taken.append(self._script.popleft())
            return taken

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], str, float]:
        problem = protocol_error(body)
        if problem:
            # OpenAI refuses such conversations too; the client must never send one.
            refused = {"error": {"message": problem, "type": "invalid_request_error"}}
            return 400, {}, json.dumps(refused), 0.0
        wanted = body.get("n") or 1
        answers = self._next(int(wanted))
        if not answers:
            # Not retried, so an under-scripted test fails at once with this message.
            error = {"error": {"message": "script exhausted", "type": "server_error"}}
            return 500, {"x-should-retry": "false"}, json.dumps(error), 0.0
        first = answers[0]
        headers = dict(first.headers)
        if first.raw_body is not None:
            return first.status, headers, first.raw_body, first.delay_s
        if first.status != 200:
            failed: dict[str, Any] = {"message": first.error, "type": "scripted", "code": None}
            return first.status, headers, json.dumps({"error": failed}), first.delay_s
        choices = [self._choice(i, answer) for i, answer in enumerate(answers)]
        prompt_tokens = len(json.dumps(body.get("messages", []))) // 4
        completion_tokens = sum(len(a.text or "") // 4 + 10 * len(a.tool_calls) for a in answers)
        total = sum(a.total_tokens for a in answers if a.total_tokens is not None)
        if not any(a.total_tokens is not None for a in answers):
            total = prompt_tokens + completion_tokens
        completion = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": max(total - prompt_tokens, 0),
                "total_tokens": total,
            },
        }
        delay = max(a.delay_s for a in answers)
        return 200, headers, json.dumps(completion), delay

    def _choice(self, index: int, answer: Scripted) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": answer.text}
        if answer.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id or f"call_{next(self._ids)}",
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": c.arguments
                        if isinstance(c.arguments, str)
                        else json.dumps(dict(c.arguments)),
                    },
                }
                for c in answer.tool_calls
            ]
        finish = answer.finish_reason or ("tool_calls" if answer.tool_calls else "stop")
        return {"index": index, "message": message, "finish_reason": finish, "logprobs": None}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                with server._lock:
                    server.requests.append(
                        Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {}, json.dumps({"error": {"message": "no such route"}}))
                    return
                status, headers, text, delay = server._answer(body)
                if delay:
                    time.sleep(delay)
                self._send(status, headers, text)

            def _send(self, status: int, headers: Mapping[str, str], text: str) -> None:
                data = text.encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left; nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output quiet

        return Handler


def tool_outputs(server: OpenAIServer) -> list[str]:
    """The tool messages of the last request: every answer the agent gave the model."""
    messages = server.bodies[-1]["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]
