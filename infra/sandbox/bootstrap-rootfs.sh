#!/bin/sh
# Builds a minimal Debian root filesystem for a sandbox base image when no container registry
# answers, and writes it as a tar ready for `docker import`.
# Usage: bootstrap-rootfs.sh SUITE MIRROR OUT.tar   (as root; needs debootstrap)
set -eu
suite=$1 mirror=$2 out=$3
root=$(mktemp -d /var/tmp/reprobot-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
# python3-venv brings ensurepip; gcc, libc6-dev and python3-dev let packages without wheels build;
# git and patch apply test patches; tar unpacks the tree streamed in at run time.
debootstrap --variant=minbase \
  --include=python3,python3-venv,python3-dev,gcc,libc6-dev,git,patch,ca-certificates,tar \
  "$suite" "$root" "$mirror"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/* "$root"/root/.cache
tar --numeric-owner -C "$root" -cf "$out" .
