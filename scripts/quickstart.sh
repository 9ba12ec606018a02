#!/usr/bin/env bash
# quickstart.sh — the README's first command: install what is missing, build,
# and run the classroom report (fasim --N 1024 --M 96K).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/configure.sh
fasim_configure build
cmake --build build -j"$(nproc)"
echo
./build/cli/fasim --N 1024 --M 96K
