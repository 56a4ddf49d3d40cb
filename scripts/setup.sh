#!/usr/bin/env bash
# Sets up a fresh machine for Reprobot: a Docker engine, debootstrap, a virtualenv with Reprobot
# and its development tools, and the sandbox base image. Safe to run again: every step checks
# first and skips what is already there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

say() { printf '\n== %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=""
apt_install() {
  if ! command -v apt-get >/dev/null; then
    echo "reprobot setup: please install $* (no apt-get on this machine)" >&2
    exit 2
  fi
  [ -n "$apt_updated" ] || { as_root apt-get update -q >/dev/null; apt_updated=1; }
  as_root env DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 apt-get install -y -q "$@" >/dev/null
}

engine_answers() { timeout 20 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

ensure_docker() {
  if command -v docker >/dev/null && engine_answers; then
    return
  fi
  say "no Docker engine answers: installing Debian's docker.io and starting the daemon"
  command -v dockerd >/dev/null || apt_install docker.io
  if ! engine_answers; then
    if command -v systemctl >/dev/null && systemctl is-system-running >/dev/null 2>&1; then
      as_root systemctl start docker || true
    fi
  fi
  if ! engine_answers; then
    as_root mkdir -p /var/log
    as_root sh -c 'nohup dockerd >/var/log/reprobot-dockerd.log 2>&1 &'
  fi
  for _ in $(seq 1 60); do
    engine_answers && return
    sleep 1
  done
  echo "reprobot setup: the Docker engine did not start; see /var/log/reprobot-dockerd.log" >&2
  exit 2
}

ensure_tools() {
  local missing=()
  command -v git >/dev/null || missing+=(git)
  # debootstrap builds the sandbox base image where no container registry answers.
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
  # Real PostgreSQL and Redis servers for the scale-out back-ends; the tests start throwaway
  # instances of their own (tests/support/servers.py).
  compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || missing+=(postgresql)
  command -v redis-server >/dev/null || missing+=(redis-server)
  # Checks infra/compose.yaml (the deployable stack).
  command -v docker-compose >/dev/null || missing+=(docker-compose)
  # A real browser for the report pages' tests, and the emoji font their headlines use.
  command -v chromium >/dev/null || missing+=(chromium)
  [ -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || missing+=(fonts-noto-color-emoji)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    apt_install "${missing[@]}"
  fi
  python3 - <<'PY' || { echo "reprobot setup: Python 3.11 or newer is needed" >&2; exit 2; }
import sys
sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY
}

ensure_venv() {
  if [ ! -x .venv/bin/python ]; then
    say "creating the virtualenv .venv"
    python3 -m venv .venv
  fi
  local stamp=.venv/.reprobot-installed
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    say "installing Reprobot and its development tools into .venv"
    .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev,scale]'
    touch "$stamp"
  fi
}

ensure_docker
ensure_tools
ensure_venv
say "the sandbox base image for Python ${REPROBOT_SETUP_PYTHON:-3.11}"
# Quiet when the image exists; otherwise a line per step (bootstrap, set-up) with its time.
.venv/bin/reprobot sandbox build --python "${REPROBOT_SETUP_PYTHON:-3.11}"
