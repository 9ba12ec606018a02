#!/usr/bin/env bash
# deps.sh — install, with apt-get, whatever fasim's build and tests need and
# this machine lacks. Safe to run again: it installs nothing that is present.
# Usage: scripts/deps.sh [extra-package ...]
set -euo pipefail

# gnuplot-nox draws `fasim sweep --plot`, which the README's examples use.
# libsdl2-ttf-dev and fonts-dejavu-core: the SDL view's scalable text.
# libgif-dev: `fasim view --record F.gif` (giflib writes the GIF).
need=(cmake make gcc libcmocka-dev libncurses-dev tmux libsdl2-dev libsdl2-ttf-dev
      fonts-dejavu-core gnuplot-nox libgif-dev "$@")
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "fasim: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "fasim: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
