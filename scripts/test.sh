#!/usr/bin/env bash
# Sets the machine up, then runs the linters and the whole test suite (Docker tests included).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
cd "$root"
printf '\n== ruff\n' >&2
.venv/bin/ruff check src tests benchmarks
printf '\n== mypy\n' >&2
.venv/bin/mypy
printf '\n== pytest\n' >&2
# -v: each test's name as it starts (a slow one shows what it is waiting on); -ra: every skip
# and failure with its reason; the ten slowest tests; pytest's own last line gives the time.
exec .venv/bin/python -m pytest -p no:cacheprovider -v -ra --durations=10 "$@"
