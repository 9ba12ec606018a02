#!/usr/bin/env bash
# test_device_check.sh BUILD_DIR SOURCE_DIR — kernels/device_check.sh
# --dry-run lists the launches of the FlashAttention-2 paper's sizes (16K
# tokens: batch x N = 16384, heads x d = 2048, causal and not, naive, fa1,
# fa2) with the GPU model's time beside each, runs nothing, and plans to run
# exactly those of N <= 1024 with the released grids.
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
[ "$(printf '%s\n' "$rows" | wc -l)" = 72 ] || fail "not 72 launches: $rows"
printf '%s\n' "$rows" | grep -q ' - ' && fail "a launch without the model's time"
# Every row: 16K tokens, 2048 = heads x d, the grid of its loop order.
printf '%s\n' "$rows" | while read -r N B H d causal algo gx x gy ms rest; do
    [ $((N * B)) = 16384 ] || fail "N $N x batch $B is not 16K tokens"
    [ $((H * d)) = 2048 ] || fail "heads $H x d $d is not 2048"
    if [ "$algo" = fa1 ]; then
        [ "$gx $gy" = "$((B * H)) 1" ] || fail "fa1 grid $gx x $gy at N $N"
    else
        [ "$gx $gy" = "$(((N + 127) / 128)) $((B * H))" ] || fail "$algo grid $gx x $gy at N $N"
    fi
    want=run
    [ "$N" -le 1024 ] || want="model only"
    [ "$rest" = "$want" ] || fail "N $N: '$rest', not '$want'"
done || exit 1
# The model's time is fasim's GPU model on the same problem (H200, same tiles).
t=$("$FASIM" --N 16384 --d 128 --batch 1 --heads 16 --M 227K --causal --gpu h200 \
        --count-only --json --algo fa2 | python3 -c \
        'import json,sys; print("%.3f" % (1e3 * json.load(sys.stdin)["runs"][0]["gpu_model"]["time_s"]))')
printf '%s\n' "$rows" | grep -qE "^ +16384 +1 +16 +128 +yes +fa2 +128 x 16 +$t +model only$" ||
    fail "fa2 at N = 16384, d = 128, causal: not the model's $t ms"
# The runs it would make: the 24 of N <= 1024, each a fasim gpu on those options.
cmds=$(printf '%s\n' "$table" | grep -c '^+ .*/fasim gpu --algo .* --batch .* --heads .* --compute ')
[ "$cmds" = 24 ] || fail "$cmds runs planned, not 24"
printf '%s\n' "$table" | grep '^+ ' | grep -q -- '--N 2048' && fail "N = 2048 planned to run"
echo "device_check.sh --dry-run: 72 launches with the model's time, 24 to run"
