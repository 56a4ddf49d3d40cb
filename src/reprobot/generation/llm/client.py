"""The one way drafting talks to an OpenAI-compatible chat-completions endpoint.

``LLMClient`` wraps an ``openai.OpenAI`` client that the caller built (so tests point it at a
local server). Retries with backoff on 429, 5xx and timeouts are the SDK's own, which honour
``retry-after``; whatever still fails becomes an ``LLMError``. A per-issue ``TokenBudget``
stops spending before a request once the issue's tokens or its time for model work are used up.

The API key lives only inside the SDK client; nothing here logs it, and error messages that
quote the server's answer have it scrubbed, in case a proxy echoes the request back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import openai
import structlog

from reprobot.generation.errors import BudgetExhausted, LLMError
from reprobot.settings import Settings

log = structlog.get_logger(__name__)

Message = dict[str, Any]
"""A chat message as the chat-completions API takes it (role, content, tool calls...)."""

_REASON_CHARS = 300
# Some servers omit ``usage``; the budget then counts about four characters per token.
_CHARS_PER_TOKEN = 4


class LLMRequestError(LLMError):
    """A request failed after the SDK's retries; ``status`` is the HTTP status when one came."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        self.status = status
        self.reason = reason
        prefix = f"HTTP {status}: " if status is not None else ""
        super().__init__(f"LLM request failed: {prefix}{reason}")


class TokenBudget:
    """Tokens one issue may spend over all its requests (``usage.total_tokens``), and the wall
    time its model work may take from the budget's creation (``seconds``; None: no bound):
    slow replies must not hold a job for longer than the settings allow."""

    def __init__(
        self,
        limit: int,
        seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.spent = 0
        self.seconds = seconds
        self._clock = clock
        self._started = clock()

    @property
    def remaining(self) -> int:
        return max(self.limit - self.spent, 0) if self.seconds_left() != 0 else 0

    def seconds_left(self) -> float | None:
        """The wall time left for model work (None: no bound)."""
        if self.seconds is None:
            return None
        return max(self.seconds - (self._clock() - self._started), 0.0)

    def check(self) -> None:
        """Raise ``BudgetExhausted`` when nothing is left for another request."""
        if self.spent >= self.limit:
            raise BudgetExhausted(f"token budget spent: {self.spent} of {self.limit} tokens used")
        if self.seconds_left() == 0:
            raise BudgetExhausted(
                f"time budget spent: model work took the {self.seconds:.0f} s this issue may use"
            )

    def charge(self, tokens: int) -> None:
        self.spent += max(tokens, 0)


@dataclass(frozen=True)
class Reply:
    """One choice of a completion: its text and why the model stopped (``length``: cut off)."""

    text: str
    finish_reason: str

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model made. ``arguments`` is the parsed JSON object; when the model sent
    something that is not one, ``error`` says why (to be sent back to the model) and
    ``arguments`` is empty."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str
    error: str = ""


@dataclass(frozen=True)
class ChatTurn:
    """The assistant's side of one step of a tool-using conversation."""

    text: str
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)
    finish_reason: str = "stop"

    def as_message(self) -> Message:
        """The assistant message to append to the conversation before the tool results."""
        message: Message = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.raw_arguments},
                }
                for c in self.tool_calls
            ]
        return message


def parse_arguments(raw: str | None) -> tuple[dict[str, Any], str]:
    """Tool-call arguments as a dict, or ``({}, reason)`` when they are not a JSON object."""
    if raw is None or not raw.strip():
        return {}, ""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return {}, f"the arguments are not valid JSON ({exc}); send one JSON object"
    if not isinstance(value, dict):
        return {}, "the arguments must be one JSON object with the parameters as keys"
    return value, ""


