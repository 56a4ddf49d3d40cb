"""The markdown body of a verification comment: headline, transitions, change coverage, details."""

from __future__ import annotations

from collections.abc import Sequence

from reprobot.bot.render.markdown import COMMENT_LIMIT, fence, inline_code, trim
from reprobot.generation import parse_failure
from reprobot.validation import Transition, Verdict

_SIDE_WORD = {
    "P": "pass",
    "F": "fail",
    "E": "error",
    "S": "skipped",
    "XF": "xfail",
    "XP": "xpass",
}
# What a transition means for the verdict, where its two words do not say it.
_KIND_NOTE = {
    "F->P": "reproduced, then fixed",
    "F->F": "still failing",
    "P->F": "broken by the fix",
    "P->E": "broken by the fix",
    "P->S": "skipped with the change: not run, so not a pass",
    "F->S": "skipped with the change: not run, so not a pass",
    "E->S": "skipped with the change: not run, so not a pass",
    "S->S": "never run",
}


def kind_text(kind: str) -> str:
    """A transition (``"F->P"``) in words: ``fail → pass (reproduced, then fixed)``."""
    before, _, after = kind.partition("->")
    if before not in _SIDE_WORD or after not in _SIDE_WORD:
        return kind
    text = f"{_SIDE_WORD[before]} → {_SIDE_WORD[after]}"
    note = _KIND_NOTE.get(kind) or _side_note(before, after)
    return f"{text} ({note})" if note else text


def _side_note(before: str, after: str) -> str:
    if after in ("XF", "XP"):
        return "marked as an expected failure with the change: not a pass"
    if before == "S":
        return "skipped before the change"
    return ""


_MAX_LISTED = 30


def headline(verdict: Verdict) -> str:
    """The verdict in one line, as the comment, the check run and the report page say it."""
    return _headline(verdict).removeprefix("### ")


def _headline(verdict: Verdict) -> str:
    fixed = sum(1 for t in verdict.transitions.values() if t.fail_to_pass)
    if verdict.status == "verified":
        if fixed == 1:
            return "### ✅ Verified: 1 reproducing test fails before this change and passes with it"
        return f"### ✅ Verified: {fixed} reproducing tests fail before this change, pass with it"
    if verdict.status == "weak":
        tests = "test passes" if fixed == 1 else f"{fixed} tests pass"
        short = verdict.short_of_a_result() or "the reported problem is gone"
        return (
            f"### ⚠️ Not verified: the reproducing {tests} with this change, but only check"
            f"{'s' if fixed == 1 else ''} that {short}"
        )
    if verdict.status == "needs_review":
        tests = "test passes" if fixed == 1 else f"{fixed} tests pass"
        gist = review_gist(verdict)
        return f"### 🔍 Needs review: the reproducing {tests} with this change, but {gist}"
    if verdict.status == "not_verified":
        failing = sum(1 for t in verdict.transitions.values() if t.fails_after)
        if fixed == 0:
            why = "no reproducing test goes from fail to pass"
        elif failing == 0 and verdict.reasons:
            # The tests pass, and something else rules the change out: say that.
            why = verdict.reasons[0].split(": ", 1)[0]
        else:
            why = "1 test fails" if failing == 1 else f"{failing} tests fail"
            why += " with this change"
        return f"### ❌ Not verified: {why}"
    return "### ⚠️ Inconclusive: the tests could not give a verdict"


def review_gist(verdict: Verdict) -> str:
    """What keeps a passing change from being verified, in a headline's few words: the first
    concern up to its details (the list of files, the lines)."""
    if verdict.harness_changes:
        return "it changes how its tests run"
    if not verdict.review:
        return "a maintainer must read it first"
    first = verdict.review[0]
    cut = min((i for i in (first.find(": "), first.find(" (")) if i > 0), default=len(first))
    return first[:cut]


def _coverage_line(verdict: Verdict) -> str:
    cc = verdict.change_coverage
    if not verdict.measured:
        return "**Change coverage:** not measured: the change is too large to read line by line."
    if cc.ratio is None:
        return "**Change coverage:** no executable Python line changed."
    text = (
        f"**Change coverage:** the tests execute {cc.covered} of {cc.executable} "
        f"executable changed lines ({cc.ratio:.0%}), as measured inside the test process."
    )
    if verdict.tracing:
        where = ", ".join(inline_code(w) for w in verdict.tracing[:5])
        text += (
            f" ⚠️ This change can switch off the tracer that measures it ({where}), so the "
            "figure may be lower, or higher, than what ran."
        )
    uncovered = [(f.path, f.uncovered) for f in cc.files if f.uncovered]
    if uncovered:
        items = "\n".join(
            f"- {inline_code(path)}: lines {', '.join(lines[:40])}{' …' if len(lines) > 40 else ''}"
            for path, lines in uncovered
        )
        text += (
            "\n\nNot executed (`-N`: removed line, numbered before the change; "
            f"`+N`: added line, numbered after it):\n{items}"
        )
    return text


