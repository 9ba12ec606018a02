#!/usr/bin/env bash
# kernels/device_check.sh — the kernels' checks on a machine WITH an NVIDIA GPU,
# in one command (sized to finish in about 8 minutes on an H200; step 6 says
# how its part is sized):
#
#   1. build with -arch=sm_90 in a build directory of its own (build-device/);
#   2. ctest -L gpu (the CUDA backend against the simulator) and -L kernels
#      (the CPU path, the ptxas check);
#   3. compute-sanitizer memcheck and racecheck on
#      `fasim gpu --N 256 --d 64 --M 48K`, forward and FA2's backward in
#      both dQ modes (skipped when not installed);
#   4. the measurement table, N = 1024 .. 16384, d = 64 and 128, per loop order:
#      bit-identical, counters equal, median time, FA2's speedup over naive;
#   5. where Nsight Compute (ncu) is installed, DRAM bytes read / written and
#      L2 traffic per kernel (dram__bytes_read.sum, dram__bytes_write.sum,
#      lts__t_bytes.sum) beside the two-level model's HBM bytes. The L2 (50 MiB
#      on an H200) absorbs re-reads of K and V by neighbouring thread blocks,
#      so the measured DRAM bytes fall BELOW the model's HBM count, which
#      charges every re-read: the model has no level between SRAM and HBM;
#   6. the FlashAttention-2 paper's sizes (its forward benchmark: 16K tokens
#      in all, batch x N = 16384 for N = 512 .. 16384, hidden 2048, so 32 heads
#      of d = 64 or 16 of d = 128, causal and not, fp16): every launch with the
#      GPU model's predicted time (study/sim_gpu_model.h, the H200 preset)
#      beside it; the launches of N <= 1024 are run, bit-identical and counted
#      as in step 4, and their time shown beside the model's. FA2's backward
#      (fa2-bwd, --pass bwd, deterministic dQ) at the same sizes, with the
#      model's backward time; those of N <= 512 are run and checked the same
#      way (dQ, dK, dV bit for bit, counters per tensor).
#
# The simulator's compute mode (the reference for bit identity) runs on the
# CPU and is the slow part at N = 16384, so the table's runs go in parallel
# over the CPU cores; each holds a lock (fasim gpu --lock) while its kernels
# run, so the GPU times one process at a time.
#
# Usage: kernels/device_check.sh [--dry-run]
#   --dry-run                         print the commands, run nothing (step 6
#                                     lists its launches with the model's time
#                                     when fasim is built in the build directory)
#   FASIM_DEVICE_STOP_AFTER_BUILD=1   stop after the build (no GPU needed)
#   FASIM_DEVICE_BUILD=DIR            build directory (default ROOT/build-device)
#   OUT=DIR                           also write the log there (device_check.log)
# Exit status: 0 when every step passed, 1 when one failed (the log says which).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${FASIM_DEVICE_BUILD:-$ROOT/build-device}
DRY=0
if [ "${1:-}" = "--dry-run" ]; then
    DRY=1
