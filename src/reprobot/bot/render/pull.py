"""The pull request comment and check run: the linked issues' reproducing tests on base and head,
and whether the pull request's own tests reproduce anything."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from reprobot.bot.render.config_note import config_errors_note
from reprobot.bot.render.markdown import (
    COMMENT_LIMIT,
    cap,
    inline_code,
    neutralize_mentions,
    trim,
    verbatim_fence,
)
from reprobot.bot.render.verdict import IN_PROCESS_LIMIT, render_verdict, review_gist
from reprobot.validation import CONFIG_PATH, Transition, Verdict

VERIFICATION_MARKER = "<!-- reprobot:verification -->"
CHECK_NAME = "Reprobot: issue reproduction"
TITLE_LIMIT = 100
SUMMARY_LIMIT = 2000
TEXT_LIMIT = 60000
_MAX_LISTED = 30
_MAX_SUMMARY_ISSUES = 20
_MAX_ISSUE_SECTIONS = 50
_DETAILS_START = "<details><summary>Details</summary>"
_LEFT_OUT = "_(details left out: too long to show here)_"

Conclusion = Literal["success", "failure", "neutral"]


@dataclass(frozen=True)
class IssueVerdict:
    """The verdict of one linked issue's reproducing tests; None when there was nothing to run
    (no stored reproduction) or the run failed, ``note`` saying why."""

    issue_number: int
    verdict: Verdict | None
    note: str = ""
    # A test drafted at this pull request (the issue had none), offered to its author.
    suggested: str = ""
    # The reproducing tests that ran (the stored or the drafted ones), for the report page.
    tests_diff: str = ""


@dataclass(frozen=True)
class OwnTests:
    """The pull request's own new or changed tests, run before and after its code changes;
    ``verdict`` None when it changes no test file (or they could not be run)."""

    test_files: tuple[str, ...]
    verdict: Verdict | None
    # With no verdict, what the pull request does to its tests instead, as the end of a
    # sentence ("deletes tests/test_a.py and adds no test"); empty when they could not run.
    note: str = ""
    # The pull request's test changes that ran, for the report page.
    tests_diff: str = ""


@dataclass(frozen=True)
class PullReport:
    """The comment body, and the check run's conclusion, title, summary and text."""

    comment: str
    conclusion: Conclusion
    title: str
    summary: str
    text: str
    # Files the head changes that alter how its tests run (the verdicts' union).
    harness_changes: tuple[str, ...] = ()
    # Whether the App may add its "verified" label on its own.
    label_allowed: bool = True


@dataclass
class _Section:
    """A piece of a report in several renderings, from the fullest to the shortest."""

    levels: list[str]
    level: int = 0

    @property
    def text(self) -> str:
        return self.levels[self.level]


def _fit(sections: list[_Section], limit: int) -> str:
    """The sections joined by blank lines, the longest shortened first until all fit; a body
    still too long is cut at the end, so that its start (the marker) always stays."""

    def joined() -> str:
        return "\n\n".join(s.text for s in sections if s.text)

    body = joined()
    while len(body) > limit:
        shorter = [s for s in sections if s.level < len(s.levels) - 1]
        if not shorter:
            break
        max(shorter, key=lambda s: len(s.text)).level += 1
        body = joined()
    return cap(body, limit)


def _prose(text: str, limit: int = 500) -> str:
    """Our own text about an issue, on one line, with mentions and HTML tags made harmless."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return neutralize_mentions(flat).replace("<", "&lt;")


def _headline(verdict: Verdict) -> tuple[str, str]:
    """The verdict's headline (without its ``###``) and the rest of its rendering."""
    head, _, rest = render_verdict(verdict).partition("\n")
    return head.removeprefix("### ").strip(), rest.strip("\n")


def _no_verdict_note(item: IssueVerdict) -> str:
    return _prose(item.note) if item.note else "Reprobot has no reproducing test to run for it."


def _issue_section(item: IssueVerdict) -> _Section:
    number = item.issue_number
    if item.verdict is None:
        return _Section([f"### Issue #{number}: no verdict\n\n{_no_verdict_note(item)}"])
    headline, rest = _headline(item.verdict)
    heading = f"### Issue #{number}: {headline}"
    if item.suggested:
        rest = f"{_suggestion(item.suggested)}\n\n{rest}"
    levels = [f"{heading}\n\n{rest}"]
    if _DETAILS_START in rest:
        short_rest = rest.split(_DETAILS_START, 1)[0].rstrip("\n")
        levels.append(f"{heading}\n\n{short_rest}\n\n{_LEFT_OUT}")
    levels.append(f"{heading}\n\n{_LEFT_OUT}")
    return _Section(levels)


def _suggestion(test_patch: str) -> str:
    """The drafted test, folded, offered to the pull request's author."""
    return "\n".join(
        [
            "This issue had no reproducing test, so Reprobot drafted one from its text: it fails "
            "on the base for the reason the issue describes and its checks come from the issue, "
            "not from this change. Consider adding it to the pull request.",
            "",
            "<details><summary>The drafted test</summary>",
            "",
            verbatim_fence(trim(test_patch.rstrip("\n"), 20_000, keep="head"), "diff"),
            "",
            "</details>",
        ]
    )


