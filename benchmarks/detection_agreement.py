"""Whether the App and the command line detect the same environment for every repository of a
list (``bench repos``'s format): the App with the settings of ``.github/reprobot.yml`` as its
configuration reader takes them, the command line reading them itself. Prints each repository's
Python, install, test command and test requirements as detected, and the count that agree.

    .venv/bin/python benchmarks/detection_agreement.py --list benchmarks/repos_dev.txt --repos REPOS
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from reprobot.bench.repos.command import find_clone  # noqa: E402
from reprobot.bench.repos.repo_list import load_repo_list  # noqa: E402
from reprobot.bot.config.repo_file import parse_repo_config  # noqa: E402
from reprobot.errors import ReprobotError  # noqa: E402
from reprobot.validation import CONFIG_PATH, RepoSnapshot, detect_environment  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", type=Path, required=True)
    parser.add_argument("--repos", type=Path, required=True)
    args = parser.parse_args()
    agree = total = 0
    for entry in load_repo_list(args.list):
        try:
            path = find_clone(args.repos, entry.repo)
            snapshot = RepoSnapshot.from_git(path, entry.commit, entry.repo)
        except ReprobotError as exc:
            print(f"{entry.repo}: skipped ({exc})")
            continue
        config = parse_repo_config(snapshot.read_file(CONFIG_PATH)).config
        app = detect_environment(snapshot, settings=config)
        cli = detect_environment(snapshot)
        total += 1
        same = app == cli
        agree += same
        spec = cli.spec
        print(
            f"{entry.repo}: {'same' if same else 'DIFFERENT'}; Python {spec.python}; "
            f"install {spec.install!r}; test {spec.test_cmd!r}; "
            f"{len(spec.test_requirements)} test requirement(s); prepare {list(spec.prepare)}"
        )
    print(f"the App and the command line agree on {agree} of {total} repositories")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
