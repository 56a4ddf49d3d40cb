"""A repository whose environment cannot be built, end to end: the issue's comment says what
failed, how the environment was set up and what decided it, and the settings lines that would
set it up; the job ends without retrying the same build."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobot.bot.render.reproduction import REPRODUCTION_MARKER
from reprobot.bot.render.setup_failure import SETUP_FAILED_HEADLINE
from tests.support.app_harness import AppHarness
from tests.support.repos import EXAMPLE

pytestmark = pytest.mark.docker

MISSING = "reprobot-test-no-such-package-7f3a"
CONFIG = f"setup_steps:\n  - python -m pip install {MISSING}\n  - python -m pip install -e .\n"
ISSUE_TITLE, _, ISSUE_BODY = (EXAMPLE / "ISSUE.md").read_text().partition("\n")


@pytest.fixture
def app(tmp_path: Path, example_repo: Path) -> Iterator[AppHarness]:
    harness = AppHarness(tmp_path, example_repo, config=CONFIG)
    harness.serve(workers=1)
    yield harness
    harness.close()


def test_an_environment_that_cannot_be_built_is_explained_on_the_issue(app: AppHarness) -> None:
    app.deliver("issues", app.open_issue(1, ISSUE_TITLE, ISSUE_BODY), "delivery-setup-1")
    jobs = app.wait("the job to finish", lambda: app.finished(1), timeout=300)
    assert [(j.kind, j.state, j.attempts) for j in jobs] == [("reproduce", "done", 1)], app.logs()
    (comment,) = app.bot_comments(1)
    body = str(comment["body"])
    assert body.startswith(REPRODUCTION_MARKER)
    assert SETUP_FAILED_HEADLINE in body
    assert f"pip found no distribution for {MISSING}" in body
    assert "- install: `.github/reprobot.yml setup_steps`" in body
    # The lines to edit are the steps that ran, as settings.
    assert f"setup_steps:\n- python -m pip install {MISSING}\n- python -m pip install -e ." in body
    assert app.github.issue_labels(app.repo, 1) == []
