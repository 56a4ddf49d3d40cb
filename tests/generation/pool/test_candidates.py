"""Drafts validated together: one draft whose run is killed never hides what another shows."""

from __future__ import annotations

from collections.abc import Callable

import docker

from reprobot.generation.drafts import Draft, DraftOutcome
from reprobot.generation.pool.candidates import SandboxBudget, Validator
from reprobot.generation.pool.failure_match import IssueReason
from reprobot.validation import EnvImage, Patch, RepoSnapshot, RunLimits

REASON = IssueReason(
    exc_type=None, message="", wrong_values=(), frame_functions=(), text_words=frozenset()
)


def _new_test(path: str, body: str) -> Patch:
    lines = body.splitlines()
    added = "".join(f"+{line}\n" for line in lines)
    return Patch(f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{added}")


CALM = "from tiny import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
# What a prompt-injected model might draft: a test that takes all the memory there is.
GREEDY = "def test_greedy():\n    blocks = [bytearray(64 << 20) for _ in range(100)]\n"


def test_a_killed_batch_runs_its_drafts_apart(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Callable[[dict[str, str]], RepoSnapshot],
) -> None:
    validator = Validator(
        docker_client,
        tiny_env,
        tiny_snapshot({}),
        REASON,
        RunLimits(timeout_s=120, memory_mb=256, pids=64),
        SandboxBudget(runs_left=5),
    )
    calm = Draft("calm", _new_test("tests/test_calm.py", CALM))
    greedy = Draft("greedy", _new_test("tests/test_greedy.py", GREEDY))
    judged = validator.validate([calm, greedy])
    # The batch was killed for memory; each draft then ran alone: the calm one is judged on
    # its own run, the greedy one is the error it caused.
    assert [c.outcome for c in judged] == [DraftOutcome.PASSES, DraftOutcome.ERROR]
    assert "memory" in judged[1].reason
    assert validator.budget.used == 3