elif [ $# -gt 0 ]; then
    echo "usage: $0 [--dry-run]" >&2
    exit 2
fi
JOBS=$(nproc 2>/dev/null || echo 4)
FASIM=$BUILD/cli/fasim
WORK=${TMPDIR:-/tmp}/fasim_device.$$
LOG_DIR=${OUT:-$WORK}
LOG=$LOG_DIR/device_check.log
FAILED=()

if [ "$DRY" = 0 ]; then
    mkdir -p "$WORK" "$LOG_DIR"
    exec > >(tee -a "$LOG") 2>&1
fi
trap '[ "$DRY" = 1 ] || rm -rf "$WORK"' EXIT

say() { printf '\n== %s\n' "$*"; }
# run NAME CMD...: print the command; run it unless --dry-run; record a failure.
run() {
    local name=$1
    shift
    printf '+ %s\n' "$*"
    [ "$DRY" = 1 ] && return 0
    if ! "$@"; then
        FAILED+=("$name")
        return 1
    fi
}

say "fasim device check: $ROOT, build $BUILD, $JOBS CPU jobs, log ${OUT:+$LOG}${OUT:-none (set OUT=DIR)}"
[ "$DRY" = 1 ] || { date; command -v nvidia-smi >/dev/null && nvidia-smi -L; }

say "1. build (sm_90)"
run configure cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DFASIM_WERROR=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DFASIM_CUDA_ARCHS=90 || exit 1
run build cmake --build "$BUILD" -j "$JOBS" || exit 1
if [ "${FASIM_DEVICE_STOP_AFTER_BUILD:-0}" = 1 ]; then
    say "stopped after the build (FASIM_DEVICE_STOP_AFTER_BUILD=1)"
    exit 0
fi

say "2. ctest -L gpu, ctest -L kernels"
run ctest-gpu ctest --test-dir "$BUILD" -L gpu --output-on-failure
run ctest-kernels ctest --test-dir "$BUILD" -L kernels --output-on-failure -j "$JOBS"

say "3. compute-sanitizer"
if command -v compute-sanitizer >/dev/null 2>&1 || [ "$DRY" = 1 ]; then
    for tool in memcheck racecheck; do
        run "sanitizer-$tool" compute-sanitizer --tool "$tool" --error-exitcode 1 \
            "$FASIM" gpu --N 256 --d 64 --M 48K --repeat 1
        # The backward's blocks wait for each other's turn at dQ_i: a bound
        # on the time, should a tool run them in an order they cannot finish in.
        for mode in deterministic atomic; do
            run "sanitizer-$tool-bwd-$mode" timeout 120 compute-sanitizer --tool "$tool" \
                --error-exitcode 1 "$FASIM" gpu --algo fa2 --pass bwd --dq-mode "$mode" \
                --N 256 --d 64 --heads 2 --causal --M 48K --repeat 1
        done
    done
else
    echo "compute-sanitizer not installed: skipped"
fi

say "4. measurement table (M = 227K, the H200's shared memory per block; fp16)"
# Repeats: timed runs after the counted one. FA1 runs as one thread block (one
# SM) by design, so its large cases get one timed run.
repeats() {  # N algo
    if [ "$1" -ge 16384 ]; then
        [ "$2" = fa1 ] && echo 1 || echo 2
    elif [ "$1" -ge 8192 ]; then
        [ "$2" = fa1 ] && echo 1 || echo 3
    else
        echo 5
    fi
}
JOBLIST=$WORK/jobs.txt
[ "$DRY" = 1 ] || : > "$JOBLIST"
# Largest first, so the longest simulator runs start at once. --compute: the
# simulator's runs at N = 16384 are past fasim gpu's compute bound (7.2e10 flops).
for N in 16384 8192 4096 2048 1024; do
    for d in 64 128; do
        for a in naive fa1 fa2; do
            line="$FASIM gpu --algo $a --N $N --d $d --M 227K --max-mem 24G --compute --repeat $(repeats "$N" "$a") --lock $WORK/gpu.lock --json"
            if [ "$DRY" = 1 ]; then
                echo "+ $line > $WORK/$a-$N-$d.json"
            else
                echo "$line > $WORK/$a-$N-$d.json 2> $WORK/$a-$N-$d.err" >> "$JOBLIST"
            fi
        done
    done
done
if [ "$DRY" = 0 ]; then
    echo "+ xargs -P $JOBS (30 runs; the simulator of N = 16384, d = 128 takes longest)"
    if ! xargs -P "$JOBS" -I{} sh -c '{}' < "$JOBLIST"; then
        FAILED+=("table")
    fi
fi

say "5. Nsight Compute: DRAM and L2 bytes per kernel (N = 4096, fp16)"
if command -v ncu >/dev/null 2>&1 || [ "$DRY" = 1 ]; then
    echo "The L2 absorbs re-reads of K and V, so DRAM bytes fall below the model's HBM count."
    for d in 64 128; do
        for a in naive fa1 fa2; do
            out=$WORK/ncu-$a-4096-$d.txt
            printf '+ ncu --csv --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum %s > %s\n' \
                "$FASIM gpu --algo $a --N 4096 --d $d --M 227K --repeat 1 --json" "$out"
            [ "$DRY" = 1 ] && continue
            if ! ncu --csv --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
                "$FASIM" gpu --algo "$a" --N 4096 --d "$d" --M 227K --repeat 1 --json \
                > "$out" 2> "$out.err"; then
                FAILED+=("ncu-$a-$d")
            fi
        done
    done
else
    echo "ncu not installed: skipped"
fi

say "6. the FlashAttention-2 paper's sizes (16K tokens, heads x d = 2048, fp16, M = 227K), forward and backward"
# Sizing: the simulator's reference (compute mode, on the CPU) costs 4 B H N^2 d
# flops a run, 6.9e10 at N = 512 for every d here, doubling with N. The 24
# runs of N <= 1024 (three loop orders, two d, causal and not; causal about
# half) come to about 1.9e12 flops: about 3 minutes over 16 cores at the
# 1.2e9 flops a second that bench/bench_sim measures on 2. N = 2048 would add
# as much again, and N = 16384 alone 32 times the N = 512 work, past the
# 8 minutes with steps 1-5; those launches are listed with the model's time
# only. The GPU side is milliseconds. naive's S and P at N = 16384 (B H N^2
# floats each, 17 GB) would not fit the host beside the simulator's either.
# The simulator's backward (its forward first, then five products of the
# forward's size) costs about 2.6 times its forward (fasim --compute, N = 512,
# measured): the 4 backward runs of N = 512 add about 40 s over 16 cores,
# N = 1024 would add twice that again, so the larger ones are model only.
PAPER_RUN_MAX_N=1024
PAPER_BWD_RUN_MAX_N=512
PAPER=$WORK/paper
[ "$DRY" = 1 ] || mkdir -p "$PAPER"
# The list, with the model's time (fasim --count-only --gpu h200 on the same
# options and tiles); the runs of N <= PAPER_RUN_MAX_N go to $PAPER/jobs.txt.
python3 - "$FASIM" "$PAPER" "$PAPER_RUN_MAX_N" "$DRY" "$WORK/gpu.lock" "$PAPER_BWD_RUN_MAX_N" <<'PY' || FAILED+=("paper-list")
import json, os, subprocess, sys
fasim, out, run_max, dry, lock = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
bwd_run_max = int(sys.argv[6])
have = os.access(fasim, os.X_OK)
if not have:
    print(f"({fasim} is not built: no model times; build first, or set FASIM_DEVICE_BUILD)")
print("model (ms): the GPU model's time on the h200 preset for the released kernels'\n"
      "launch (tensor cores, their tiles); measured: fasim's kernels on this GPU, which\n"
      "are written for bit identity, not speed (no tensor cores): expect them many\n"
      "times slower than the model. The preset is the H200's whatever the device.\n"
      "The rows marked run take about 4 minutes of CPU work on 16 cores (the\n"
      "simulator's reference); the others are listed with the model's time only.\n"
      "fa2-bwd: FA2's backward (--pass bwd), grid T_c by B H, deterministic dQ.")
print(f"{'N':>6} {'batch':>5} {'heads':>5} {'d':>4} {'causal':>6} {'algo':>7} "
      f"{'grid (x by y)':>13} {'model (ms)':>10}  measured")
jobs, model = [], {}
# (name, fasim's options, the largest N run): each loop order's forward, and
# FA2's backward.
kernels = [(a, ["--algo", a], run_max) for a in ("naive", "fa1", "fa2")] + \
          [("fa2-bwd", ["--algo", "fa2", "--pass", "bwd"], bwd_run_max)]
for d, H in ((64, 32), (128, 16)):
    for causal in (0, 1):
        for N in (512, 1024, 2048, 4096, 8192, 16384):
            B = 16384 // N
            opts = ["--N", str(N), "--d", str(d), "--batch", str(B), "--heads", str(H),
                    "--M", "227K"] + (["--causal"] if causal else [])
            runs = {}
            # The model: the forward's three loop orders in one call, FA2's
            # backward in another.
            for extra in ([], ["--algo", "fa2", "--pass", "bwd"]) if have else ():
                r = subprocess.run([fasim] + opts + extra +
                                   ["--gpu", "h200", "--count-only", "--json"],
                                   capture_output=True, text=True)
                try:
                    for x in json.loads(r.stdout)["runs"]:
                        name = x["algo"] + ("-bwd" if x.get("pass") == "bwd" else "")
                        runs[name] = (x["gpu_model"]["time_s"], x["plan"]["Br"],
                                      x["plan"]["Bc"])
                except (ValueError, KeyError):
                    print(f"no model for {' '.join(opts + extra)}: {r.stderr.strip()}")
            for a, kopts, a_run_max in kernels:
                t, Br, Bc = runs.get(a, (None, 128, 128))
                if a == "fa1":
                    grid = f"{B * H} x 1"
                elif a == "fa2-bwd":           # a block per key block: T_c
                    grid = f"{-(-N // Bc)} x {B * H}"
                else:
                    grid = f"{-(-N // Br)} x {B * H}"
                name = f"{a}-{N}-{d}-{'causal' if causal else 'full'}"
                model[name] = t
                run = N <= a_run_max
                ms = f"{1e3 * t:.3f}" if t is not None else "-"
                print(f"{N:>6} {B:>5} {H:>5} {d:>4} {'yes' if causal else 'no':>6} {a:>7} "
                      f"{grid:>13} {ms:>10}  {'run' if run else 'model only'}")
                if run:
                    jobs.append(" ".join([fasim, "gpu"] + kopts + opts +
                                         ["--max-mem", "48G", "--compute", "--repeat", "3",
                                          "--lock", lock, "--json"]) +
                                f" > {out}/{name}.json 2> {out}/{name}.err")
for j in jobs:
    print("+ " + j)
if not dry:
    with open(os.path.join(out, "jobs.txt"), "w") as f:
        f.write("".join(j + "\n" for j in jobs))
    with open(os.path.join(out, "model.json"), "w") as f:
        json.dump(model, f)
PY
[ "$DRY" = 1 ] && exit 0
echo "+ xargs -P $JOBS ($(wc -l < "$PAPER/jobs.txt") runs)"
xargs -P "$JOBS" -I{} sh -c '{}' < "$PAPER/jobs.txt" || FAILED+=("paper-sizes")

say "summary"
python3 - "$WORK" <<'PY' || FAILED+=("summary")
import csv, glob, json, os, sys
work = sys.argv[1]
rows, bad = [], 0
res = {}
for f in glob.glob(os.path.join(work, "*-*-*.json")):
    if os.path.basename(f).startswith("ncu-"):
        continue
    a, N, d = os.path.basename(f)[:-5].split("-")
    try:
        with open(f) as fh:
            r = json.load(fh)["runs"][0]
    except Exception as e:
        err = open(f[:-5] + ".err").read().strip().splitlines()
        print(f"{a} N={N} d={d}: no result ({err[-1] if err else e})")
        bad += 1
        continue
    res[(int(N), int(d), a)] = r
# ncu: fasim gpu's stdout holds ncu's CSV lines after the JSON object
for f in sorted(glob.glob(os.path.join(work, "ncu-*.txt"))):
    a, N, d = os.path.basename(f)[4:-4].split("-")
    text = open(f).read()
    lines = [l for l in text.splitlines() if l.startswith('"')]
    per = {}
    for row in csv.DictReader(lines):
        k = row.get("Kernel Name", "?").split("(")[0]
        m, v = row.get("Metric Name"), row.get("Metric Value", "0").replace(",", "")
        u = row.get("Metric Unit", "byte")
        scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}.get(u, 1)
        key = (k, m)
        if key not in per:           # the counted run's launch: the first
            per[key] = float(v) * scale
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[text.find("{"):])
        sim_bytes = obj["runs"][0]["sim_bytes"]
    except Exception:
        sim_bytes = None
    for k in sorted({k for k, _ in per}):
        print(f"ncu {a:5} N={N} d={d} {k:26} DRAM read {per.get((k,'dram__bytes_read.sum'),0)/1e6:9.1f} MB"
              f"  write {per.get((k,'dram__bytes_write.sum'),0)/1e6:9.1f} MB"
              f"  L2 {per.get((k,'lts__t_bytes.sum'),0)/1e6:9.1f} MB"
              + (f"  (model HBM, all kernels: {sim_bytes/1e6:.1f} MB)" if sim_bytes else ""))
