#!/usr/bin/env bash
# valgrind.sh — run fasim's CLI paths under memcheck; any error or leak fails.
# Usage: scripts/valgrind.sh path/to/fasim
set -euo pipefail
fasim=${1:?usage: scripts/valgrind.sh path/to/fasim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vg() {
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    "$fasim" "$@" >"$tmp/out" 2>"$tmp/err" && rc=0 || rc=$?
  if [ "$rc" -eq 99 ] || grep -q "==[0-9]*==" "$tmp/err"; then
    echo "valgrind: errors in: fasim $*" >&2; cat "$tmp/err" >&2; exit 1
  fi
  echo "  ok (exit $rc): fasim $*"
}
vg --N 256 --M 48K
vg --N 200 --d 16 --M 16K --causal --json
vg --N 100000 --M 96K --count-only
vg --N 64 --d 16 --M 8K --plan paper
vg --algo fa2 --N 100 --d 16 --M 16K --out "$tmp/o.npy"
vg --q "$tmp/o.npy" --k "$tmp/o.npy" --v "$tmp/o.npy" --algo fa1 --M 16K --json
vg --N 0
vg --Br 4096 --Bc 4096
vg --q /nonexistent.npy --k x --v y
vg --help
vg --N 96 --d 8 --M 8K --page-size 5 --pass both --json
vg --Nq 2 --Nk 300 --d 8 --M 8K --causal --splits 4 --heads 4 --kv-heads 2
vg --preset gpt2-medium --N 128 --batch 2
vg --preset list
vg --page-size 0
vg view --N 32 --d 8 --M 4K --frames 3
vg view --N 48 --d 8 --M 4K --algo naive --causal --frames 2
vg view --N 32 --d 8 --M 4K --algo fa1 --pass bwd --frames 3
vg view --Nq 2 --Nk 96 --d 8 --M 4K --algo fa2 --splits 3 --frames 20
vg lesson online-softmax --script
vg lesson io-complexity --script
vg lesson causal --worksheet
vg lesson online-softmax --answers
vg lesson online-softmax --x 1,nan
vg sweep --vary N=256..2048 --d 16 --M 16K
vg claims
vg explore --keys NMxv
vg compare --N 96 --d 8 --M 8K --algo fa1 vs --algo fa2 --dtype bf16
vg compare --N 64 --d 8 --M 8K --pass bwd --json vs --causal
vg compare --N 64 vs --N 0
