#!/bin/sh
# Turns a Debian image with Python (a bootstrapped root filesystem, or python:X.Y-slim) into a
# Reprobot sandbox base image. Runs as root with network, inside a build container; the files it
# installs arrive in /run/reprobot.
set -eu
# The host's package-index settings, exported for this script only.
if [ -f /run/reprobot/pip.env ]; then set -a; . /run/reprobot/pip.env; set +a; fi
# What Reprobot itself needs: git and patch apply test patches, gcc and libc6-dev build packages
# that have no wheel, ca-certificates reach the package index.
REPROBOT_PACKAGES="git patch gcc libc6-dev ca-certificates"
# The system tools test suites commonly shell out to or read, in every sandbox: test runs have
# no network, so what a suite expects of the system must be in the image (README, "How a test
# run is sandboxed"). One list, kept short:
#   less     a pager: pydoc, git and IPython page their output, and their tests check it
#   git      version-control helpers and setuptools-scm run it
#   locales  the locales of LOCALES below, which tests switch to
#   tzdata   the time zone database zoneinfo, dateutil and pandas read (/usr/share/zoneinfo)
#   file     libmagic's command, which tests of file-type detection call
#   make     the Makefile targets a project's test session runs before its tests (generated
#            code, data), which the environment's build runs too
# A name ending in "?" is installed where the Debian release has it: trixie moved the old zone
# names (US/Eastern, which many test suites use) into tzdata-legacy.
TEST_TOOLS="less git locales tzdata tzdata-legacy? file make"
LOCALES="C.UTF-8 en_US.UTF-8"
apt-get update
wanted=""
for name in $REPROBOT_PACKAGES $TEST_TOOLS; do
  case $name in
    *\?) name=${name%\?}; apt-cache show "$name" >/dev/null 2>&1 || continue ;;
  esac
  wanted="$wanted $name"
done
# shellcheck disable=SC2086  # one word per package
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $wanted
rm -rf /var/lib/apt/lists/*
for locale in $LOCALES; do echo "$locale UTF-8"; done > /etc/locale.gen
locale-gen
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