print()
print(f"{'N':>6} {'d':>4} {'algo':5} {'identical':9} {'counters':8} {'time (ms)':>10} {'FA2 / naive':>11}")
for (N, d, a) in sorted(res):
    r = res[(N, d, a)]
    sp = ""
    if a == "fa2" and (N, d, "naive") in res:
        sp = f"{res[(N, d, 'naive')]['seconds'] / r['seconds']:.2f}x"
    ok = r["identical"] and r["counts_equal"]
    bad += not ok
    print(f"{N:>6} {d:>4} {a:5} {'yes' if r['identical'] else 'NO':9} "
          f"{'yes' if r['counts_equal'] else 'NO':8} {1e3 * r['seconds']:>10.3f} {sp:>11}")
# step 6: the paper's sizes, measured beside the model
model = {}
try:
    model = json.load(open(os.path.join(work, "paper", "model.json")))
except Exception:
    pass
if model:
    print()
    print(f"{'paper size':28} {'identical':9} {'counters':8} {'time (ms)':>10} {'model (ms)':>10}")
for f in sorted(glob.glob(os.path.join(work, "paper", "*.json"))):
    name = os.path.basename(f)[:-5]
    if name == "model":
        continue
    try:
        with open(f) as fh:
            r = json.load(fh)["runs"][0]
    except Exception as e:
        print(f"{name}: no result ({e})")
        bad += 1
        continue
    ok = r["identical"] and r["counts_equal"]
    bad += not ok
    t = model.get(name)
    print(f"{name:28} {'yes' if r['identical'] else 'NO':9} {'yes' if r['counts_equal'] else 'NO':8} "
          f"{1e3 * r['seconds']:>10.3f} {1e3 * t if t else float('nan'):>10.3f}")
sys.exit(1 if bad else 0)
PY
if [ ${#FAILED[@]} -gt 0 ]; then
    echo "FAILED: ${FAILED[*]}"
    exit 1
fi
echo "all device checks passed"
