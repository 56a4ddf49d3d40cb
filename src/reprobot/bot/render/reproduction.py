"""The issue comment: the reproducing test Reprobot found, or what it tried."""

from __future__ import annotations

import html
import re
import shlex
from collections.abc import Sequence

from reprobot.bot.render.config_note import config_errors_note
from reprobot.bot.render.markdown import (
    COMMENT_LIMIT,
    cap,
    fence,
    fit_lengths,
    inline_code,
    neutralize_mentions,
    table_cell,
    trim,
    verbatim_fence,
)
from reprobot.validation import Oracle, OracleKind

REPRODUCTION_MARKER = "<!-- reprobot:reproduction -->"
_MAX_LISTED_TESTS = 30
_MAX_RUN_IDS = 10
_MAX_TRIED_ROWS = 20
# Longest command line or method name echoed; real ones are far shorter.
_MAX_ECHO = 4000
_PATCH_TARGET = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.MULTILINE)


NOT_REPRODUCED_HEADLINE = "🔍 Could not reproduce this issue"


def reproduced_headline(base_sha: str, markdown: bool = True, probably: bool = False) -> str:
    """A reproduction in one line, as the comment (markdown) and the report page say it;
    ``probably``: one whose confidence is below the label's threshold."""
    at = _short_sha(base_sha) if markdown else base_sha[:12]
    return f"🔁 Probably reproduced at {at}" if probably else f"🔁 Reproduced at {at}"


def _to_check(items: Sequence[str]) -> list[str]:
    """What a maintainer should check of a reproduction that is only probable."""
    return [
        "**Probably reproduces:** the test fails for the reason the issue describes, but what "
        "backs it is not enough for the `reproduced` label. Before relying on it, check:",
        *(f"- {item}" for item in items),
        "",
    ]


def _short_sha(sha: str) -> str:
    return inline_code(sha[:12])


def _patch_files(patch: str) -> list[str]:
    files = [m.group(1) for m in _PATCH_TARGET.finditer(patch) if m.group(1) != "/dev/null"]
    return list(dict.fromkeys(files))


def _summary(patch: str, method: str) -> str:
    """The ``<summary>`` line of the patch block: HTML, since GitHub renders no markdown there."""
    files = _patch_files(patch)
    shown = [f"<code>{html.escape(neutralize_mentions(f))}</code>" for f in files[:3]]
    if len(files) > 3:
        shown.append(f"{len(files) - 3} more")
    what = ", ".join(shown) or "a patch"
    name = html.escape(neutralize_mentions(trim(method, 100, keep="head")))
    drafted = f", drafted by <code>{name}</code>"
    return f"<summary>The reproducing test ({what}{drafted if method else ''})</summary>"


def _run_command(test_command: str, failing_tests: Sequence[str]) -> str:
    command = " ".join(test_command.split()) or "python -m pytest"
    ids = [shlex.quote(t) for t in failing_tests[:_MAX_RUN_IDS]]
    return trim(" ".join([command, *ids]), _MAX_ECHO, keep="head")


def _test_list(failing_tests: Sequence[str]) -> str:
    lines = [
        f"- {inline_code(trim(t, 300, keep='head'))}" for t in failing_tests[:_MAX_LISTED_TESTS]
    ]
    if len(failing_tests) > _MAX_LISTED_TESTS:
        lines.append(f"- … and {len(failing_tests) - _MAX_LISTED_TESTS} more")
    return "\n".join(lines)


def _checks_line(oracle: Oracle) -> str:
    """What the test checks, in words; for a weak oracle, what that means for a fix."""
    code = f" {inline_code(trim(oracle.assertion, 200, keep='head'))}" if oracle.assertion else ""
    line = f"**What it checks:** it {oracle.checks}{code}."
    if oracle.kind is OracleKind.WEAK:
        line += (
            " A fix that gives another wrong value would pass it too, so a pull request that "
            "makes it pass is not called verified. Stating the expected value in this issue "
            "lets Reprobot write a test that checks it."
        )
    elif oracle.kind is OracleKind.CRASH:
        line += (
            " A fix that stops the error but gives a wrong result would pass it too, so a pull "
            "request that makes it pass is not called verified. Stating the expected result in "
            "this issue lets Reprobot write a test that checks it."
        )
    return line


