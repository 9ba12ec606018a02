#!/usr/bin/env bash
# configure.sh — how the scripts configure a build folder, said once.
# Sourced by quickstart.sh and test.sh, so that the README's two commands
# configure build/ the same way and the second rebuilds nothing the first
# built. Warnings are errors only when FASIM_WERROR says so (CI sets ON);
# unset, the folder keeps what it had (OFF in a new one).
#
# Usage: source scripts/configure.sh; fasim_configure DIR [cmake options...]
fasim_configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release \
        ${FASIM_WERROR:+-DFASIM_WERROR="$FASIM_WERROR"} "$@" >/dev/null
}
