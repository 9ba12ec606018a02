#!/usr/bin/env bash
# bits.sh — compute-mode outputs do not depend on the compiler or its
# optimisation level. Builds fasim with gcc and clang at -O0 and -O2, runs the
# same compute-mode cases with each (every loop order, fp16/bf16/fp32, causal
# and not, partial blocks, .npy inputs, and the kernels' CPU path), and
# compares the bytes of every --out file across the builds.
#
# Usage: scripts/bits.sh [--ci]
#   --ci   one pair only (gcc -O2 against clang -O0), as CI runs it
# Exit status 0 when every output is bit-identical across the builds, 1 when
# one differs (the differing cases are listed), 2 for a build failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh clang

builds=("gcc -O0" "gcc -O2" "clang -O0" "clang -O2")
[ "${1:-}" = "--ci" ] && builds=("gcc -O2" "clang -O0")

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
printf '%-22s %-18s %s\n' case "sha256 (first 16)" "identical across: ${builds[*]}"
run_case() {          # name, args, extra
  local name=$1 args=$2 ref="" same=yes
  for k in "${!dirs[@]}"; do
    local f="$out/$name.$k.npy"
    # shellcheck disable=SC2086
    "${dirs[$k]}/cli/fasim" $args --out "$f" >/dev/null
    local h
    h=$(sha256sum "$f" | cut -c1-16)
    if [ -z "$ref" ]; then ref=$h; elif [ "$h" != "$ref" ]; then same=NO; fi
  done
  printf '%-22s %-18s %s\n' "$name" "$ref" "$same"
  [ $same = yes ] || status=1
}
for c in "${cases[@]}"; do
  run_case "${c%%|*}" "--compute ${c#*|}"
done
# .npy inputs: the first build's fa2 output (float32, 200 x 40) as Q, K and V.
"${dirs[0]}/cli/fasim" "${shape[@]}" --algo fa2 --dtype fp32 --out "$out/x.npy" >/dev/null
run_case "npy-inputs-fa1" "--q $out/x.npy --k $out/x.npy --v $out/x.npy --M 24K --algo fa1"
# The kernels, through their CPU execution path.
for algo in naive fa1 fa2; do
  run_case "gpu-cpu-$algo" "gpu --backend cpu ${shape[*]} --algo $algo"
done
exit $status
