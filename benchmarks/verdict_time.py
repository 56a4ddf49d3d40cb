"""Time of a warm verdict: the example project's fix (``examples/durations``) judged against
a test of its issue, with the environment image already built, as the App judges a pull request
(the reproducing tests and the guard tests, each before and after the fix: four sandbox runs).

The two ways a verdict can run its pairs are timed in the same run, alternating: each pair's two
sandboxes side by side (the default) and one after the other. Medians, and their ratio.

    .venv/bin/python benchmarks/verdict_time.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.support.example_patches import FIX, NEW_TEST  # noqa: E402

from reprobot.settings import Settings  # noqa: E402
from reprobot.validation import (  # noqa: E402
    Patch,
    RepoSnapshot,
    RunLimits,
    connect,
    detect_environment,
    ensure_environment,
    verify,
)


def example_repo(folder: Path) -> Path:
    """The example project as a one-commit git repository."""
    repo = folder / "durations"
    shutil.copytree(ROOT / "examples" / "durations", repo)
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], [*ident, "commit", "-qm", "0.3"]):
        subprocess.run(["git", "-C", str(repo), *command], check=True)
    return repo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    settings = Settings()
    client = connect()
    with tempfile.TemporaryDirectory() as tmp:
        repo = example_repo(Path(tmp))
        base = RepoSnapshot.from_git(repo, "HEAD", "example/durations")
        env = ensure_environment(client, detect_environment(base).spec, base, settings)
        tests, fix = Patch(NEW_TEST, name="tests.diff"), Patch(FIX, name="fix.diff")
        limits = RunLimits.from_settings(settings)
        times: dict[bool, list[float]] = {True: [], False: []}
        statuses = set()
        verify(client, env, base, tests, fix=fix, limits=limits)  # warms the page cache
        for _ in range(args.repeat):
            for at_once in (True, False):
                started = time.perf_counter()
                verdict = verify(client, env, base, tests, fix=fix, limits=limits, at_once=at_once)
                times[at_once].append(time.perf_counter() - started)
                statuses.add((verdict.status, len(verdict.guard_modules)))
    together, apart = (statistics.median(times[k]) for k in (True, False))
    print(f"verdicts: {sorted(statuses)} (status, guard modules); {args.repeat} of each")
    print(f"pairs side by side:     median {together:.2f} s (min {min(times[True]):.2f})")
    print(f"pairs one after other:  median {apart:.2f} s (min {min(times[False]):.2f})")
    print(f"ratio: {together / apart:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
