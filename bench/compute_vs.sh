#!/usr/bin/env bash
# compute_vs.sh — compute mode against an earlier fasim, in one run: builds
# REV (default b0d08b4^, the last commit before compute mode's speed work:
# scalar tile products, the oracle's plain loops) into a temporary folder,
# then times `fasim --compute --json` of both builds alternately, naive, fa1
# and fa2 at N = 4096, d = 64, fp32, M = 96K, one thread (--jobs 1 where the
# build has it), and prints runs[].seconds (the loop order alone, its tensors'
# allocation included, not the oracle), the best of ROUNDS rounds each, and
# the speedup.
#
# Usage: bench/compute_vs.sh [BUILD_DIR (build)] [REV] [ROUNDS (3)]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rev=${2:-b0d08b4^}
rounds=${3:-3}
new="$build/cli/fasim"
[ -x "$new" ] || { echo "compute_vs.sh: $new not built (cmake --build $build --target fasim)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/src" "$rev"
cmake -S "$tmp/src" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release -DFASIM_WITH_CUDA=OFF \
      -DFASIM_BUILD_TESTS=OFF >/dev/null
cmake --build "$tmp/build" -j2 --target fasim >/dev/null
old="$tmp/build/cli/fasim"
jobs=""
"$new" --help 2>&1 | grep -q -- '--jobs' && jobs="--jobs 1"
sec() { python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["seconds"])'; }
args="--compute --N 4096 --d 64 --dtype fp32 --M 96K --json"
echo "compute mode, N = 4096, d = 64, fp32, M = 96K, one thread: runs[].seconds, best of $rounds"
echo "before: $(git log -1 --format='%h %ad' --date=short "$rev"); after: $(git log -1 --format='%h %ad' --date=short HEAD)$(git diff --quiet HEAD || echo ' (with local changes)')"
printf "  %-6s %10s %10s %9s\n" algo "before s" "after s" speedup
for a in naive fa1 fa2; do
  bo=1e9; bn=1e9
  for ((k = 0; k < rounds; k++)); do
    o=$("$old" $args --algo $a | sec)
    n=$("$new" $args $jobs --algo $a | sec)
    bo=$(python3 -c "print(min($bo, $o))"); bn=$(python3 -c "print(min($bn, $n))")
  done
  printf "  %-6s %10.3f %10.3f %8.1fx\n" $a "$bo" "$bn" "$(python3 -c "print($bo / $bn)")"
done
