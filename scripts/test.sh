#!/usr/bin/env bash
# test.sh — the README's second command: build if needed and run the whole
# test suite through ctest. With --sanitize, build and run it again under
# AddressSanitizer + UndefinedBehaviorSanitizer (in build-asan/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/configure.sh
fasim_configure build
cmake --build build -j"$(nproc)"
# The page (build/web/) where emscripten is installed; the suite's test_web
# loads it in chromium.
if command -v emcmake >/dev/null; then
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" cmake --build build --target web
fi
(cd build && ctest --output-on-failure -j"$(nproc)")
if [ "${1:-}" = "--sanitize" ]; then
  fasim_configure build-asan -DFASIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
  cmake --build build-asan -j"$(nproc)"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$(nproc)")
fi
