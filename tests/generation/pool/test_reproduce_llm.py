"""The LLM methods inside ``reproduce``: a real local chat-completions server with scripted
replies, the example project, and every draft run in the real sandbox."""

from __future__ import annotations

from pathlib import Path

import docker

from reprobot.generation.drafts import DraftOutcome
from reprobot.generation.issue.file import read_issue
from reprobot.generation.llm.setup import llm_drafter_for
from reprobot.generation.pool.reproduce import reproduce
from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.example_patches import FIX
from tests.support.openai_server import OpenAIServer, call, reply, tool_outputs
from tests.support.sizes_project import llm_for

# No code, no session, no traceback: the no-LLM drafter has nothing to work from.
PROSE_ISSUE = """parse_duration cannot read durations with two units

Reading back what format_duration writes for an hour and a half fails with a ValueError about
an invalid literal for int(); a single unit works.
"""

ZERO_SHOT = """Here is a test.

```
diff
tests/test_two_units.py
insert
EOF
from durations import parse_duration


def test_hour_and_a_half():
    assert parse_duration("1h30m") == 5400
end diff
```
"""

BROKEN = "def test_round_trip():\n    assert parse_duration(format_duration(5400)) == 5400\n"
REPAIRED = "from durations import format_duration, parse_duration\n\n\n" + BROKEN


def test_llm_drafts_join_the_pool_and_execution_feedback_drives_repair(
    docker_client: docker.DockerClient,
    example_repo: Path,
    example_env: EnvImage,
    settings: Settings,
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(
        reply(ZERO_SHOT),
        call("write_test", {"path": "tests/test_round_trip.py", "content": BROKEN}),
        call("run_tests"),
        call("write_test", {"path": "tests/test_round_trip.py", "content": REPAIRED}),
        call("run_tests"),
        call("submit"),
    )
    drafting = settings.model_copy(update={"llm_samples": 1, "llm_agent_steps": 8})
    drafter = llm_drafter_for(llm_for(openai_server, timeout_s=30.0), drafting)
    base = RepoSnapshot.from_git(example_repo, "HEAD", "example/durations")
    result = reproduce(
        read_issue(PROSE_ISSUE),
        base,
        example_env,
        drafting,
        client=docker_client,
        llm_drafter=drafter,
    )
    assert openai_server.pending == 0
    # The agent's first run was judged in the real sandbox, and the model was told why.
    first_run, second_run = (t for t in tool_outputs(openai_server) if t.startswith("outcome"))
    assert first_run.startswith("outcome: broken") and "NameError" in first_run
    assert second_run.startswith("outcome: reproduces") and "ValueError" in second_run
    verdicts = {(c.draft.method, c.outcome) for c in result.candidates}
    # The agent's submitted test and its first, broken try are both in the pool, judged anew.
    assert verdicts == {
        ("llm-zero-shot", DraftOutcome.REPRODUCES),
        ("llm-agent", DraftOutcome.REPRODUCES),
        ("llm-agent", DraftOutcome.BROKEN),
    }
    assert result.reproduced and result.chosen is not None
    assert result.chosen.draft.method.startswith("llm-")
    assert "llm" in result.methods
    verdict = verify(docker_client, example_env, base, Patch(result.test_patch), fix=Patch(FIX))
    assert verdict.success
