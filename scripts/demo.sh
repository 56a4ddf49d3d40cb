#!/usr/bin/env bash
# The main job on the example project: sets the machine up, turns examples/durations into a git
# repository, and reproduces the bug its ISSUE.md reports: drafts tests, runs them on the commit
# in the sandbox, and prints the chosen test and the failure it shows.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
work="$root/.work/example"
rm -rf "$work"
mkdir -p "$work"
cp -r "$root/examples/durations/." "$work/"
git -C "$work" init -q -b main
git -C "$work" add -A
git -C "$work" -c user.name=reprobot -c user.email=reprobot@example.invalid commit -q -m "durations 0.3.0"
printf '\n== reproducing the issue of the example (examples/durations/ISSUE.md)\n' >&2
"$root/.venv/bin/reprobot" reproduce --repo "$work" --name example/durations \
  --issue "$root/examples/durations/ISSUE.md"
