"""How many candidate patches a maintainer opens to find a correct one: in random order (the
random-selection baseline, RS-85 and RS-95), and grade by grade in the order the filter's
verdicts give.

- **Random selection (RS)**: a maintainer opens the n candidate patches of one issue in a
  uniformly random order, without replacement. With c correct patches, the probability that one
  of the first k is correct is 1 − C(n−c, k)/C(n, k). RS-85 (RS-95) is the smallest k with that
  probability ≥ 0.85 (0.95); it is undefined when c = 0. The expected number of patches opened
  up to and including the first correct one is (n+1)/(c+1).
- **Filter effort**: the maintainer opens the patches grade by grade, each grade in random
  order: the accepted (verified) ones first, then the rejected ones whose tests went F→P but
  only show the crash or the wrong value gone (weak), then the rest. The filter's 85 % (95 %)
  effort is the smallest k for which a correct patch is among the first k opened with
  probability ≥ 0.85 (0.95). Its expected effort is o + (n_j+1)/(c_j+1), where grade j is the
  first with c_j > 0 correct patches of its n_j and o counts the patches of the grades before
  it. Fewer inspections than RS at the same confidence is "better". With two grades (accepted,
  then every rejected patch) this is the study's accepted-first order.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from reprobot.bench.pod.classification import FilterCall


def _check_counts(n: int, correct: int) -> None:
    if n < 0 or not 0 <= correct <= n:
        raise ValueError(f"need 0 <= correct <= n, got n={n!r}, correct={correct!r}")


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence <= 1:
        raise ValueError(f"confidence must be in (0, 1], got {confidence!r}")


def _reaches(probability: Fraction, confidence: float) -> bool:
    # Exact comparison with the confidence read as the decimal it is written as (0.95 is 19/20),
    # so that a probability of exactly 0.95 (e.g. 19 of 20 patches opened) counts as reaching it.
    return probability >= Fraction(repr(confidence))


def _p_found_exact(n: int, correct: int, k: int) -> Fraction:
    _check_counts(n, correct)
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k!r}")
    if correct == 0:
        return Fraction(0)
    k = min(k, n)
    return 1 - Fraction(math.comb(n - correct, k), math.comb(n, k))


def p_found_random(n: int, correct: int, k: int) -> float:
    """Probability that at least one of the first k of n patches, opened in a uniformly random
    order, is one of the ``correct`` correct ones: 1 − C(n−correct, k)/C(n, k). It is 0 when
    correct = 0 and 1 when k >= n and correct > 0."""
    return float(_p_found_exact(n, correct, k))


def rs_inspections(n: int, correct: int, confidence: float) -> int | None:
    """The smallest k in 1..n with ``p_found_random(n, correct, k) >= confidence`` (RS-85 at
    0.85, RS-95 at 0.95); None when there is no correct patch to find."""
    _check_counts(n, correct)
    _check_confidence(confidence)
    if correct == 0:
        return None
    return next(k for k in range(1, n + 1) if _reaches(_p_found_exact(n, correct, k), confidence))


def expected_first_correct(n: int, correct: int) -> float | None:
    """Expected number of patches opened, in uniformly random order, up to and including the
    first correct one: (n+1)/(correct+1); None when there is no correct patch."""
    _check_counts(n, correct)
    if correct == 0:
        return None
    return (n + 1) / (correct + 1)


# A grade of patches a maintainer opens together: (patches, correct ones among them).
Grade = tuple[int, int]


def _grades_p_found_exact(grades: Sequence[Grade], k: int) -> Fraction:
    opened = 0
    for n, correct in grades:
        _check_counts(n, correct)
        if k <= opened + n:
            # Every grade before this one was opened in vain (one with a correct patch returned).
            return _p_found_exact(n, correct, max(k - opened, 0))
        if correct > 0:
            return Fraction(1)
        opened += n
    return Fraction(0)


def grades_p_found(grades: Sequence[Grade], k: int) -> float:
    """Probability that a correct patch is among the first k opened when the grades are opened
    in order, the patches of each in uniformly random order."""
    return float(_grades_p_found_exact(grades, k))


def grades_inspections(grades: Sequence[Grade], confidence: float) -> int | None:
    """The smallest k with ``grades_p_found(grades, k) >= confidence``; None when no patch is
    correct."""
    _check_confidence(confidence)
    for n, correct in grades:
        _check_counts(n, correct)
    if not any(correct for _, correct in grades):
        return None
    total = sum(n for n, _ in grades)
    return next(
        k for k in range(1, total + 1) if _reaches(_grades_p_found_exact(grades, k), confidence)
    )


def expected_grades_inspections(grades: Sequence[Grade]) -> float | None:
    """Expected number of patches opened, grade by grade, up to and including the first correct
    one; None when no patch is correct."""
    opened = 0
    for n, correct in grades:
        _check_counts(n, correct)
        if correct > 0:
            return opened + (n + 1) / (correct + 1)
        opened += n
    return None


@dataclass(frozen=True)
class IssueEffort:
    """How many patches of one issue a maintainer opens to find a correct one, with and without
    the filter; the filter's figures open its grades in order (see ``grades``)."""

    issue: str
    patches: int
    correct: int
    accepted: int
    accepted_correct: int
    rs85: int | None
    rs95: int | None
    filter85: int | None
    filter95: int | None
    expected_random: float | None
    expected_filter: float | None
    # Rejected patches whose tests went F->P but only show the crash or the wrong value gone.
    weak: int = 0
    weak_correct: int = 0

    @property
    def rejected(self) -> int:
        return self.patches - self.accepted

    @property
    def rejected_correct(self) -> int:
        return self.correct - self.accepted_correct

    def grades(self, by_grade: bool = True) -> list[Grade]:
        """Accepted, weak, the rest; or (``by_grade`` False) accepted, then every rejected one."""
        if not by_grade:
            return [(self.accepted, self.accepted_correct), (self.rejected, self.rejected_correct)]
        return [
            (self.accepted, self.accepted_correct),
            (self.weak, self.weak_correct),
            (self.rejected - self.weak, self.rejected_correct - self.weak_correct),
        ]

    def versus_rs(self, confidence: float = 0.95, by_grade: bool = True) -> str:
        """How the filter compares with RS at this confidence: "better" when it needs fewer
        inspections to find a correct patch, "same" when as many, "worse" when more, "n/a" when
        no patch of the issue is correct."""
        ours = grades_inspections(self.grades(by_grade), confidence)
        theirs = rs_inspections(self.patches, self.correct, confidence)
        if ours is None or theirs is None:
            return "n/a"
        if ours < theirs:
            return "better"
        return "same" if ours == theirs else "worse"


