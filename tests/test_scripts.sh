#!/usr/bin/env bash
# test_scripts.sh — the README's two commands configure build/ alike:
# scripts/test.sh, run after scripts/quickstart.sh, rebuilds nothing.
# Both configure through scripts/configure.sh; this builds a small target in
# a folder configured as quickstart.sh does, configures it again as test.sh
# does, and builds it again: nothing may be compiled.
# Usage: test_scripts.sh SOURCE_DIR
set -euo pipefail
src=$1
cd "$src"
fail() { echo "FAIL: $*" >&2; exit 1; }

for s in quickstart.sh test.sh; do
  grep -q '^fasim_configure build$' "scripts/$s" ||
    fail "scripts/$s does not configure build/ through fasim_configure"
  if grep -v '^ *#' "scripts/$s" | grep -q 'cmake -S'; then
    fail "scripts/$s configures a folder itself, not through scripts/configure.sh"
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source scripts/configure.sh
quick=(-DFASIM_WITH_CUDA=OFF -DFASIM_WITH_SDL2=OFF -DFASIM_BUILD_TESTS=OFF)

built() { cmake --build "$tmp/b" --target fasim_reference | grep -c 'Building C object' || true; }
(unset FASIM_WERROR; fasim_configure "$tmp/b" "${quick[@]}")        # as quickstart.sh
[ "$(built)" -gt 0 ] || fail "the first build compiled nothing"
(unset FASIM_WERROR; fasim_configure "$tmp/b" "${quick[@]}")        # as test.sh
[ "$(built)" -eq 0 ] || fail "configuring as test.sh does rebuilds what quickstart.sh built"
# The check can fail: a changed flag (CI's warnings as errors) does rebuild.
(export FASIM_WERROR=ON; fasim_configure "$tmp/b" "${quick[@]}")
[ "$(built)" -gt 0 ] || fail "FASIM_WERROR=ON rebuilt nothing: the check above proves nothing"
grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$tmp/b/CMakeCache.txt" ||
  fail "build type is not Release"

# The sanitizer folder is a Debug build: the later -D wins.
(fasim_configure "$tmp/a" "${quick[@]}" -DCMAKE_BUILD_TYPE=Debug)
grep -q '^CMAKE_BUILD_TYPE:STRING=Debug$' "$tmp/a/CMakeCache.txt" ||
  fail "fasim_configure DIR -DCMAKE_BUILD_TYPE=Debug is not a Debug build"
echo "ok: quickstart.sh and test.sh configure build/ alike"
