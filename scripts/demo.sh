#!/usr/bin/env bash
# The main job on the example project: sets the machine up, turns examples/durations into a git
# repository and runs its tests in the sandbox.
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
printf '\n== running the example'"'"'s tests in the sandbox\n' >&2
"$root/.venv/bin/reprobot" run-tests --repo "$work" --name example/durations --coverage
