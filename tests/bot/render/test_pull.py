"""The pull request comment and check run built from the linked issues' verdicts."""

from __future__ import annotations

import pytest

from reprobot.bot.render.markdown import COMMENT_LIMIT
from reprobot.bot.render.pull import (
    VERIFICATION_MARKER,
    IssueVerdict,
    OwnTests,
    PullReport,
    render_pull_report,
)
from reprobot.validation.results.oracles import Oracle, module_oracles
from reprobot.validation.results.testrun import Outcome, PatchResult, TestRun
from reprobot.validation.source.patch import Patch
from reprobot.validation.verify import Verdict, grade

P, F = Outcome.PASSED, Outcome.FAILED
FIX = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
BASE, HEAD = "b" * 40, "c0ffee" + "e" * 34


def _verdict(
    before: dict[str, Outcome],
    after: dict[str, Outcome],
    failures: dict[str, str] | None = None,
    oracles: dict[str, Oracle] | None = None,
) -> Verdict:
    return grade(
        TestRun(outcomes=before, failures=failures or {}),
        TestRun(outcomes=after),
        Patch(FIX),
        {"m.py": b"x = 1\n"},
        {"m.py": b"x = 2\n"},
        BASE,
        HEAD,
        oracles=oracles,
    )


VERIFIED = _verdict({"t.py::a": F}, {"t.py::a": P}, {"t.py::a": "E  boom @ceo"})
NOT_VERIFIED = _verdict({"t.py::a": F, "t.py::b": P}, {"t.py::a": P, "t.py::b": F})
STILL_FAILING = _verdict({"t.py::a": F}, {"t.py::a": F})
INCONCLUSIVE = grade(
    TestRun(outcomes={}, patches_applied=False, patches=(PatchResult("test.diff", False),)),
    TestRun(outcomes={}),
    Patch(FIX),
    {},
    {},
    BASE,
    HEAD,
)
NO_TESTS = OwnTests((), None)
WEAK_TEST = "def test_a():\n    result = median([1, 2, 3, 4])\n    assert result != 3\n"
STRONG_TEST = "def test_a():\n    assert median([1, 2, 3, 4]) == 2.5\n"
WEAK_ORACLE = module_oracles("t.py", WEAK_TEST)["t.py::test_a"]
WEAK = _verdict({"t.py::a": F}, {"t.py::a": P}, oracles={"t.py::a": WEAK_ORACLE})


def _report(
    issues: list[IssueVerdict], own: OwnTests = NO_TESTS, errors: tuple[str, ...] = ()
) -> PullReport:
    return render_pull_report(
        repo="acme/durations",
        pull_number=7,
        head_sha=HEAD,
        issues=issues,
        own_tests=own,
        config_errors=errors,
    )


@pytest.mark.parametrize(
    ("issues", "conclusion"),
    [
        ([IssueVerdict(1, VERIFIED)], "success"),
        ([IssueVerdict(1, VERIFIED), IssueVerdict(2, VERIFIED)], "success"),
        ([IssueVerdict(1, VERIFIED), IssueVerdict(2, None, "never reproduced")], "success"),
        ([IssueVerdict(1, VERIFIED), IssueVerdict(2, NOT_VERIFIED)], "failure"),
        ([IssueVerdict(1, STILL_FAILING)], "failure"),
        ([IssueVerdict(1, INCONCLUSIVE), IssueVerdict(2, NOT_VERIFIED)], "failure"),
        ([IssueVerdict(1, VERIFIED), IssueVerdict(2, INCONCLUSIVE)], "neutral"),
        ([IssueVerdict(1, INCONCLUSIVE)], "neutral"),
        ([IssueVerdict(1, WEAK)], "neutral"),
        ([IssueVerdict(1, VERIFIED), IssueVerdict(2, WEAK)], "neutral"),
        ([IssueVerdict(1, WEAK), IssueVerdict(2, NOT_VERIFIED)], "failure"),
        ([IssueVerdict(1, None, "never reproduced")], "neutral"),
        ([], "neutral"),
    ],
)
def test_conclusion(issues: list[IssueVerdict], conclusion: str) -> None:
    report = _report(issues)
    assert report.conclusion == conclusion
    assert report.comment.startswith(VERIFICATION_MARKER + "\n")