def _issue_sections(issues: Sequence[IssueVerdict]) -> list[_Section]:
    sections = [_issue_section(i) for i in issues[:_MAX_ISSUE_SECTIONS]]
    if len(issues) > _MAX_ISSUE_SECTIONS:
        sections.append(_Section([f"_… and {len(issues) - _MAX_ISSUE_SECTIONS} more issues._"]))
    return sections


def _test_list(items: Sequence[Transition], limit: int = _MAX_LISTED) -> str:
    shown = [f"- {inline_code(trim(t.test_id, 300, keep='head'))}" for t in items[:limit]]
    if len(items) > limit:
        shown.append(f"- … and {len(items) - limit} more")
    return "\n".join(shown)


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _own_tests_sentence(own: OwnTests) -> str:
    """One sentence on whether the pull request brings its own reproducing test."""
    verdict = own.verdict
    if verdict is None:
        if not own.test_files:
            return "This pull request changes no test file."
        if own.note:
            return f"This pull request {own.note}."
        return (
            f"This pull request changes {_plural(len(own.test_files), 'test file', 'test files')}, "
            "but Reprobot could not run them before and after its code changes."
        )
    if verdict.status == "inconclusive":
        return "The pull request's own tests could not be compared before and after the change."
    transitions = list(verdict.transitions.values())
    fixed = sum(1 for t in transitions if t.fail_to_pass)
    still = sum(1 for t in transitions if not t.before.is_pass and t.fails_after)
    broken = sum(1 for t in transitions if t.before.is_pass and t.fails_after)
    if fixed:
        head = (
            f"This pull request comes with {_plural(fixed, 'test that fails', 'tests that fail')} "
            f"before the change and {'passes' if fixed == 1 else 'pass'} with it"
        )
    elif still or broken:
        head = "None of the pull request's own tests goes from fail to pass with the change"
    else:
        return (
            "None of the pull request's own tests fails before the change: "
            "it does not come with a reproducing test."
        )
    also = []
    if still:
        also.append(f"{_plural(still, 'fails', 'fail')} before the change and with it")
    if broken:
        fail = "fails" if broken == 1 else "fail"
        also.append(f"{_plural(broken, 'passes', 'pass')} before it and {fail} with it")
    return head + ("; " + " and ".join(also) if also else "") + "."


def _own_tests_section(own: OwnTests) -> _Section:
    heading = "### Tests in this pull request"
    sentence = _own_tests_sentence(own)
    verdict = own.verdict
    if verdict is None:
        return _Section([f"{heading}\n\n{sentence}"])
    parts = [heading, sentence]
    if verdict.status == "inconclusive":
        parts.append("\n".join(f"- {inline_code(trim(r, 300))}" for r in verdict.reasons[:5]))
    fixed = [t for t in verdict.transitions.values() if t.fail_to_pass]
    failing = [t for t in verdict.transitions.values() if t.fails_after]
    if fixed:
        parts.append(_test_list(fixed))
    if failing:
        parts += [f"{_plural(len(failing), 'test fails', 'tests fail')} with the change:"]
        parts.append(_test_list(failing))
    compact = f"{heading}\n\n{sentence}"
    return _Section(["\n\n".join(parts), compact])


def _conclusion(issues: Sequence[IssueVerdict]) -> Conclusion:
    statuses = [i.verdict.status for i in issues if i.verdict is not None]
    if "not_verified" in statuses:
        return "failure"
    if statuses and all(s == "verified" for s in statuses):
        return "success"
    return "neutral"


def _refs(numbers: Sequence[int]) -> str:
    shown = ", ".join(f"#{n}" for n in numbers[:3])
    return shown + (f" and {len(numbers) - 3} more" if len(numbers) > 3 else "")


def _title(issues: Sequence[IssueVerdict], conclusion: Conclusion) -> str:
    def having(status: str) -> list[int]:
        return [i.issue_number for i in issues if i.verdict and i.verdict.status == status]

    if conclusion == "success":
        text = f"✅ Verified: the reproducing tests of {_refs(having('verified'))} pass"
    elif conclusion == "failure":
        failed = [i.verdict for i in issues if i.verdict and i.verdict.status == "not_verified"]
        why = _headline(failed[0])[0].split(": ", 1)[-1]
        text = f"❌ Not verified for {_refs(having('not_verified'))}: {why}"
    elif having("needs_review"):
        review = next(i.verdict for i in issues if i.verdict and i.verdict.status == "needs_review")
        gist = review_gist(review)
        if review.harness_changes:
            gist = "this change alters how they run"
        elif gist.startswith("it "):
            gist = "this change " + gist.removeprefix("it ")
        text = f"🔍 Needs review: the tests of {_refs(having('needs_review'))} pass, but {gist}"
    elif having("weak"):
        weak = next(i.verdict for i in issues if i.verdict and i.verdict.status == "weak")
        short = weak.short_of_a_result() or "the reported problem is gone"
        text = f"⚠️ Not verified: the tests of {_refs(having('weak'))} only check that {short}"
    elif having("inconclusive"):
        text = f"⚠️ Inconclusive: the tests of {_refs(having('inconclusive'))} gave no verdict"
    elif issues:
        text = f"No reproducing test to run for {_refs([i.issue_number for i in issues])}"
    else:
        text = "No linked issue to verify"
    return text if len(text) <= TITLE_LIMIT else text[: TITLE_LIMIT - 1] + "…"