def _test_list(items: list[Transition], verdict: Verdict | None = None) -> str:
    """The tests, each with what it checks when ``verdict`` knows."""

    def line(t: Transition) -> str:
        oracle = verdict.oracle(t.test_id) if verdict else None
        what = ""
        if oracle:
            code = f" {inline_code(oracle.assertion)}" if oracle.assertion else ""
            what = f" ({oracle.checks}{code})"
        return f"- {inline_code(t.test_id)}{what}"

    shown = [line(t) for t in items[:_MAX_LISTED]]
    if len(items) > _MAX_LISTED:
        shown.append(f"- … and {len(items) - _MAX_LISTED} more")
    return "\n".join(shown)


def _failing_otherwise(verdict: Verdict) -> list[str]:
    """A line for each test that fails before the change and with it, ending in an exception of
    another type with it (the one reproduced gone, another in its way), both exceptions named."""
    lines = []
    for t in verdict.transitions.values():
        if t.before.is_pass or not t.fails_after:
            continue
        before = verdict.before.failures.get(t.test_id)
        after = verdict.after.failures.get(t.test_id)
        if not before or not after:
            continue
        was, now = parse_failure(before), parse_failure(after)
        if not was.exc_type or not now.exc_type or was.exc_type == now.exc_type:
            continue
        lines.append(
            f"- {inline_code(t.test_id)}: before, {inline_code(_said(was.exc_type, was.message))};"
            f" with it, {inline_code(_said(now.exc_type, now.message))}"
        )
        if len(lines) == _MAX_LISTED:
            break
    return lines


def _said(exc_type: str, message: str) -> str:
    line = message.split("\n", 1)[0]
    said = f"{exc_type}: {line}" if line else exc_type
    return said if len(said) <= 200 else said[:199] + "…"


def harness_warning(files: Sequence[str]) -> str:
    """The words for a fix that changes how its tests run."""
    named = ", ".join(inline_code(f) for f in files[:_MAX_LISTED])
    more = f" and {len(files) - _MAX_LISTED} more" if len(files) > _MAX_LISTED else ""
    return (
        f"⚠️ **This pull request changes how its tests run:** {named}{more}. Code there runs "
        "inside the test process before the tests do and can change what they report; read "
        "these changes before trusting this result."
    )


# What a pass rests on: said wherever a verdict does.
TRUST_NOTE = (
    "_What this result rests on:_ the tests ran in a sandbox with no network and no secrets, "
    "their outcomes came from pytest's own process over a channel no other process can write, "
    "and pytest's exit status agreed with them. Code of the change runs inside that same process "
    "and could misreport there; change coverage is measured there too."
)


# The same limit in one line, for the check run's summary.
IN_PROCESS_LIMIT = (
    "A pass rests on pytest's own report; code of the change runs inside pytest's process and "
    "could misreport there, so read what the change does before merging."
)


def render_verdict(verdict: Verdict, title: str = "Reprobot") -> str:
    """The comment body for ``verdict``; always under GitHub's comment size limit."""
    parts = [_headline(verdict), ""]
    if verdict.reasons:
        parts += [f"- {inline_code(r)}" for r in verdict.reasons] + [""]
    if verdict.harness_changes:
        parts += [harness_warning(verdict.harness_changes), ""]
    counts = verdict.counts()
    if counts:
        parts += ["| tests | count |", "|---|---:|"]
        parts += [f"| {kind_text(k)} | {n} |" for k, n in counts.items()]
        parts.append("")
    fixed = [t for t in verdict.transitions.values() if t.fail_to_pass]
    failing = [t for t in verdict.transitions.values() if t.fails_after]
    if fixed:
        parts += ["**Reproducing tests fixed by this change, and what each checks:**"]
        parts += [_test_list(fixed, verdict), ""]
    if failing:
        parts += ["**Tests failing with this change:**", _test_list(failing), ""]
    if changed := _failing_otherwise(verdict):
        parts += [
            "**Failing for another reason with this change:** the failure each of these tests "
            "showed before is gone, and another stops it. That one may come from the change, or "
            "from the test or its environment; the failures are in the details.",
            *changed,
            "",
        ]
    parts += [_coverage_line(verdict), ""]
    if verdict.status in ("verified", "weak", "needs_review"):
        # What a pass rests on stands where it is read, not in the block a long comment drops.
        parts += [TRUST_NOTE, ""]
    details = [
        "<details><summary>Details</summary>",
        "",
        f"Base `{verdict.base_sha[:12]}`"
        + (f", head `{verdict.head_sha[:12]}`" if verdict.head_sha else ", fix applied as a patch"),
        "",
        "| test | before | after |",
        "|---|---|---|",
    ]
    for t in list(verdict.transitions.values())[:200]:
        details.append(f"| {inline_code(t.test_id)} | {t.before.value} | {t.after.value} |")
    for label, run in (("before", verdict.before), ("after", verdict.after)):
        shown = [t for t, o in run.outcomes.items() if not o.is_pass and t in run.failures][:5]
        for test_id in shown:
            details += [
                "",
                f"Failure {label} the change, {inline_code(test_id)}:",
                "",
                fence(trim(run.failures[test_id], 3000)),
            ]
    details += ["", "</details>"]
    body = "\n".join(parts + details)
    if len(body) > COMMENT_LIMIT:
        body = "\n".join(parts) + "\n\n_(details left out: too long for one comment)_"
    return trim(body, COMMENT_LIMIT, keep="head")
