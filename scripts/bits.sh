#!/usr/bin/env bash
# bits.sh — compute-mode outputs do not depend on the compiler, its
# optimisation level, the vector path of the tile products or the threads.
# Builds fasim with gcc and clang at -O0 and -O2, runs the same compute-mode
# cases with each (every loop order, fp16/bf16/fp32, causal and not, partial
# blocks, d = 1, .npy inputs, and the kernels' CPU path), and compares the
# bytes of every --out file across the builds; the first build also runs each
# case on the scalar path (FASIM_SIMD=scalar, ref_tile.h's loops, one thread)
# and on each narrower vector path this CPU runs, forced at run time
# (FASIM_SIMD=sse, avx2: what a CPU without AVX-512 takes), with two threads.
#
# Usage: scripts/bits.sh [--ci]
#   --ci   one pair of builds (gcc -O2 against clang -O0) and the scalar path
#          against the widest, as CI runs it
# Exit status 0 when every output is bit-identical across the builds and
# paths, 1 when one differs (the differing cases are listed), 2 for a build
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh clang

builds=("gcc -O0" "gcc -O2" "clang -O0" "clang -O2")
# Runs of the first build beside the builds: the path (FASIM_SIMD) and --jobs.
paths=("scalar 1" "sse 2" "avx2 2")
if [ "${1:-}" = "--ci" ]; then
  builds=("gcc -O2" "clang -O0")
  paths=("scalar 1")
fi

dirs=()
for b in "${builds[@]}"; do
  read -r cc opt <<<"$b"
  dir="build-bits-$cc$opt"
  # Only the executable: no tests, no CUDA, no SDL. The project's own flags
  # (-ffp-contract=off, no fast-math, -mfma where the CPU has it) apply.
  CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="$opt" \
      -DFASIM_BUILD_TESTS=OFF -DFASIM_WITH_CUDA=OFF -DFASIM_WITH_SDL2=OFF \
      -DFASIM_WERROR=ON >/dev/null || exit 2
  cmake --build "$dir" -j"$(nproc)" --target fasim >/dev/null || exit 2
  dirs+=("$dir")
done

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
shape=(--N 200 --d 40 --M 24K)   # 200 rows: every plan has a partial last block
cases=()
for algo in naive fa1 fa2; do
  for dt in fp16 bf16 fp32; do
    cases+=("$algo-$dt|${shape[*]} --algo $algo --dtype $dt")
    cases+=("$algo-$dt-causal|${shape[*]} --algo $algo --dtype $dt --causal")
  done
  cases+=("$algo-N1|--N 1 --d 8 --M 4K --algo $algo")
  cases+=("$algo-d1|--N 77 --d 1 --M 4K --algo $algo --seed 9")
done

status=0
also=""
for p in "${paths[@]}"; do
  read -r simd j <<<"$p"
  also+="${also:+; }FASIM_SIMD=$simd --jobs $j"
done
echo "the builds: ${builds[*]}; and ${builds[0]} with $also"
printf '%-22s %-18s %s\n' case "sha256 (first 16)" "identical across all"
run_case() {          # name, args, whether the command takes --jobs
  local name=$1 args=$2 jobs=$3 ref="" same=yes runs=()
  for k in "${!dirs[@]}"; do runs+=("$k|"); done
  for p in "${paths[@]}"; do
    read -r simd j <<<"$p"
    runs+=("0|$simd|$j")
  done
  for k in "${!runs[@]}"; do
    IFS='|' read -r b simd j <<<"${runs[$k]}"
    local f="$out/$name.$k.npy" extra=()
    [ -n "$j" ] && [ "$jobs" = 1 ] && extra=(--jobs "$j")
    # shellcheck disable=SC2086
    env ${simd:+FASIM_SIMD=$simd} "${dirs[$b]}/cli/fasim" $args "${extra[@]}" --out "$f" >/dev/null
    local h
    h=$(sha256sum "$f" | cut -c1-16)
    if [ -z "$ref" ]; then ref=$h; elif [ "$h" != "$ref" ]; then same=NO; fi
  done
  printf '%-22s %-18s %s\n' "$name" "$ref" "$same"
  [ $same = yes ] || status=1
}
for c in "${cases[@]}"; do
  run_case "${c%%|*}" "--compute ${c#*|}" 1
done
# .npy inputs: the first build's fa2 output (float32, 200 x 40) as Q, K and V.
"${dirs[0]}/cli/fasim" "${shape[@]}" --algo fa2 --dtype fp32 --out "$out/x.npy" >/dev/null
run_case "npy-inputs-fa1" "--q $out/x.npy --k $out/x.npy --v $out/x.npy --M 24K --algo fa1" 1
# The kernels, through their CPU execution path.
for algo in naive fa1 fa2; do
  run_case "gpu-cpu-$algo" "gpu --backend cpu ${shape[*]} --algo $algo" 0
done
exit $status
