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
# -ra: every skip and failure with its reason; the slowest tests at the end; one line per file.
started=$(date +%s)
status=0
.venv/bin/python -m pytest -p no:cacheprovider -ra --durations=10 "$@" || status=$?
printf '\n== pytest took %s s\n' "$(( $(date +%s) - started ))" >&2
exit "$status"
