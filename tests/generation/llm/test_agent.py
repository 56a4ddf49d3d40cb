"""The agent loop and ``llm_drafts`` against a real local chat-completions server, a real git
repository and a RunDraft that is a plain function (the sandbox is exercised elsewhere)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from reprobot.generation.drafts import Draft, DraftOutcome, Feedback
from reprobot.generation.errors import LLMError
from reprobot.generation.llm.agent import METHOD, OUTPUT_CHARS, agent_drafts
from reprobot.generation.llm.methods import llm_drafts
from reprobot.generation.llm.retrieval import CodeIndex
from reprobot.settings import Settings
from reprobot.validation.errors import SandboxError
from reprobot.validation.source.patch import applies_to
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.openai_server import (
    API_KEY,
    OpenAIServer,
    Scripted,
    ScriptedCall,
    call,
    failure,
    reply,
    tool_outputs,
)
from tests.support.sizes_project import NEW_TEST_BLOCK, llm_for, sizes_issue, sizes_repo

PASSING_TEST = (
    'from sizes import parse_size\n\n\ndef test_k():\n    assert parse_size("1k") == 1024\n'
)
REPRODUCING_TEST = (
    "from sizes import parse_size\n\n\n"
    'def test_fraction_with_unit():\n    assert parse_size("1.5k") == 1536\n'
)
NEW_PATH = "tests/test_sizes_fraction.py"


@dataclass
class FakeSandbox:
    """A RunDraft: reproduces when the patch asserts the issue's expected value."""

    summary: str = ""
    runs: list[Draft] = field(default_factory=list)

    def __call__(self, draft: Draft) -> Feedback:
        self.runs.append(draft)
        if "1536" in draft.patch.diff:
            return Feedback(
                DraftOutcome.REPRODUCES,
                self.summary or "ValueError: invalid literal for int() with base 10: '1.5'",
                ("tests/test_sizes_fraction.py::test_fraction_with_unit",),
            )
        return Feedback(DraftOutcome.PASSES, self.summary or "1 passed")


@pytest.fixture
def snapshot(tmp_path: Path) -> RepoSnapshot:
    return sizes_repo(tmp_path)


def run_agent(
    server: OpenAIServer,
    snapshot: RepoSnapshot,
    sandbox: FakeSandbox | None = None,
    steps: int = 12,
) -> tuple[list[Draft], list[tuple[str, str]]]:
    return agent_drafts(
        sizes_issue(),
        snapshot,
        CodeIndex.build(snapshot),
        llm_for(server),
        sandbox or FakeSandbox(),
        steps,
    )


