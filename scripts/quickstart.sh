#!/usr/bin/env bash
# quickstart.sh — the README's first command: install what is missing, build,
# and run the classroom report (fasim --N 1024 --M 96K).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
echo
./build/cli/fasim --N 1024 --M 96K
