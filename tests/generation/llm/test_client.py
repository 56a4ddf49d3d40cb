"""LLMClient against a real local chat-completions server: replies, sampling, retries, timeouts,
the token budget, tool calls, and the API key staying out of everything but the auth header."""

from __future__ import annotations

import logging
import socket
import time
from typing import Any

import openai
import pytest
import structlog
from structlog.testing import capture_logs

from reprobot.generation.errors import BudgetExhausted, LLMError
from reprobot.generation.llm.client import LLMClient, LLMRequestError, TokenBudget, make_client
from reprobot.settings import Settings
from tests.support.openai_server import API_KEY, OpenAIServer, Scripted, call, failure, reply

USER = [{"role": "user", "content": "write a test"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "grep",
            "description": "find text",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        },
    }
]


def client_for(
    server: OpenAIServer,
    *,
    timeout_s: float = 5.0,
    max_retries: int = 2,
    budget: int = 1_000_000,
    base_url: str | None = None,
) -> LLMClient:
    sdk = openai.OpenAI(base_url=base_url or server.url, api_key=API_KEY)
    return LLMClient(
        sdk,
        "scripted-model",
        max_tokens=512,
        temperature=0.5,
        budget=TokenBudget(budget),
        timeout_s=timeout_s,
        max_retries=max_retries,
    )


def test_complete_sends_model_settings_and_the_key_as_bearer(openai_server: OpenAIServer) -> None:
    openai_server.script(reply("hello"))
    assert client_for(openai_server).complete(USER) == ["hello"]
    (request,) = openai_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.body["model"] == "scripted-model"
    assert request.body["messages"] == USER
    assert request.body["max_tokens"] == 512
    assert request.body["temperature"] == 0.5
    assert "n" not in request.body