def test_comment_has_one_section_per_issue_and_the_head() -> None:
    report = _report(
        [
            IssueVerdict(12, VERIFIED),
            IssueVerdict(13, None, note="#13 was never reproduced, so there is nothing to run."),
        ]
    )
    comment = report.comment
    assert comment.splitlines()[:2] == [
        VERIFICATION_MARKER,
        "**✅ Verified: the reproducing tests of #12 pass**",
    ]
    assert (
        "### Issue #12: ✅ Verified: 1 reproducing test fails before this change and passes "
        "with it" in comment
    )
    assert "| fail → pass (reproduced, then fixed) | 1 |" in comment
    assert "### Issue #13: no verdict\n\n#13 was never reproduced, so there is nothing to run." in (
        comment
    )
    assert "E  boom @\u200bceo" in comment and "@ceo" not in comment
    assert "at head `c0ffeeeeeeee`" in comment
    assert "### Tests in this pull request\n\nThis pull request changes no test file." in comment
    assert report.title == "✅ Verified: the reproducing tests of #12 pass"


def test_titles() -> None:
    assert _report([IssueVerdict(3, NOT_VERIFIED)]).title == (
        "❌ Not verified for #3: 1 test fails with this change"
    )
    assert _report([IssueVerdict(3, STILL_FAILING)]).title == (
        "❌ Not verified for #3: no reproducing test goes from fail to pass"
    )
    assert _report([IssueVerdict(3, INCONCLUSIVE)]).title == (
        "⚠️ Inconclusive: the tests of #3 gave no verdict"
    )
    assert _report([IssueVerdict(3, WEAK)]).title == (
        "⚠️ Not verified: the tests of #3 only check that the reported wrong value is gone"
    )
    assert _report([IssueVerdict(3, None), IssueVerdict(4, None)]).title == (
        "No reproducing test to run for #3, #4"
    )
    many = [IssueVerdict(n, VERIFIED) for n in range(1000, 1400)]
    title = _report(many).title
    assert title == "✅ Verified: the reproducing tests of #1000, #1001, #1002 and 397 more pass"
    assert len(title) <= 100


def test_own_tests_that_reproduce() -> None:
    own = OwnTests(
        ("tests/test_m.py",),
        _verdict(
            {"t.py::new": F, "t.py::old": P},
            {
                "t.py::new": P,
                "t.py::old": P,
            },
        ),
    )
    comment = _report([IssueVerdict(1, VERIFIED)], own).comment
    assert (
        "### Tests in this pull request\n\nThis pull request comes with 1 test that fails "
        "before the change and passes with it.\n\n- `t.py::new`\n" in comment
    )
    assert "t.py::old`\n" not in comment.split("### Tests in this pull request")[1]


def test_own_tests_that_reproduce_nothing_or_break() -> None:
    own = OwnTests(("tests/test_m.py",), _verdict({"t.py::a": P}, {"t.py::a": F}))
    report = _report([IssueVerdict(1, VERIFIED)], own)
    assert (
        "None of the pull request's own tests goes from fail to pass with the change; 1 passes "
        "before it and fails with it." in report.comment
    )
    assert "1 test fails with the change:\n\n- `t.py::a`" in report.comment
    # The pull request's own tests never decide the conclusion.
    assert report.conclusion == "success"


@pytest.mark.parametrize(
    ("before", "after", "sentence"),
    [
        ({"a": P}, {"a": P}, "None of the pull request's own tests fails before the change: it "
         "does not come with a reproducing test."),
        ({"a": F}, {"a": F}, "None of the pull request's own tests goes from fail to pass with "
         "the change; 1 fails before the change and with it."),
        ({"a": F, "b": F}, {"a": F, "b": F}, "None of the pull request's own tests goes from "
         "fail to pass with the change; 2 fail before the change and with it."),
        ({"a": P}, {"a": F}, "None of the pull request's own tests goes from fail to pass with "
         "the change; 1 passes before it and fails with it."),
        ({"a": F, "b": P}, {"a": F, "b": F}, "None of the pull request's own tests goes from "
         "fail to pass with the change; 1 fails before the change and with it and 1 passes "
         "before it and fails with it."),
        ({"a": F}, {"a": P}, "This pull request comes with 1 test that fails before the change "
         "and passes with it."),
        ({"a": F, "b": F}, {"a": P, "b": P}, "This pull request comes with 2 tests that fail "
         "before the change and pass with it."),
        ({"a": F, "b": F}, {"a": P, "b": F}, "This pull request comes with 1 test that fails "
         "before the change and passes with it; 1 fails before the change and with it."),
        ({"a": F, "b": P}, {"a": P, "b": F}, "This pull request comes with 1 test that fails "
         "before the change and passes with it; 1 passes before it and fails with it."),
        ({"a": F, "b": P}, {"a": P, "b": P}, "This pull request comes with 1 test that fails "
         "before the change and passes with it."),
    ],
)  # fmt: skip
def test_the_own_tests_sentence_is_true_for_every_combination(
    before: dict[str, Outcome], after: dict[str, Outcome], sentence: str
) -> None:
    ids = {k: f"t.py::{k}" for k in before}
    verdict = _verdict(
        {ids[k]: v for k, v in before.items()}, {ids[k]: v for k, v in after.items()}
    )
    comment = _report([IssueVerdict(1, VERIFIED)], OwnTests(("t.py",), verdict)).comment
    assert f"### Tests in this pull request\n\n{sentence}" in comment


