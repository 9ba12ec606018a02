#!/usr/bin/env bash
# test_device_check.sh BUILD_DIR SOURCE_DIR — kernels/device_check.sh
# --dry-run lists the launches of the FlashAttention-2 paper's sizes (16K
# tokens: batch x N = 16384, heads x d = 2048, causal and not, naive, fa1,
# fa2, and FA2's backward fa2-bwd) with the GPU model's time beside each,
# runs nothing, and plans to run exactly the forwards of N <= 1024 and the
# backwards of N <= 512, with the released grids.
set -uo pipefail
BUILD=$1
SRC=$2
FASIM=$BUILD/cli/fasim
fail() { echo "FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(FASIM_DEVICE_BUILD=$BUILD TMPDIR=$tmp bash "$SRC/kernels/device_check.sh" --dry-run) ||
    fail "the dry run exited $?"
table=$(printf '%s\n' "$out" | sed -n '/^== 6\./,$p')
rows=$(printf '%s\n' "$table" | grep -E '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +(yes|no) ')
[ "$(printf '%s\n' "$rows" | wc -l)" = 96 ] || fail "not 96 launches: $rows"
[ "$(printf '%s\n' "$rows" | grep -c ' fa2-bwd ')" = 24 ] || fail "not 24 backward launches"
printf '%s\n' "$rows" | grep -q ' - ' && fail "a launch without the model's time"
# Every row: 16K tokens, 2048 = heads x d, the grid of its loop order: the
# forward's a block per query block of B_r = 128 (FA1's a block per head),
# the backward's a block per key block of B_c = 64 (fasim's backward plan at
# 227 KiB, which holds dK_j, dV_j, dQ_i, S_ij and dP_ij on chip).
printf '%s\n' "$rows" | while read -r N B H d causal algo gx x gy ms rest; do
    [ $((N * B)) = 16384 ] || fail "N $N x batch $B is not 16K tokens"
    [ $((H * d)) = 2048 ] || fail "heads $H x d $d is not 2048"
    want=run
    if [ "$algo" = fa1 ]; then
        [ "$gx $gy" = "$((B * H)) 1" ] || fail "fa1 grid $gx x $gy at N $N"
    elif [ "$algo" = fa2-bwd ]; then
        [ "$gx $gy" = "$(((N + 63) / 64)) $((B * H))" ] || fail "$algo grid $gx x $gy at N $N"
        [ "$N" -le 512 ] || want="model only"
    else
        [ "$gx $gy" = "$(((N + 127) / 128)) $((B * H))" ] || fail "$algo grid $gx x $gy at N $N"
    fi
    [ "$N" -le 1024 ] || want="model only"
    [ "$rest" = "$want" ] || fail "$algo at N $N: '$rest', not '$want'"
done || exit 1
# The model's time is fasim's GPU model on the same problem (H200, same tiles).
t=$("$FASIM" --N 16384 --d 128 --batch 1 --heads 16 --M 227K --causal --gpu h200 \
        --count-only --json --algo fa2 | python3 -c \
        'import json,sys; print("%.3f" % (1e3 * json.load(sys.stdin)["runs"][0]["gpu_model"]["time_s"]))')
printf '%s\n' "$rows" | grep -qE "^ +16384 +1 +16 +128 +yes +fa2 +128 x 16 +$t +model only$" ||
    fail "fa2 at N = 16384, d = 128, causal: not the model's $t ms"
t=$("$FASIM" --N 16384 --d 128 --batch 1 --heads 16 --M 227K --causal --gpu h200 \
        --count-only --json --algo fa2 --pass bwd | python3 -c \
        'import json,sys; print("%.3f" % (1e3 * json.load(sys.stdin)["runs"][0]["gpu_model"]["time_s"]))')
printf '%s\n' "$rows" | grep -qE "^ +16384 +1 +16 +128 +yes +fa2-bwd +256 x 16 +$t +model only$" ||
    fail "fa2-bwd at N = 16384, d = 128, causal: not the model's backward $t ms"
# The runs it would make: the 24 forwards of N <= 1024 and the 4 backwards of
# N = 512, each a fasim gpu on those options.
plan=$(printf '%s\n' "$table" | grep '^+ .*/fasim gpu --algo .* --batch .* --heads .* --compute ')
[ "$(printf '%s\n' "$plan" | wc -l)" = 28 ] || fail "not 28 runs planned: $plan"
bwd=$(printf '%s\n' "$plan" | grep -- '--algo fa2 --pass bwd --N 512 ')
[ "$(printf '%s\n' "$bwd" | wc -l)" = 4 ] || fail "not the 4 backwards of N = 512: $bwd"
printf '%s\n' "$plan" | grep -- '--pass bwd' | grep -qv -- '--N 512 ' && fail "a larger backward planned"
printf '%s\n' "$plan" | grep -q -- '--N 2048' && fail "N = 2048 planned to run"
echo "device_check.sh --dry-run: 96 launches with the model's time, 28 to run"
