#!/bin/sh
# Turns a Debian image with Python (a bootstrapped root filesystem, or python:X.Y-slim) into a
# Reprobot sandbox base image. Runs as root with network, inside a build container; the files it
# installs arrive in /run/reprobot.
set -eu
# The host's package-index settings, exported for this script only.
if [ -f /run/reprobot/pip.env ]; then set -a; . /run/reprobot/pip.env; set +a; fi
if ! command -v git >/dev/null || ! command -v patch >/dev/null || ! command -v gcc >/dev/null; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git patch gcc libc6-dev ca-certificates
  rm -rf /var/lib/apt/lists/*
fi
py=$(command -v python3)
id sandbox >/dev/null 2>&1 || useradd --uid 1000 --create-home --shell /bin/sh sandbox
"$py" -m venv /opt/reprobot/venv
venv=/opt/reprobot/venv/bin/python
# Old Debian pip and setuptools cannot build some projects; these bounds keep Python 3.9 working.
# pip 24.1 and later read package metadata strictly and stop at the first old release whose
# markers compare a non-version ('Invalid version: cpython', pyzmq 20's): environments that
# resolve as of an old commit meet many such releases, and pip 24.0 reads them as pip always had.
# wheel 0.46 requires packaging>=24 for its bdist_wheel command: an environment that pins an old
# packaging (astropy 1.3's harness pins 16.8) could then build no sdist at all; 0.45 vendors it.
"$venv" -m pip install --no-input -U "pip<24.1" "setuptools<70" "wheel<0.46"
"$venv" -m pip install --no-input --target /opt/reprobot/tools "coverage>=7.4,<7.7"
site=$("$venv" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp /run/reprobot/overlay.py "$site/_reprobot_overlay.py"
echo "import _reprobot_overlay" > "$site/00-reprobot-overlay.pth"
mkdir -p /work && chmod 1777 /work
rm -rf /root/.cache /tmp/*