def test_the_agent_explores_writes_runs_repairs_and_submits(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(
        call("search_code", {"query": "parse_size units"}),
        call("grep", {"text": "def parse_size"}),
        call("read_file", {"path": "sizes/__init__.py", "start_line": 6, "end_line": 9}),
        call("write_test", {"path": NEW_PATH, "content": PASSING_TEST}),
        call("run_tests"),
        call("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST}),
        call("run_tests"),
        call("submit"),
    )
    sandbox = FakeSandbox()
    drafts, rejected = run_agent(openai_server, snapshot, sandbox)
    assert rejected == []
    assert openai_server.pending == 0
    assert len(sandbox.runs) == 2
    submitted, first_try = drafts
    assert submitted.method == first_try.method == METHOD
    assert "(submitted, reproduces" in submitted.note
    assert "1536" in submitted.patch.diff
    assert submitted.test_files == (NEW_PATH,)
    assert applies_to([submitted.patch], snapshot)
    assert "not submitted, passes" in first_try.note

    search, grep, read, wrote, ran, _, ran_again = tool_outputs(openai_server)
    assert "sizes/__init__.py:6-10" in search
    assert "sizes/__init__.py:6: def parse_size(text):" in grep
    assert "6| def parse_size(text):" in read
    assert "9|         return int(text[:-1]) * UNITS[text[-1]]" in read
    assert "10|" not in read
    assert wrote.startswith(f"wrote the new file {NEW_PATH}")
    assert ran.startswith("outcome: passes")
    assert "do not show the bug" in ran
    assert "outcome: reproduces" in ran_again
    assert "failing tests: tests/test_sizes_fraction.py::test_fraction_with_unit" in ran_again
    assert "invalid literal" in ran_again  # execution feedback reaches the model
    tools = [t["function"]["name"] for t in openai_server.bodies[0]["tools"]]
    assert tools == ["search_code", "grep", "read_file", "write_test", "run_tests", "submit"]
    assert API_KEY not in json.dumps(openai_server.bodies)
    assert all(API_KEY not in d.patch.diff + d.note for d in drafts)


def test_submit_before_running_is_told_to_run_first(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(
        call("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST}),
        call("submit"),
        call("run_tests"),
        call("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST + "\n# tidy\n"}),
        call("submit"),
        call("run_tests"),
        call("submit"),
    )
    sandbox = FakeSandbox()
    drafts, _ = run_agent(openai_server, snapshot, sandbox)
    outputs = tool_outputs(openai_server)
    assert outputs[1] == "not submitted: call run_tests first, then submit"
    assert "changed since the last run" in outputs[4]
    assert len(outputs) == 6  # the last call, the accepted submit, ends the loop
    assert "(submitted, reproduces" in drafts[0].note
    assert len(sandbox.runs) == 2
    assert "# tidy" in drafts[0].patch.diff


def test_writes_outside_test_files_are_refused(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    fix = "def parse_size(text):\n    return 1536\n"
    openai_server.script(
        call("write_test", {"path": "sizes/__init__.py", "content": fix}),
        call("write_test", {"path": "../tests/test_escape.py", "content": PASSING_TEST}),
        call("write_test", {"path": "/tmp/test_abs.py", "content": PASSING_TEST}),
        call("write_test", {"path": ".git/hooks/test_hook.py", "content": PASSING_TEST}),
        call("write_test", {"path": NEW_PATH, "content": "def test_x(:\n    pass\n"}),
        call("read_file", {"path": "../../etc/passwd"}),
        call("run_tests"),
        reply("I give up."),
        reply("Really."),
        reply("Done."),
    )
    sandbox = FakeSandbox()
    drafts, rejected = run_agent(openai_server, snapshot, sandbox)
    source, parent, absolute, hidden, syntax, escape, run = tool_outputs(openai_server)
    assert "not written" in source and "not a test file" in source
    assert "leaves the repository" in parent
    assert "absolute" in absolute
    assert "not written" in hidden
    assert "not valid Python" in syntax
    assert escape.startswith("error:") and "not a path inside the repository" in escape
    assert run.startswith("nothing to run")
    assert (drafts, sandbox.runs) == ([], [])
    assert rejected == [
        (METHOD, "the model stopped calling tools (3 turns without a call); it wrote no test")
    ]


def test_malformed_arguments_and_unknown_tools_are_answered_not_fatal(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(
        call("write_test", '{"path": "tests/test_sizes_fraction.py", "content": "unterminated'),
        call("delete_repository", {"really": True}),
        call("read_file", {"path": "sizes/__init__.py", "start_line": "two"}),
        call("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST}),
        call("run_tests"),
        call("submit"),
    )
    drafts, _ = run_agent(openai_server, snapshot)
    malformed, unknown, bad_int, *_ = tool_outputs(openai_server)
    assert malformed.startswith("error: the arguments are not valid JSON")
    assert "there is no tool 'delete_repository'" in unknown
    assert "'start_line' must be a line number" in bad_int
    assert len(drafts) == 1


def test_an_endless_loop_of_identical_calls_stops_early(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(call("grep", {"text": "parse_size"}, repeat=True))
    drafts, rejected = run_agent(openai_server, snapshot, steps=20)
    assert drafts == []
    assert len(openai_server.requests) == 3
    ((method, reason),) = rejected
    assert method == METHOD
    assert "repeated grep" in reason and "3 times" in reason
    assert tool_outputs(openai_server)[1].startswith("note: you made this exact call before")


def test_the_step_budget_ends_a_loop_that_keeps_changing(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(
        *(call("read_file", {"path": "sizes/__init__.py", "start_line": n}) for n in range(1, 9))
    )
    drafts, rejected = run_agent(openai_server, snapshot, steps=4)
    assert drafts == []
    assert len(openai_server.requests) == 4
    assert rejected == [
        (METHOD, "the step budget of 4 turns was spent; it wrote no test"),
    ]
    # Two turns before the end the model is told to wrap up.
    last = openai_server.bodies[-1]["messages"]
    assert any(m["role"] == "user" and "Two turns are left" in m["content"] for m in last)


def test_unchanged_files_are_not_run_twice_and_unrun_files_are_kept(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(
        call("write_test", {"path": NEW_PATH, "content": PASSING_TEST}),
        call("run_tests"),
        call("run_tests"),
        call("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST}),
    )
    sandbox = FakeSandbox()
    drafts, rejected = run_agent(openai_server, snapshot, sandbox, steps=4)
    assert len(sandbox.runs) == 1
    assert "(the files are unchanged since an earlier run)" in tool_outputs(openai_server)[2]
    ran, unrun = drafts
    assert "not submitted, passes" in ran.note
    assert "written but not run" in unrun.note and "1536" in unrun.patch.diff
    assert "step budget of 4" in unrun.note
    assert rejected == []


def test_several_calls_in_one_turn_each_get_an_answer(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(
        Scripted(
            tool_calls=(
                ScriptedCall("grep", {"text": "UNITS"}),
                ScriptedCall("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST}),
                ScriptedCall("run_tests", {}),
            )
        ),
        call("submit"),
    )
    drafts, _ = run_agent(openai_server, snapshot)
    assert len(drafts) == 1
    # All three got an answer in the request after that turn (the server refuses otherwise).
    assert len(tool_outputs(openai_server)) == 3
    assert "(submitted" in drafts[0].note


def test_tool_outputs_are_capped(openai_server: OpenAIServer, tmp_path: Path) -> None:
    from tests.support.repos import commit_files

    snapshot = sizes_repo(tmp_path)
    assert snapshot.path is not None
    long_lines = "".join(f"VALUE_{n} = '{'x' * 200}'\n" for n in range(400))
    commit_files(snapshot.path, {"sizes/table.py": long_lines}, "a big table")
    snapshot = RepoSnapshot.from_git(snapshot.path, "HEAD")
    openai_server.script(
        call("read_file", {"path": "sizes/table.py"}),
        call("grep", {"text": "VALUE_"}),
        call("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST}),
        call("run_tests"),
        call("submit"),
    )
    drafts, _ = run_agent(openai_server, snapshot, FakeSandbox(summary="E" * 50_000))
    read, grep, _, ran = tool_outputs(openai_server)
    assert len(read) <= OUTPUT_CHARS + 200
    assert read.endswith("; read on with start_line=27]")
    assert "\n 26| VALUE_25 = " in read
    assert grep.endswith("matches shown, there are more; grep narrower text]")
    assert len(grep) <= OUTPUT_CHARS
    assert len(ran) <= OUTPUT_CHARS + 200
    assert len(drafts) == 1


def test_a_sandbox_failure_is_reported_to_the_model(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    def broken_sandbox(draft: Draft) -> Feedback:
        raise SandboxError("no container could be created")

    openai_server.script(
        call("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST}),
        call("run_tests"),
        reply("stuck"),
        reply("stuck"),
        reply("stuck"),
    )
    drafts, _ = agent_drafts(
        sizes_issue(),
        snapshot,
        CodeIndex.build(snapshot),
        llm_for(openai_server),
        broken_sandbox,
        10,
    )
    assert "could not be run: no container could be created" in tool_outputs(openai_server)[1]
    (unrun,) = drafts
    assert "written but not run" in unrun.note


def test_endpoint_failures_raise_only_when_nothing_was_drafted(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(failure(500, error="down"))
    with pytest.raises(LLMError, match="down"):
        run_agent(openai_server, snapshot)

    openai_server.script(
        call("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST}),
        call("run_tests"),
        failure(500, error="down again"),
    )
    drafts, rejected = run_agent(openai_server, snapshot)
    (draft,) = drafts
    assert "the endpoint failed" in draft.note and "down again" in draft.note
    assert rejected == []


def test_a_slow_endpoint_times_out_quickly(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(call("submit", delay_s=1.0, repeat=True))
    llm = llm_for(openai_server, timeout_s=0.2)
    with pytest.raises(LLMError, match="timed out"):
        agent_drafts(sizes_issue(), snapshot, CodeIndex.build(snapshot), llm, FakeSandbox(), 5)


# --- llm_drafts: both methods together ---------------------------------------------------------


def settings_for(server: OpenAIServer, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "llm_base_url": server.url,
        "llm_api_key": API_KEY,
        "llm_model": "scripted-model",
        "llm_samples": 1,
        "llm_agent_steps": 6,
        "llm_max_retries": 0,
        "llm_timeout_s": 5.0,
    }
    values.update(overrides)
    return Settings(**values)


def test_llm_drafts_runs_zero_shot_then_the_agent(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(
        reply(NEW_TEST_BLOCK),
        call("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST}),
        call("run_tests"),
        call("submit"),
    )
    settings = settings_for(openai_server)
    drafts, rejected = llm_drafts(
        sizes_issue(), snapshot, llm_for(openai_server), FakeSandbox(), settings
    )
    assert [d.method for d in drafts] == ["llm-zero-shot", "llm-agent"]
    assert rejected == []


def test_an_llm_error_in_zero_shot_still_lets_the_agent_run(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(
        failure(502, error="bad gateway"),
        call("write_test", {"path": NEW_PATH, "content": REPRODUCING_TEST}),
        call("run_tests"),
        call("submit"),
    )
    settings = settings_for(openai_server)
    drafts, rejected = llm_drafts(
        sizes_issue(), snapshot, llm_for(openai_server), FakeSandbox(), settings
    )
    assert [d.method for d in drafts] == ["llm-agent"]
    ((method, reason),) = rejected
    assert method == "llm-zero-shot"
    assert "HTTP 502" in reason and "bad gateway" in reason


def test_a_spent_budget_stops_both_methods(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    openai_server.script(reply("no edits here", total_tokens=10_000), reply(NEW_TEST_BLOCK))
    settings = settings_for(openai_server, llm_samples=2)
    drafts, rejected = llm_drafts(
        sizes_issue(), snapshot, llm_for(openai_server, budget=5_000), FakeSandbox(), settings
    )
    assert drafts == []
    assert len(openai_server.requests) == 1
    sampling, unusable, agent = rejected
    assert sampling[0] == "llm-zero-shot"
    assert "sampling stopped after 1 replies: token budget spent" in sampling[1]
    assert unusable[0] == "llm-zero-shot" and unusable[1].startswith("sample 1: ")
    assert agent == ("llm-agent", "not run: the token budget of 5000 tokens is spent")


def test_each_issue_gets_a_fresh_budget(
    openai_server: OpenAIServer, snapshot: RepoSnapshot
) -> None:
    llm = llm_for(openai_server, budget=5_000)
    settings = settings_for(openai_server, llm_agent_steps=0)
    for _ in range(2):
        openai_server.script(reply(NEW_TEST_BLOCK, total_tokens=4_000))
        drafts, rejected = llm_drafts(sizes_issue(), snapshot, llm, FakeSandbox(), settings)
        assert (len(drafts), rejected) == (1, [])
    assert len(openai_server.requests) == 2
