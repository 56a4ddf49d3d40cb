"""What a report page shows, as documents: stored with a job's results (JSON), rendered later.

Pure builders: a ``Verdict`` (or a reproduction's facts) in, a document out. Every text that
came from a sandbox or a pull request is made printable here (no terminal escapes, no control
characters, no unencodable code points) and bounded, so a stored document is safe to render."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from reprobot.bot.pages.diff_view import DiffFile, diff_files
from reprobot.bot.render.markdown import trim
from reprobot.bot.render.pull import IssueVerdict, OwnTests
from reprobot.bot.render.reproduction import NOT_REPRODUCED_HEADLINE, reproduced_headline
from reprobot.bot.render.verdict import TRUST_NOTE, headline, kind_text
from reprobot.console import printable
from reprobot.generation import Reproduction
from reprobot.validation import EnvImage, Oracle, TestRun, Verdict, pinned_run_settings

# Bounds on what a document keeps of untrusted text: a page stays light, a row stays small.
FAILURE_LIMIT = 20_000
LOG_LIMIT = 60_000
DIFF_LIMIT = 400_000
MAX_TESTS = 2_000
MAX_PACKAGES = 1_000

Role = Literal["reproducing", "guard"]


def clean(text: str, limit: int, keep: str = "head") -> str:
    """``text`` as a page may show it: printable, valid UTF-8, at most ``limit`` characters (the
    last ones with ``keep="tail"``: where a traceback or a log says what went wrong)."""
    safe = printable(text).encode("utf-8", "replace").decode("utf-8")
    return trim(safe, limit, keep=keep)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PageTest(_Frozen):
    id: str
    role: Role = "reproducing"
    before: str
    after: str | None = None
    kind: str = ""
    words: str = ""
    fail_to_pass: bool = False
    fails_after: bool = False
    checks: str = ""
    assertion: str = ""
    failure_before: str = ""
    failure_after: str = ""


class RunSide(_Frozen):
    """One run of the tests: the base, or the head (the tree with the change)."""

    side: Literal["base", "head"]
    sha: str = ""
    duration_s: float = 0.0
    pytest_exit: int | None = None
    error: str | None = None
    limits_hit: tuple[str, ...] = ()
    patches: tuple[str, ...] = ()
    log: str = ""


class EnvironmentView(_Frozen):
    image: str
    python: str
    test_command: str
    as_of: str = ""
    as_of_why: str = ""
    packages: tuple[str, ...] = ()
    relaxed: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    # What every run pinned (hash seed, time zone, locale); "" on pages made before it was said.
    pinned: str = ""


class CoverageFigure(_Frozen):
    covered: int
    executable: int
    tracing: tuple[str, ...] = ()

    @property
    def ratio(self) -> float | None:
        return self.covered / self.executable if self.executable else None


class VerdictPage(_Frozen):
    kind: Literal["verdict"] = "verdict"
    repo: str
    pull: int | None = None
    issues: tuple[int, ...] = ()
    base_sha: str
    head_sha: str | None = None
    status: str
    headline: str
    reasons: tuple[str, ...] = ()
    review: tuple[str, ...] = ()
    harness_changes: tuple[str, ...] = ()
    trust_note: str = ""
    counts: tuple[tuple[str, int], ...] = ()
    tests: tuple[PageTest, ...] = ()
    tests_left_out: int = 0
    tests_diff: str = ""
    tests_files: tuple[DiffFile, ...] = ()
    change: tuple[DiffFile, ...] = ()
    coverage: CoverageFigure
    runs: tuple[RunSide, ...] = ()
    environment: EnvironmentView | None = None
    made_at: datetime


class TriedDraft(_Frozen):
    method: str
    # The draft's outcome on R; pages stored before it had this name say "verdict".
    outcome: str = Field(validation_alias=AliasChoices("outcome", "verdict"))
    summary: str


class ReproductionPage(_Frozen):
    kind: Literal["reproduction"] = "reproduction"
    repo: str
    issue: int | None = None
    # The issue's title, as untrusted text: shown as text, never as markup.
    issue_title: str = ""
    base_sha: str
    reproduced: bool
    headline: str
    method: str = ""
    test_command: str = ""
    tests: tuple[PageTest, ...] = ()
    failure: str = ""
    tests_diff: str = ""
    tests_files: tuple[DiffFile, ...] = ()
    tried: tuple[TriedDraft, ...] = ()
    config_errors: tuple[str, ...] = ()
    sandbox_runs: int = 0
    duration_s: float = 0.0
    environment: EnvironmentView | None = None
    made_at: datetime


class PullSection(_Frozen):
    """One part of a pull request's page: a linked issue's verdict, or the pull request's own
    tests; ``verdict`` None with ``note`` saying why there was nothing to run."""

    title: str
    verdict: VerdictPage | None = None
    note: str = ""


class PullPage(_Frozen):
    """The page of one head of a pull request: every section of its comment, in full."""

    kind: Literal["pull"] = "pull"
    repo: str
    pull: int
    base_sha: str
    head_sha: str
    conclusion: str
    title: str
    sections: tuple[PullSection, ...] = ()
    environment: EnvironmentView | None = None
    made_at: datetime


# A stored document names its kind, and is read as that kind alone.
Page = Annotated[VerdictPage | ReproductionPage | PullPage, Field(discriminator="kind")]


def _failure(run: TestRun, test_id: str) -> str:
    text = run.failures.get(test_id, "")
    return clean(text, FAILURE_LIMIT, keep="tail") if text else ""


def _oracle_words(oracle: Oracle | None) -> tuple[str, str]:
    if oracle is None:
        return "", ""
    return clean(oracle.checks, 2_000), clean(oracle.assertion, 2_000)


def run_side(side: Literal["base", "head"], run: TestRun, sha: str = "") -> RunSide:
    return RunSide(
        side=side,
        sha=sha,
        duration_s=round(run.duration_s, 3),
        pytest_exit=run.pytest_exit,
        error=clean(run.error, FAILURE_LIMIT, keep="tail") if run.error else None,
        limits_hit=tuple(sorted(run.limits_hit)),
        patches=tuple(
            clean(f"{p.name}: " + (f"applied ({p.method})" if p.applied else "did not apply"), 500)
            for p in run.patches
        ),
        log=clean(run.log_excerpt, LOG_LIMIT, keep="tail"),
    )


def packages_moment(as_of: str, as_of_why: str, built_at: str) -> tuple[str, str]:
    """When an image's packages really resolved, and why then: the bound the build resolved
    under, unless the build ended before it (a commit of today resolves as of tomorrow, which
    the index had not reached), or no bound (the newest releases at the end of the build).
    ISO 8601 UTC strings compare as times."""
    if built_at and (not as_of or built_at < as_of):
        return built_at, "the newest releases when the environment was built"
    return as_of, as_of_why


def environment_view(env: EnvImage, packages: Sequence[str] = ()) -> EnvironmentView:
    as_of, as_of_why = packages_moment(env.as_of, env.as_of_why, env.built_at)
    return EnvironmentView(
        image=env.tag,
        python=env.spec.python,
        test_command=clean(env.spec.test_cmd, 2_000),
        as_of=as_of,
        as_of_why=clean(as_of_why, 2_000),
        pinned=pinned_run_settings(),
        packages=tuple(clean(p, 300) for p in list(packages or env.packages)[:MAX_PACKAGES]),
        relaxed=tuple(clean(r, 300) for r in env.relaxed),
        skipped=tuple(clean(s, 300) for s in env.skipped),
    )


def _trust_words() -> str:
    words = TRUST_NOTE.removeprefix("_What this result rests on:_ ")
    return words[:1].upper() + words[1:]


def _verdict_tests(verdict: Verdict) -> list[PageTest]:
    # The project's own tests of the changed files, run beside the reproducing ones.
    guards = set(verdict.guard_modules)
    rows = []
    for test_id, t in verdict.transitions.items():
        checks, assertion = _oracle_words(verdict.oracle(test_id))
        rows.append(
            PageTest(
                id=clean(test_id, 2_000),
                role="guard" if test_id.split("::", 1)[0] in guards else "reproducing",
                before=t.before.value,
                after=t.after.value,
                kind=t.kind,
                words=kind_text(t.kind),
                fail_to_pass=t.fail_to_pass,
                fails_after=t.fails_after,
                checks=checks,
                assertion=assertion,
                failure_before=_failure(verdict.before, test_id) if not t.before.is_pass else "",
                failure_after=_failure(verdict.after, test_id) if not t.after.is_pass else "",
            )
        )
    # What decides the verdict first: tests that broke, then those fixed, then the rest.
    rows.sort(key=lambda r: (not r.fails_after, not r.fail_to_pass, r.role, r.id))
    return rows


def verdict_page(
    verdict: Verdict,
    *,
    repo: str,
    tests_diff: str,
    pull: int | None = None,
    issues: Sequence[int] = (),
    environment: EnvironmentView | None = None,
    made_at: datetime | None = None,
) -> VerdictPage:
    """The page of ``verdict``: the same headline as the comment, every test's two outcomes, the
    change with its lines marked run or not run, the runs and the environment."""
    tests = _verdict_tests(verdict)
    passing = verdict.status in ("verified", "weak", "needs_review")
    return VerdictPage(
        repo=repo,
        pull=pull,
        issues=tuple(issues),
        base_sha=verdict.base_sha,
        head_sha=verdict.head_sha,
        status=verdict.status,
        headline=headline(verdict),
        reasons=tuple(clean(r, 2_000) for r in verdict.reasons),
        review=tuple(clean(r, 2_000) for r in verdict.review),
        harness_changes=tuple(clean(h, 500) for h in verdict.harness_changes),
        trust_note=_trust_words() if passing else "",
        counts=tuple((kind_text(k), n) for k, n in verdict.counts().items()),
        tests=tuple(tests[:MAX_TESTS]),
        tests_left_out=max(0, len(tests) - MAX_TESTS),
        tests_diff=clean(tests_diff, DIFF_LIMIT),
        tests_files=diff_files(clean(tests_diff, DIFF_LIMIT)),
        change=diff_files(clean(verdict.fix.diff, DIFF_LIMIT), verdict.change_coverage),
        coverage=CoverageFigure(
            covered=verdict.change_coverage.covered,
            executable=verdict.change_coverage.executable,
            tracing=tuple(clean(t, 500) for t in verdict.tracing),
        ),
        runs=(
            run_side("base", verdict.before, verdict.base_sha),
            run_side("head", verdict.after, verdict.head_sha or ""),
        ),
        environment=environment,
        made_at=made_at or datetime.now(UTC),
    )


def reproduction_page(
    result: Reproduction,
    *,
    repo: str,
    issue: int | None,
    test_command: str,
    config_errors: Sequence[str] = (),
    environment: EnvironmentView | None = None,
    made_at: datetime | None = None,
    issue_title: str = "",
    probably: bool = False,
) -> ReproductionPage:
    """The page of a reproduction: the drafted tests and how they fail on the base, or, when
    nothing reproduced, what was tried and why each draft was not taken; ``probably``: a
    reproduction below the label's confidence, headed so."""
    chosen = result.chosen
    checks, assertion = _oracle_words(chosen.oracle if chosen else None)
    tests = tuple(
        PageTest(id=clean(t, 2_000), before="failed", checks=checks, assertion=assertion)
        for t in result.failing_tests[:MAX_TESTS]
    )
    tried = [(c.draft.method, c.outcome.value, c.reason) for c in result.candidates]
    tried += [(method, "no draft", why) for method, why in result.rejected]
    tests_diff = clean(result.test_patch, DIFF_LIMIT)
    return ReproductionPage(
        repo=repo,
        issue=issue,
        issue_title=clean(" ".join(issue_title.split()), 500),
        base_sha=result.base_sha,
        reproduced=result.reproduced,
        headline=reproduced_headline(result.base_sha, markdown=False, probably=probably)
        if result.reproduced
        else NOT_REPRODUCED_HEADLINE,
        method=clean(chosen.draft.method, 200) if chosen else "",
        test_command=clean(test_command, 2_000),
        tests=tests,
        failure=clean(chosen.detail or chosen.excerpt, FAILURE_LIMIT, keep="tail")
        if chosen
        else "",
        tests_diff=tests_diff,
        tests_files=diff_files(tests_diff) if tests_diff else (),
        tried=tuple(
            TriedDraft(method=clean(m, 200), outcome=clean(v, 200), summary=clean(w, 4_000))
            for m, v, w in tried
        ),
        config_errors=tuple(clean(e, 2_000) for e in config_errors),
        sandbox_runs=result.sandbox_runs,
        duration_s=round(result.duration_s, 1),
        environment=environment,
        made_at=made_at or datetime.now(UTC),
    )