def _summary(
    issues: Sequence[IssueVerdict], own: OwnTests, head_sha: str, config_errors: Sequence[str]
) -> str:
    """One line per issue, as many as fit, then the own-tests sentence and the head."""
    tail = ["", _own_tests_sentence(own), "", f"Head {inline_code(head_sha[:12])}."]
    passing = ("verified", "weak", "needs_review")
    if any(i.verdict is not None and i.verdict.status in passing for i in issues):
        tail += ["", IN_PROCESS_LIMIT]
    if config_errors:
        tail += ["", f"{inline_code(CONFIG_PATH)} has errors, so the defaults apply."]
    room = SUMMARY_LIMIT - len("\n".join(tail)) - 60
    lines: list[str] = []
    for item in issues[:_MAX_SUMMARY_ISSUES]:
        if item.verdict is None:
            note = _prose(item.note, 200) if item.note else _no_verdict_note(item)
            line = f"- #{item.issue_number}: no verdict. {note}"
        else:
            line = f"- #{item.issue_number}: {_headline(item.verdict)[0]}"
        if len(line) + 1 > room:
            break
        lines.append(line)
        room -= len(line) + 1
    if len(lines) < len(issues):
        lines.append(f"- … and {len(issues) - len(lines)} more issues")
    return cap("\n".join(lines + tail), SUMMARY_LIMIT)


def _footer(head_sha: str, pull_number: int, repo: str) -> str:
    return (
        f"_Reprobot ran these tests on {inline_code(repo)} pull request #{pull_number} "
        f"at head {inline_code(head_sha[:12])}._"
    )


def nothing_to_run(issues: Sequence[int]) -> tuple[str, str]:
    """The neutral check of a pull request whose linked issues have no reproducing test."""
    refs = _refs(list(issues))
    title = f"No reproducing test for {refs}"[:100]
    summary = (
        f"This pull request links {refs}, and Reprobot has no reproducing test for "
        f"{'it' if len(issues) == 1 else 'them'}, so there is nothing to run. When an issue is "
        "reproduced (or `/reprobot reproduce` is asked for in it), push again or choose "
        '"Re-run" on this check.'
    )
    return title, summary


_LABEL_WITHHELD = (
    "The label is not added on its own: this pull request comes from a fork and changes how "
    "its tests run. A maintainer who has read those changes can add it."
)


def render_pull_report(
    *,
    repo: str,
    pull_number: int,
    head_sha: str,
    issues: Sequence[IssueVerdict],
    own_tests: OwnTests,
    config_errors: Sequence[str] = (),
    from_fork: bool = False,
) -> PullReport:
    """The pull request comment (marker first, one section per linked issue, the pull request's
    own tests, the head; at most ``COMMENT_LIMIT`` characters, the longest sections shortened
    first) and the check run: ``success`` when every issue with a verdict is verified and at
    least one is, ``failure`` when any is not verified, ``neutral`` otherwise; a title of at
    most 100 characters, a summary of at most 2,000 and a text of at most 60,000."""
    conclusion = _conclusion(issues)
    title = _title(issues, conclusion)
    note = config_errors_note(config_errors)
    harness = tuple(
        sorted({f for i in issues if i.verdict is not None for f in i.verdict.harness_changes})
    )
    # A fork's head that changes how its tests run never earns the label unseen.
    label_allowed = not (from_fork and harness)
    closing = [_Section([_footer(head_sha, pull_number, repo)])]
    if conclusion == "success" and not label_allowed:
        closing.insert(0, _Section([_LABEL_WITHHELD]))
    if note:
        closing.append(_Section([note]))
    comment = _fit(
        [
            _Section([f"{VERIFICATION_MARKER}\n**{title}**"]),
            *_issue_sections(issues),
            _own_tests_section(own_tests),
            *closing,
        ],
        COMMENT_LIMIT,
    )
    own_details: list[_Section] = []
    if own_tests.verdict is not None:
        headline, rest = _headline(own_tests.verdict)
        own_details.append(
            _Section(
                [
                    f"### The pull request's own tests: {headline}\n\n{rest}",
                    f"### The pull request's own tests: {headline}",
                ]
            )
        )
    text = _fit(
        [
            *_issue_sections(issues),
            _own_tests_section(own_tests),
            *own_details,
            *closing,
        ],
        TEXT_LIMIT,
    )
    return PullReport(
        comment=comment,
        conclusion=conclusion,
        title=title,
        summary=_summary(issues, own_tests, head_sha, config_errors),
        text=text,
        harness_changes=harness,
        label_allowed=label_allowed,
    )