def issue_effort(filter_calls: Sequence[FilterCall]) -> list[IssueEffort]:
    """One ``IssueEffort`` per issue (one filter call per candidate patch), sorted by issue id."""
    by_issue: dict[str, list[FilterCall]] = defaultdict(list)
    for filter_call in filter_calls:
        by_issue[filter_call.issue].append(filter_call)
    rows = []
    for issue in sorted(by_issue):
        group = by_issue[issue]
        n = len(group)
        correct = sum(j.actual for j in group)
        accepted = sum(j.predicted for j in group)
        accepted_correct = sum(j.predicted and j.actual for j in group)
        weak = [j for j in group if j.weak and not j.predicted]
        row = IssueEffort(
            issue=issue,
            patches=n,
            correct=correct,
            accepted=accepted,
            accepted_correct=accepted_correct,
            rs85=rs_inspections(n, correct, 0.85),
            rs95=rs_inspections(n, correct, 0.95),
            filter85=None,
            filter95=None,
            expected_random=expected_first_correct(n, correct),
            expected_filter=None,
            weak=len(weak),
            weak_correct=sum(j.actual for j in weak),
        )
        grades = row.grades()
        rows.append(
            replace(
                row,
                filter85=grades_inspections(grades, 0.85),
                filter95=grades_inspections(grades, 0.95),
                expected_filter=expected_grades_inspections(grades),
            )
        )
    return rows


def tally_versus_rs(
    rows: Iterable[IssueEffort], confidence: float = 0.95, by_grade: bool = True
) -> dict[str, int]:
    """How many issues the filter does better / the same / worse than RS on (and "n/a")."""
    tally = {"better": 0, "same": 0, "worse": 0, "n/a": 0}
    for row in rows:
        tally[row.versus_rs(confidence, by_grade)] += 1
    return tally