class LLMClient:
    """Chat completions with the model, sampling settings and token budget of one issue."""

    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        *,
        max_tokens: int = 4096,
        temperature: float = 0.7,
        budget: TokenBudget | None = None,
        timeout_s: float | None = None,
        max_retries: int | None = None,
    ) -> None:
        if timeout_s is not None or max_retries is not None:
            options: dict[str, Any] = {}
            if timeout_s is not None:
                options["timeout"] = timeout_s
            if max_retries is not None:
                options["max_retries"] = max_retries
            client = client.with_options(**options)
        self._client = client
        # The per-request timeout set here (None: the SDK client's own): a request's timeout is
        # the shorter of it and the issue's time left.
        self._timeout_s = timeout_s
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.budget = budget if budget is not None else TokenBudget(200_000)
        # None until a request with n > 1 shows whether the server returns n choices.
        self._n_supported: bool | None = None
        # OpenAI's reasoning models refuse "max_tokens"; most compatible servers only know it.
        self._token_param = "max_tokens"

    @classmethod
    def from_settings(cls, client: openai.OpenAI, settings: Settings) -> LLMClient:
        return cls(
            client,
            settings.llm_model,
            max_tokens=settings.llm_max_tokens,
            temperature=settings.llm_temperature,
            budget=TokenBudget(settings.llm_token_budget, settings.llm_time_budget_s or None),
            timeout_s=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
        )

    def for_issue(self) -> LLMClient:
        """The same endpoint and settings with a fresh budget of the same size (the SDK client,
        and its connection pool, are shared)."""
        twin = LLMClient(
            self._client,
            self.model,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            budget=TokenBudget(self.budget.limit, self.budget.seconds),
        )
        twin._timeout_s = self._timeout_s
        twin._n_supported = self._n_supported
        twin._token_param = self._token_param
        return twin

    def __repr__(self) -> str:
        # Spelled out so that no default repr ever walks into the SDK client and its key.
        return f"LLMClient(model={self.model!r}, budget={self.budget.spent}/{self.budget.limit})"

    # --- requests ---------------------------------------------------------------------------

    def complete(
        self, messages: Sequence[Message], n: int = 1, temperature: float | None = None
    ) -> list[str]:
        """Up to ``n`` sampled replies' texts (see ``replies``)."""
        return [r.text for r in self.replies(messages, n, temperature)]

    def replies(
        self, messages: Sequence[Message], n: int = 1, temperature: float | None = None
    ) -> list[Reply]:
        """``n`` sampled replies: one request asking for ``n`` choices where the server gives
        them, otherwise one request per reply. Fewer than ``n`` come back only when the budget
        runs out after the first request (later replies are then dropped, not raised)."""
        temp = self.temperature if temperature is None else temperature
        out: list[Reply] = []
        if n > 1 and self._n_supported is not False:
            try:
                out = self._request(messages, temperature=temp, n=n)
            except LLMRequestError as exc:
                # A server that rejects "n" outright: learn it, then sample one at a time (a
                # request that is bad for another reason fails again below and raises there).
                if exc.status not in (400, 422):
                    raise
                self._n_supported = False
            else:
                self._n_supported = len(out) >= n
                out = out[:n]
        while len(out) < n:
            try:
                out.extend(self._request(messages, temperature=temp, n=1)[:1])
            except BudgetExhausted:
                if not out:
                    raise
                break
        return out

    def chat_with_tools(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]],
        temperature: float | None = None,
    ) -> ChatTurn:
        """One assistant turn that may call ``tools`` (OpenAI function tools)."""
        completion = self._create(
            messages,
            temperature=self.temperature if temperature is None else temperature,
            n=1,
            tools=list(tools),
        )
        if not completion.choices:
            raise LLMRequestError("the endpoint answered no choices")
        choice = completion.choices[0]
        calls: list[ToolCall] = []
        for index, raw_call in enumerate(choice.message.tool_calls or []):
            call_id = raw_call.id or f"call_{index}"
            if raw_call.type != "function":
                calls.append(ToolCall(call_id, "", {}, "", "only function tools exist here"))
                continue
            arguments, error = parse_arguments(raw_call.function.arguments)
            calls.append(
                ToolCall(
                    call_id,
                    raw_call.function.name,
                    arguments,
                    raw_call.function.arguments or "",
                    error,
                )
            )
        return ChatTurn(
            text=choice.message.content or "",
            tool_calls=tuple(calls),
            finish_reason=str(choice.finish_reason or "stop"),
        )

    def _request(self, messages: Sequence[Message], *, temperature: float, n: int) -> list[Reply]:
        completion = self._create(messages, temperature=temperature, n=n)
        replies = [
            Reply(c.message.content or "", str(c.finish_reason or "stop"))
            for c in sorted(completion.choices, key=lambda c: c.index)
        ]
        if not replies:
            raise LLMRequestError("the endpoint answered no choices")
        return replies

    def _create(
        self,
        messages: Sequence[Message],
        *,
        temperature: float,
        n: int,
        tools: list[Mapping[str, Any]] | None = None,
    ) -> Any:
        self.budget.check()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": temperature,
            self._token_param: self.max_tokens,
        }
        if n > 1:
            kwargs["n"] = n
        if tools:
            kwargs["tools"] = tools
        left = self.budget.seconds_left()
        if left is not None:
            # No request outlives the issue's time budget.
            kwargs["timeout"] = min(left, self._timeout_s) if self._timeout_s else left
        try:
            try:
                completion = self._client.chat.completions.create(**kwargs)
            except openai.BadRequestError as exc:
                if "max_completion_tokens" not in str(exc.body) or "max_tokens" not in kwargs:
                    raise
                self._token_param = "max_completion_tokens"
                kwargs["max_completion_tokens"] = kwargs.pop("max_tokens")
                completion = self._client.chat.completions.create(**kwargs)
        except openai.APITimeoutError as exc:
            raise LLMRequestError(f"timed out ({self._describe(exc)})") from None
        except openai.APIConnectionError as exc:
            raise LLMRequestError(f"cannot reach the endpoint ({self._describe(exc)})") from None
        except openai.APIStatusError as exc:
            raise LLMRequestError(self._describe(exc), exc.status_code) from None
        except openai.OpenAIError as exc:
            raise LLMRequestError(f"unusable answer ({self._describe(exc)})") from None
        except ValueError as exc:
            # A body that is not JSON at all surfaces as a decode error.
            raise LLMRequestError(f"unusable answer ({self._scrub(str(exc))})") from None
        usage = getattr(completion, "usage", None)
        tokens = getattr(usage, "total_tokens", None) if usage is not None else None
        if not isinstance(tokens, int):
            sent = sum(len(json.dumps(m, default=str)) for m in messages)
            got = sum(len(c.message.content or "") for c in completion.choices)
            tokens = (sent + got) // _CHARS_PER_TOKEN
        self.budget.charge(tokens)
        log.info(
            "llm.completion",
            model=self.model,
            n=n,
            tools=bool(tools),
            tokens=tokens,
            spent=self.budget.spent,
            limit=self.budget.limit,
        )
        return completion

    def _describe(self, exc: openai.OpenAIError) -> str:
        """A short reason from the error, preferring the server's own ``error.message``."""
        text = ""
        body = getattr(exc, "body", None)
        if isinstance(body, Mapping):
            error = body.get("error", body)
            if isinstance(error, Mapping):
                text = str(error.get("message") or "")
            elif isinstance(error, str):
                text = error
        if not text:
            text = getattr(exc, "message", "") or str(exc) or type(exc).__name__
        return self._scrub(" ".join(text.split()))[:_REASON_CHARS]

    def _scrub(self, text: str) -> str:
        key = cast(str | None, getattr(self._client, "api_key", None))
        if isinstance(key, str) and len(key) >= 4:
            text = text.replace(key, "[api key]")
        return text


def make_client(settings: Settings) -> LLMClient | None:
    """The client of the configured endpoint, or None when no LLM is configured."""
    if not settings.llm_enabled:
        return None
    client = openai.OpenAI(
        base_url=settings.llm_base_url,
        # Local OpenAI-compatible servers often need no key, but the SDK insists on one.
        api_key=settings.llm_api_key or "no-key",
    )
    # from_settings sets the timeout and retries, so injected clients get them too.
    return LLMClient.from_settings(client, settings)