def test_own_tests_that_could_not_run() -> None:
    assert "could not run them" in _report([], OwnTests(("tests/test_m.py",), None)).comment
    deleted = OwnTests(
        ("tests/test_m.py",), None, note="deletes `tests/test_m.py` and adds no test"
    )
    comment = _report([], deleted).comment
    assert "This pull request deletes `tests/test_m.py` and adds no test." in comment
    assert "could not run them" not in comment
    report = _report([], OwnTests(("tests/test_m.py",), INCONCLUSIVE))
    assert "could not be compared before and after the change" in report.comment
    assert "- `test.diff does not apply before the fix`" in report.comment


def test_config_errors_note() -> None:
    report = _report([IssueVerdict(1, VERIFIED)], errors=("bad @x",))
    assert "- `bad @\u200bx`" in report.comment
    assert report.comment.endswith("so the defaults apply.")
    assert "`.github/reprobot.yml` has errors, so the defaults apply." in report.summary


def test_notes_cannot_ping_or_inject_html() -> None:
    comment = _report([IssueVerdict(5, None, note="ask @owner <details> now")]).comment
    assert "ask @\u200bowner &lt;details> now" in comment


def _huge_verdict(tag: str) -> Verdict:
    ids = {f"tests/t.py::test_{tag}_{i}_" + "x" * 150: F for i in range(400)}
    failures = {k: "```\n" + "y" * 4000 + "\n@team" for k in ids}
    return _verdict(ids, dict.fromkeys(ids, P), failures)


def test_huge_reports_stay_within_the_limits() -> None:
    issues = [IssueVerdict(n, _huge_verdict(str(n))) for n in range(1, 6)]
    own = OwnTests(("tests/t.py",), _huge_verdict("own"))
    report = _report(issues, own, errors=tuple("e" * 400 for _ in range(30)))
    assert len(report.comment) <= COMMENT_LIMIT
    assert len(report.title) <= 100
    assert len(report.summary) <= 2000
    assert len(report.text) <= 60000
    comment = report.comment
    assert comment.startswith(VERIFICATION_MARKER + "\n")
    # The longest sections lose their details first; every heading stays.
    for n in range(1, 6):
        assert f"### Issue #{n}: ✅ Verified: 400 reproducing tests" in comment
    assert "details left out" in comment
    assert "### Tests in this pull request" in comment
    assert "at head `c0ffeeeeeeee`" in comment
    assert "@team" not in comment and "@team" not in report.text


def test_many_issues_summary_is_short() -> None:
    issues = [IssueVerdict(n, None, note="n" * 400) for n in range(100)]
    report = _report(issues)
    assert len(report.summary) <= 2000
    assert report.summary.startswith("- #0: no verdict. nnn")
    assert "more issues\n\nThis pull request changes no test file.\n\nHead `c0ffeeeeeeee`." in (
        report.summary
    )
    assert len(report.comment) <= COMMENT_LIMIT
    assert "_… and 50 more issues._" in report.comment


def test_the_longest_sections_lose_their_details_first() -> None:
    def detailed(tag: str, size: int) -> Verdict:
        ids = {f"t.py::test_{tag}_{i}": F for i in range(5)}
        return _verdict(ids, dict.fromkeys(ids, P), {k: "z" * size for k in ids})

    issues = [IssueVerdict(n, detailed(str(n), 2900)) for n in range(1, 5)]
    issues.append(IssueVerdict(9, detailed("small", 50)))
    comment = _report(issues).comment
    assert len(comment) <= COMMENT_LIMIT
    sections = comment.split("### Issue #")[1:]
    assert len(sections) == 5
    assert sections[-1].startswith("9: ✅ Verified") and "<details>" in sections[-1]
    assert sum("_(details left out: too long to show here)_" in s for s in sections) >= 1
    assert comment.count("<details>") == comment.count("</details>")


