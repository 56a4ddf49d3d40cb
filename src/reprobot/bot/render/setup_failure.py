"""What the App writes when a repository's environment cannot be set up: what failed, how it
was set up and what decided each part, and the ``.github/reprobot.yml`` lines a maintainer
edits to set it up instead."""

from __future__ import annotations

import re

import yaml

from reprobot.bot.render.markdown import COMMENT_LIMIT, cap, fence, inline_code
from reprobot.validation import CONFIG_PATH, Detection

SETUP_FAILED_HEADLINE = "⚙️ Could not set up this repository's tests"
# A compiler that found no header, a pkg-config that found no library: a Debian package is
# missing, which ``system_packages`` adds.
_MISSING_SYSTEM_PART = re.compile(
    r"fatal error: \S+\.h|No such file or directory|pkg-config|command '\S+' failed|not found"
)


def suggested_settings(detected: Detection, cause: str) -> str:
    """The settings that reproduce ``detected`` as explicit steps, for a maintainer to edit:
    the Python, the install split into setup steps, the test command, and a place for Debian
    packages when the cause points at a missing system library or tool."""
    spec = detected.spec
    steps = [*spec.pre_install]
    steps += [f"python -m pip install -r {r}" for r in spec.requirements]
    steps.append(spec.install)
    if spec.test_requirements:
        needed = " ".join(_quoted(r) for r in spec.test_requirements)
        steps.append(f"python -m pip install {needed}")
    settings: dict[str, object] = {
        "python": spec.python,
        "setup_steps": [s for s in steps if s and s != "true"],
        "test_command": spec.test_cmd,
    }
    if spec.system_packages or _MISSING_SYSTEM_PART.search(cause):
        settings["system_packages"] = list(spec.system_packages) or ["libfoo-dev"]
    return yaml.safe_dump(settings, sort_keys=False, allow_unicode=True, width=1000)


def _quoted(requirement: str) -> str:
    return f"'{requirement}'" if any(c in requirement for c in " <>;!*[") else requirement


def render_setup_failed(
    *, marker: str, repo: str, sha: str, error: str, cause: str, detected: Detection
) -> str:
    """The comment for an issue (or the check text for a pull request) whose repository's
    environment could not be built at commit ``sha``."""
    how = [
        f"- {part.replace('_', ' ')}: {inline_code(source[:200])}"
        for part, source in sorted(detected.sources.items())
    ]
    parts = [
        marker,
        f"### {SETUP_FAILED_HEADLINE}",
        "",
        f"Reprobot could not build the environment of {inline_code(repo)} at "
        f"{inline_code(sha[:12])}, so it ran no test.",
        "",
        f"**What failed:** {inline_code((cause or error)[:400])}",
        "",
        "**How it was set up**, and what decided each part:",
        "",
        *how,
        "",
        f"To set it up yourself, commit {inline_code(CONFIG_PATH)} to the default branch with "
        "the steps that install the project and its test dependencies, starting from these "
        "(the steps Reprobot ran):",
        "",
        fence(suggested_settings(detected, cause), "yaml"),
        "",
        "A maintainer can then comment `/reprobot reproduce` to try again.",
    ]
    return cap("\n".join(parts), COMMENT_LIMIT)
