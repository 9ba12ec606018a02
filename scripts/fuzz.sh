#!/usr/bin/env bash
# fuzz.sh — build the libFuzzer targets (fuzz/) with clang, ASan and UBSan,
# and run each for SECONDS (default 30), starting from the committed corpus
# fuzz/corpus/TARGET/. New interesting inputs go to build-fuzz/corpus/TARGET/
# (not the repository); a crash, leak, timeout or failed property stops that
# target and leaves the input in build-fuzz/artifacts/. Exit status 1 if any
# target found something.
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET ...]   (targets: npy cli claims numbers plot)
# Environment: FUZZ_JOBS (targets run at once; default the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(npy cli claims numbers plot)
case $seconds in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number" >&2; exit 2;; esac

scripts/deps.sh clang libclang-rt-14-dev
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DFASIM_FUZZ=ON \
      -DFASIM_WITH_CUDA=OFF -DFASIM_WITH_SDL2=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" >/dev/null

mkdir -p build-fuzz/artifacts build-fuzz/logs
jobs=${FUZZ_JOBS:-$(nproc)}
run_one() {
  local t=$1
  mkdir -p "build-fuzz/corpus/$t"
  # -timeout: one input may take at most 30 s. The slowest legitimate input
  # plans three loop orders at causal N = 85M, M = 1 GiB: 0.08 s in the
  # release build, 0.8 s instrumented, and 14 s on a machine busy with a
  # build and three other fuzzers; a real hang runs on past any limit.
  # -rss_limit_mb: an allocation the limits should have refused shows up as
  # a finding; -dict where one is committed.
  local dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  "build-fuzz/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
      -max_len=4096 -print_final_stats=1 "${dict[@]}" \
      -artifact_prefix="build-fuzz/artifacts/${t}-" \
      "build-fuzz/corpus/$t" "fuzz/corpus/$t" >"build-fuzz/logs/$t.log" 2>&1
}
pids=() names=() status=0
for t in "${targets[@]}"; do
  [ -x "build-fuzz/fuzz/fuzz_$t" ] || { echo "fuzz.sh: no target '$t'" >&2; exit 2; }
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
  echo "fuzz: $t for $seconds s"
  run_one "$t" & pids+=($!) names+=("$t")
done
for k in "${!pids[@]}"; do
  t=${names[$k]}
  if wait "${pids[$k]}"; then r=ok; else r=FOUND; status=1; fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/logs/$t.log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "build-fuzz/logs/$t.log" | tail -1 | grep -o '[0-9]*' || echo '?')
  printf 'fuzz: %-8s %-6s %12s runs, coverage %s edges\n' "$t" "$r" "$runs" "$cov"
  if [ "$r" = FOUND ]; then
    grep -E 'ERROR|fuzz: |SUMMARY|Test unit written' "build-fuzz/logs/$t.log" | head -20 >&2 || true
  fi
done
exit $status
