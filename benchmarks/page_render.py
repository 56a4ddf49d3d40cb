"""Server time of a report page: a verdict of 200 tests (each with a failure on the base) and a
change of 2,000 lines, rendered as the App's route does (the stored document read and checked,
then the template rendered), against the 50 ms a page may take. Making the document, which
highlights every line once when the job finishes, is timed on its own.

    .venv/bin/python benchmarks/page_render.py [--tests 200] [--lines 2000] [--repeat 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from pydantic import TypeAdapter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from reprobot.bot.pages.documents import Page, verdict_page  # noqa: E402
from reprobot.bot.pages.html import render_page  # noqa: E402
from reprobot.validation.results.testrun import FileCoverage, Outcome, TestRun  # noqa: E402
from reprobot.validation.source.patch import Patch  # noqa: E402
from reprobot.validation.verify import Verdict, grade  # noqa: E402

FAILURE = (
    "".join(f"    frame {n}: value = compute(value, {n})  # <b>not markup</b>\n" for n in range(40))
    + "E   AssertionError: assert 41 == 42\n"
)


def verdict(tests: int, lines: int) -> Verdict:
    """A verdict whose fix is a diff of ``lines`` lines (half removed, half added) in one module,
    part of it run by the tests."""
    old = "".join(f"def f{n}(x):\n    return x + {n}\n" for n in range(lines // 4))
    new = "".join(f"def f{n}(x):\n    return x - {n}\n" for n in range(lines // 4))
    body = "".join(f"-{line}\n" for line in old.splitlines())
    body += "".join(f"+{line}\n" for line in new.splitlines())
    count = len(old.splitlines())
    diff = f"--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,{count} +1,{count} @@\n{body}"
    statements = frozenset(range(1, count + 1))
    ran = frozenset(n for n in statements if n % 4 != 0)
    ids = [f"tests/test_mod.py::test_case_{n}[<param {n}>]" for n in range(tests)]
    before = TestRun(
        outcomes={t: Outcome.FAILED for t in ids},
        failures={t: FAILURE for t in ids},
        coverage={"pkg/mod.py": FileCoverage(statements=statements, executed=ran)},
        log_excerpt=FAILURE * 20,
    )
    after = TestRun(
        outcomes={t: Outcome.PASSED for t in ids},
        coverage={"pkg/mod.py": FileCoverage(statements=statements, executed=ran)},
        log_excerpt=FAILURE * 20,
    )
    return grade(
        before,
        after,
        Patch(diff),
        {"pkg/mod.py": old.encode()},
        {"pkg/mod.py": new.encode()},
        "a" * 40,
        "b" * 40,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    graded = verdict(args.tests, args.lines)
    started = time.perf_counter()
    document = verdict_page(graded, repo="acme/widgets", tests_diff="", pull=7, issues=[3])
    made_s = time.perf_counter() - started
    stored = document.model_dump_json()
    reader: TypeAdapter[Page] = TypeAdapter(Page)
    render_page(reader.validate_json(stored))  # templates compiled once per process
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        html = render_page(reader.validate_json(stored))
        times.append(time.perf_counter() - started)
    shown = sum(len(h.lines) for f in document.change for h in f.hunks)
    print(
        f"verdict: {len(document.tests)} tests, {shown} diff lines shown, "
        f"{document.coverage.covered} of {document.coverage.executable} changed lines run"
    )
    print(f"document made (highlighting included), once per job: {made_s * 1000:.0f} ms")
    print(f"stored document: {len(stored) / 1024:.0f} KiB; page: {len(html) / 1024:.0f} KiB")
    print(
        f"page served (document read + rendered), {args.repeat} runs: "
        f"median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms "
        f"(target: 50 ms)"
    )
    return 0 if statistics.median(times) <= 0.050 else 1


if __name__ == "__main__":
    sys.exit(main())