def _reproduced_body(
    *,
    repo: str,
    issue_number: int,
    base_sha: str,
    patch: str,
    patch_cut: bool,
    failing_tests: Sequence[str],
    failure: str,
    method: str,
    test_command: str,
    config_errors: Sequence[str],
    oracle: Oracle | None,
    to_check: Sequence[str] | None,
) -> str:
    count = len(failing_tests)
    tests_word = "test" if count == 1 else "tests"
    patch_name = f"reprobot-issue-{issue_number}.diff"
    parts = [
        REPRODUCTION_MARKER,
        f"### {reproduced_headline(base_sha, probably=to_check is not None)}",
        "",
        f"Reprobot wrote {'a test that fails' if count == 1 else 'tests that fail'} on commit "
        f"{_short_sha(base_sha)} of {inline_code(repo)} for the reason this issue describes.",
        "",
        f"**Failing {tests_word}:**",
        _test_list(failing_tests),
        "",
    ]
    if oracle is not None:
        parts += [_checks_line(oracle), ""]
    if to_check is not None:
        parts += _to_check(to_check)
    if failure:
        parts += ["**Failure:**", "", fence(failure), ""]
    parts += [
        "<details>",
        _summary(patch, method),
        "",
        verbatim_fence(patch, "diff"),
        "",
        "</details>",
        "",
    ]
    if patch_cut:
        parts += [
            "_The test patch is too long for one comment and was cut above, "
            "so it does not apply as shown._",
            "",
        ]
    more = f" (the first {_MAX_RUN_IDS} of {count} failing tests)" if count > _MAX_RUN_IDS else ""
    parts += [
        f"**How to run it:** in a checkout of {_short_sha(base_sha)}, save the patch above as "
        f"{inline_code(patch_name)}, then{more}:",
        "",
        verbatim_fence(
            f"git apply {patch_name}\n{_run_command(test_command, failing_tests)}", "sh"
        ),
    ]
    note = config_errors_note(config_errors)
    if note:
        parts += ["", note]
    return "\n".join(parts)


def render_reproduction(
    *,
    repo: str,
    issue_number: int,
    base_sha: str,
    test_patch: str,
    failing_tests: Sequence[str],
    failure: str,
    method: str,
    test_command: str,
    config_errors: Sequence[str] = (),
    oracle: Oracle | None = None,
    to_check: Sequence[str] | None = None,
) -> str:
    """The comment announcing a reproduction: marker first, the failing tests, what they check
    (with ``to_check``, a reproduction below the label's confidence: "Probably reproduced" and
    what to check), the failure, the
    test patch (folded) and how to run it; at most ``COMMENT_LIMIT`` characters, the patch and
    the failure cut (saying so) when they do not fit. Echoed text cannot escape its code
    block and mentions in it notify nobody."""

    def render(patch: str, failure_text: str, patch_cut: bool) -> str:
        return _reproduced_body(
            repo=repo,
            issue_number=issue_number,
            base_sha=base_sha,
            patch=patch,
            patch_cut=patch_cut,
            failing_tests=failing_tests,
            failure=failure_text,
            method=method,
            test_command=test_command,
            config_errors=config_errors,
            oracle=oracle,
            to_check=to_check,
        )

    whole_patch = patch = test_patch.rstrip("\n")
    whole_failure = failure_text = failure.strip("\n")
    body = render(patch, failure_text, False)
    # Fences grow with the backticks they hold and cut marks add a line, hence a margin and
    # further rounds when one falls short; each round keeps some of both texts.
    for _ in range(5):
        excess = len(body) - COMMENT_LIMIT
        if excess <= 0:
            return body
        budget = max(2000, len(patch) + len(failure_text) - excess - 500)
        patch_len, failure_len = fit_lengths([len(whole_patch), len(whole_failure)], budget)
        # Cut from the whole texts each round, so that each says once how much it lost.
        patch = trim(whole_patch, max(1, patch_len), keep="head")
        failure_text = trim(whole_failure, max(1, failure_len), keep="tail")
        body = render(patch, failure_text, True)
    return cap(body, COMMENT_LIMIT)


def render_not_reproduced(
    *,
    repo: str,
    base_sha: str,
    tried: Sequence[tuple[str, str, str]],
    config_errors: Sequence[str] = (),
) -> str:
    """The comment saying the issue could not be reproduced: marker first, then a table of what
    was tried (``(method, outcome, reason)``, at most 20 rows), under ``COMMENT_LIMIT``."""
    parts = [
        REPRODUCTION_MARKER,
        f"### {NOT_REPRODUCED_HEADLINE}",
        "",
    ]
    if tried:
        parts += [
            f"Reprobot drafted tests on commit {_short_sha(base_sha)} of {inline_code(repo)}, "
            "but none of them failed for the reason this issue describes.",
            "",
            "| method | outcome | why |",
            "|---|---|---|",
        ]
        parts += [
            f"| {table_cell(method, 60)} | {table_cell(outcome, 60)} | {table_cell(reason)} |"
            for method, outcome, reason in tried[:_MAX_TRIED_ROWS]
        ]
        if len(tried) > _MAX_TRIED_ROWS:
            parts += ["", f"_… and {len(tried) - _MAX_TRIED_ROWS} more attempts._"]
    else:
        parts.append(
            f"Reprobot could not draft any test for this issue on commit {_short_sha(base_sha)} "
            f"of {inline_code(repo)}."
        )
    parts += [
        "",
        "An issue with a short code example, the full traceback and the expected result is "
        "easier to reproduce; a maintainer can comment `/reprobot reproduce` to try again.",
    ]
    note = config_errors_note(config_errors)
    if note:
        parts += ["", note]
    return cap("\n".join(parts), COMMENT_LIMIT)