def pull_page(
    *,
    repo: str,
    pull: int,
    base_sha: str,
    head_sha: str,
    conclusion: str,
    title: str,
    issues: Sequence[IssueVerdict],
    own_tests: OwnTests,
    environment: EnvironmentView | None = None,
    made_at: datetime | None = None,
) -> PullPage:
    """The page of a pull request's head: each linked issue's verdict, then its own tests."""
    moment = made_at or datetime.now(UTC)
    sections = []
    for item in issues:
        if item.verdict is None:
            sections.append(
                PullSection(title=f"Issue #{item.issue_number}: no verdict", note=item.note)
            )
            continue
        page = verdict_page(
            item.verdict,
            repo=repo,
            tests_diff=item.tests_diff,
            pull=pull,
            issues=(item.issue_number,),
            made_at=moment,
        )
        sections.append(
            PullSection(title=f"Issue #{item.issue_number}: {page.headline}", verdict=page)
        )
    if own_tests.verdict is not None:
        page = verdict_page(
            own_tests.verdict, repo=repo, tests_diff=own_tests.tests_diff, pull=pull, made_at=moment
        )
        sections.append(
            PullSection(title=f"The pull request's own tests: {page.headline}", verdict=page)
        )
    elif own_tests.test_files or own_tests.note:
        sections.append(
            PullSection(
                title="The pull request's own tests",
                note=f"This pull request {own_tests.note}." if own_tests.note else "",
            )
        )
    return PullPage(
        repo=repo,
        pull=pull,
        base_sha=base_sha,
        head_sha=head_sha,
        conclusion=conclusion,
        title=clean(title, 500),
        sections=tuple(sections),
        environment=environment,
        made_at=moment,
    )