def test_samples_come_from_one_request_when_the_server_honours_n(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(reply("a"), reply("b"), reply("c"))
    texts = client_for(openai_server).complete(USER, n=3, temperature=0.9)
    assert texts == ["a", "b", "c"]
    assert len(openai_server.requests) == 1
    assert openai_server.bodies[0]["n"] == 3
    assert openai_server.bodies[0]["temperature"] == 0.9


def test_samples_fall_back_to_repeated_requests_when_n_is_ignored() -> None:
    with OpenAIServer(supports_n=False) as server:
        server.script(reply("a"), reply("b"), reply("c"), reply("d"), reply("e"))
        llm = client_for(server)
        assert llm.complete(USER, n=3) == ["a", "b", "c"]
        assert [b.get("n") for b in server.bodies] == [3, None, None]
        # The client remembers: the next sampling does not ask for n again.
        assert llm.complete(USER, n=2) == ["d", "e"]
        assert [b.get("n") for b in server.bodies[3:]] == [None, None]


def test_samples_fall_back_when_the_server_rejects_n(openai_server: OpenAIServer) -> None:
    openai_server.script(failure(400, error="n must be 1"), reply("a"), reply("b"))
    assert client_for(openai_server).complete(USER, n=2) == ["a", "b"]
    assert [b.get("n") for b in openai_server.bodies] == [2, None, None]


def test_max_completion_tokens_is_used_when_max_tokens_is_refused(
    openai_server: OpenAIServer,
) -> None:
    refusal = "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead."
    openai_server.script(failure(400, error=refusal), reply("ok"), reply("again"))
    llm = client_for(openai_server)
    assert llm.complete(USER) == ["ok"]
    assert llm.complete(USER) == ["again"]
    assert "max_tokens" in openai_server.bodies[0]
    assert [b.get("max_completion_tokens") for b in openai_server.bodies[1:]] == [512, 512]


def test_truncated_replies_are_marked(openai_server: OpenAIServer) -> None:
    openai_server.script(
        reply("diff\ntests/test_a.py\ninsert\nEOF\ndef test_", finish_reason="length")
    )
    (answer,) = client_for(openai_server).replies(USER)
    assert answer.truncated


def test_429_with_retry_after_is_retried_after_the_delay(openai_server: OpenAIServer) -> None:
    openai_server.script(failure(429, headers={"retry-after": "0.3"}), reply("after the wait"))
    started = time.monotonic()
    assert client_for(openai_server).complete(USER) == ["after the wait"]
    assert time.monotonic() - started >= 0.3
    assert len(openai_server.requests) == 2


def test_500_then_success(openai_server: OpenAIServer) -> None:
    openai_server.script(failure(500), reply("recovered"))
    assert client_for(openai_server).complete(USER) == ["recovered"]
    assert len(openai_server.requests) == 2


def test_500_forever_becomes_llm_error_with_status(openai_server: OpenAIServer) -> None:
    openai_server.script(
        failure(503, error="overloaded", headers={"retry-after-ms": "20"}, repeat=True)
    )
    with pytest.raises(LLMRequestError) as caught:
        client_for(openai_server, max_retries=2).complete(USER)
    assert caught.value.status == 503
    assert "overloaded" in str(caught.value)
    assert len(openai_server.requests) == 3  # the first try and two retries


def test_client_errors_are_not_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(failure(401, error="bad key"), reply("never"))
    with pytest.raises(LLMRequestError) as caught:
        client_for(openai_server).complete(USER)
    assert caught.value.status == 401
    assert len(openai_server.requests) == 1


def test_slow_replies_beyond_the_timeout_become_llm_error(openai_server: OpenAIServer) -> None:
    openai_server.script(reply("too late", delay_s=1.0, repeat=True))
    started = time.monotonic()
    with pytest.raises(LLMError, match="timed out"):
        client_for(openai_server, timeout_s=0.2, max_retries=0).complete(USER)
    assert time.monotonic() - started < 0.9


def test_unreachable_endpoint_becomes_llm_error(openai_server: OpenAIServer) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = client_for(openai_server, base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    with pytest.raises(LLMError, match="cannot reach"):
        llm.complete(USER)


def test_a_body_that_is_not_a_completion_becomes_llm_error(openai_server: OpenAIServer) -> None:
    openai_server.script(Scripted(raw_body='{"choices": []}'))
    with pytest.raises(LLMError, match="no choices"):
        client_for(openai_server).complete(USER)


def test_the_budget_stops_requests_once_spent(openai_server: OpenAIServer) -> None:
    openai_server.script(reply("one", total_tokens=80), reply("two", total_tokens=30), reply("x"))
    llm = client_for(openai_server, budget=100)
    assert llm.complete(USER) == ["one"]
    assert llm.complete(USER) == ["two"]
    assert llm.budget.spent == 110
    with pytest.raises(BudgetExhausted, match="110 of 100"):
        llm.complete(USER)
    assert len(openai_server.requests) == 2  # the third request was never sent
    # A fresh issue gets a fresh budget of the same size on the same endpoint.
    fresh = llm.for_issue()
    assert fresh.budget.limit == 100
    assert fresh.budget.spent == 0
    assert fresh.complete(USER) == ["x"]


def test_model_work_for_one_issue_ends_at_its_time_budget(openai_server: OpenAIServer) -> None:
    # The endpoint answers, but slowly: 3 s a reply, under the client's 30 s timeout per request.
    openai_server.script(reply("slow", delay_s=3.0), reply("never"))
    sdk = openai.OpenAI(base_url=openai_server.url, api_key=API_KEY)
    llm = LLMClient(
        sdk, "scripted-model", budget=TokenBudget(10**6, seconds=1.0), timeout_s=30.0,
        max_retries=0,
    )  # fmt: skip
    started = time.monotonic()
    # The one request may not outlive the issue's budget: it is cut at about 1 s.
    with pytest.raises(LLMRequestError, match="timed out"):
        llm.complete(USER)
    assert time.monotonic() - started < 2.5
    # Nothing more is sent for this issue, and the reason says which budget ran out.
    with pytest.raises(BudgetExhausted, match="time budget spent: model work took the 1 s"):
        llm.complete(USER)
    assert llm.budget.remaining == 0
    assert len(openai_server.requests) == 1
    # Another issue starts with the whole time again.
    assert llm.for_issue().budget.seconds_left() == pytest.approx(1.0, abs=0.2)


def test_the_time_budget_is_read_on_a_clock_passed_in() -> None:
    now = [100.0]
    budget = TokenBudget(1_000, seconds=60.0, clock=lambda: now[0])
    budget.check()
    now[0] += 59.0
    assert budget.seconds_left() == pytest.approx(1.0)
    budget.check()
    now[0] += 1.0
    with pytest.raises(BudgetExhausted, match="time budget spent"):
        budget.check()
    assert TokenBudget(1_000).seconds_left() is None


def test_sampling_keeps_what_it_has_when_the_budget_runs_out() -> None:
    with OpenAIServer(supports_n=False) as server:
        server.script(reply("a", total_tokens=60), reply("b", total_tokens=60), reply("c"))
        assert client_for(server, budget=100).complete(USER, n=3) == ["a", "b"]
        assert len(server.requests) == 2


def test_replies_without_usage_are_still_counted(openai_server: OpenAIServer) -> None:
    body = (
        '{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": '
        '[{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", '
        '"content": "' + "word " * 200 + '"}}]}'
    )
    openai_server.script(Scripted(raw_body=body))
    llm = client_for(openai_server)
    llm.complete(USER)
    assert llm.budget.spent >= 250


def test_tool_calls_are_parsed_and_malformed_arguments_become_errors(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(
        call("grep", {"text": "parse_duration"}),
        call("grep", '{"text": "unterminated'),
        call("grep", "[1, 2]"),
        reply("done"),
    )
    llm = client_for(openai_server)
    turn = llm.chat_with_tools(USER, TOOLS)
    (good,) = turn.tool_calls
    assert (good.name, good.arguments, good.error) == ("grep", {"text": "parse_duration"}, "")
    assert turn.finish_reason == "tool_calls"
    assert openai_server.bodies[0]["tools"] == TOOLS
    message = turn.as_message()
    assert message["tool_calls"][0]["id"] == good.id

    (broken,) = llm.chat_with_tools(USER, TOOLS).tool_calls
    assert broken.arguments == {}
    assert "not valid JSON" in broken.error
    (listed,) = llm.chat_with_tools(USER, TOOLS).tool_calls
    assert "one JSON object" in listed.error

    final = llm.chat_with_tools(USER, TOOLS)
    assert (final.text, final.tool_calls) == ("done", ())


def test_the_api_key_stays_out_of_errors_reprs_and_logs(
    openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    # A proxy that echoes the request's headers into its error message.
    openai_server.script(failure(400, error=f"bad request with Authorization: Bearer {API_KEY}"))
    openai_server.script(reply("fine"))
    llm = client_for(openai_server)
    # A command-line test earlier in the session may have left structlog filtering below
    # warnings, which would hide the very events this test reads.
    structlog.reset_defaults()
    with caplog.at_level(logging.DEBUG), capture_logs() as events:
        with pytest.raises(LLMError) as caught:
            llm.complete(USER)
        llm.complete(USER)
    assert API_KEY not in str(caught.value)
    assert "[api key]" in str(caught.value)
    assert API_KEY not in repr(llm)
    assert API_KEY not in caplog.text
    assert events and all(API_KEY not in repr(event) for event in events)
    assert all(r.headers["authorization"] == f"Bearer {API_KEY}" for r in openai_server.requests)


def test_make_client_follows_the_settings(openai_server: OpenAIServer) -> None:
    assert make_client(Settings(llm_base_url="", llm_model="")) is None
    settings: Any = Settings(
        llm_base_url=openai_server.url,
        llm_api_key=API_KEY,
        llm_model="configured-model",
        llm_max_tokens=64,
        llm_temperature=0.3,
        llm_token_budget=5_000,
        llm_timeout_s=0.2,
        llm_max_retries=0,
    )
    llm = make_client(settings)
    assert llm is not None
    assert llm.budget.limit == 5_000
    openai_server.script(reply("configured"), reply("slow", delay_s=1.0))
    assert llm.complete(USER) == ["configured"]
    body = openai_server.bodies[0]
    assert (body["model"], body["max_tokens"], body["temperature"]) == ("configured-model", 64, 0.3)
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
    with pytest.raises(LLMError, match="timed out"):
        llm.complete(USER)
    assert len(openai_server.requests) == 2  # max_retries=0 came from the settings