def test_a_change_to_how_tests_run_needs_review_and_never_earns_the_label() -> None:
    harnessed = grade(
        TestRun(outcomes={"t.py::a": F}),
        TestRun(outcomes={"t.py::a": P}),
        Patch(FIX),
        {"m.py": b"x = 1\n"},
        {"m.py": b"x = 2\n"},
        BASE,
        HEAD,
        harness=("conftest.py", "setup.cfg"),
    )
    assert harnessed.status == "needs_review" and not harnessed.success
    assert "decide how its tests run (conftest.py, setup.cfg)" in harnessed.reasons[-1]
    for from_fork in (False, True):
        report = render_pull_report(
            repo="acme/durations",
            pull_number=7,
            head_sha=HEAD,
            issues=[IssueVerdict(1, harnessed), IssueVerdict(2, VERIFIED)],
            own_tests=NO_TESTS,
            from_fork=from_fork,
        )
        assert report.conclusion == "neutral"
        assert report.title == (
            "🔍 Needs review: the tests of #1 pass, but this change alters how they run"
        )
        assert report.harness_changes == ("conftest.py", "setup.cfg")
        assert "changes how its tests run:** `conftest.py`, `setup.cfg`" in report.comment
        assert (
            "### Issue #1: 🔍 Needs review: the reproducing test passes with this change, but it "
            "changes how its tests run"
        ) in report.comment
    # A fork that changes none of them gets the label as before.
    plain = render_pull_report(
        repo="acme/durations",
        pull_number=7,
        head_sha=HEAD,
        issues=[IssueVerdict(1, VERIFIED)],
        own_tests=NO_TESTS,
        from_fork=True,
    )
    assert plain.conclusion == "success"
    assert plain.label_allowed and plain.harness_changes == ()


def test_a_success_resting_only_on_weak_oracles_is_not_verified_and_says_why() -> None:
    assert WEAK.status == "weak" and WEAK.success is False
    report = _report([IssueVerdict(5, WEAK)])
    assert report.conclusion == "neutral"
    assert (
        "### Issue #5: ⚠️ Not verified: the reproducing test passes with this change, but only "
        "checks that the reported wrong value is gone" in report.comment
    )
    assert (
        "- `t.py::a` (checks only that a value is no longer the one reported "
        "`median([1, 2, 3, 4]) != 3`)" in report.comment
    )
    # One strong test among the fixed ones is enough; unknown oracles never weaken a verdict.
    strong = module_oracles("t.py", STRONG_TEST)["t.py::test_a"]
    before, after = {"t.py::a": F, "t.py::b": F}, {"t.py::a": P, "t.py::b": P}
    mixed = {"t.py::a": WEAK_ORACLE, "t.py::b": strong}
    assert _verdict(before, after, oracles=mixed).status == "verified"
    assert _verdict(before, after, oracles={}).status == "verified"


def test_a_success_resting_only_on_tests_that_nothing_raises_is_not_verified() -> None:
    crash = module_oracles("t.py", "def test_a():\n    median([])\n")["t.py::test_a"]
    verdict = _verdict({"t.py::a": F}, {"t.py::a": P}, oracles={"t.py::a": crash})
    assert verdict.status == "weak" and verdict.success is False
    assert verdict.reasons == (
        "the tests that go from fail to pass only check that the reported error no longer "
        "occurs, not that the result is right",
    )
    report = _report([IssueVerdict(5, verdict)])
    assert report.conclusion == "neutral"
    assert report.title == (
        "⚠️ Not verified: the tests of #5 only check that the reported error no longer occurs"
    )
    assert (
        "### Issue #5: ⚠️ Not verified: the reproducing test passes with this change, but only "
        "checks that the reported error no longer occurs" in report.comment
    )
    # With one that checks a wrong value is gone as well, the words name both.
    before, after = {"t.py::a": F, "t.py::b": F}, {"t.py::a": P, "t.py::b": P}
    both = _verdict(before, after, oracles={"t.py::a": crash, "t.py::b": WEAK_ORACLE})
    assert both.short_of_a_result() == "the reported error or wrong value is gone"
    # A test that checks the result makes it verified.
    strong = module_oracles("t.py", STRONG_TEST)["t.py::test_a"]
    assert _verdict(before, after, oracles={"t.py::a": crash, "t.py::b": strong}).success


def test_a_test_drafted_at_the_pull_request_is_offered_to_its_author() -> None:
    drafted = (
        "diff --git a/tests/test_x.py b/tests/test_x.py\n--- /dev/null\n+++ b/tests/test_x.py\n"
    )
    report = _report([IssueVerdict(8, VERIFIED, suggested=drafted + "+def test_x():\n+    ```\n")])
    comment = report.comment
    assert "### Issue #8: ✅ Verified" in comment
    assert "This issue had no reproducing test, so Reprobot drafted one from its text" in comment
    assert "<details><summary>The drafted test</summary>" in comment
    # The diff cannot close its fence early, whatever backticks it holds.
    assert "+def test_x():\n+    ```\n" in comment
    assert report.conclusion == "success"
    huge = _report([IssueVerdict(8, VERIFIED, suggested=drafted + "+x = 1\n" * 100_000)])
    assert len(huge.comment) <= COMMENT_LIMIT
