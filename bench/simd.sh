#!/usr/bin/env bash
# simd.sh — compute mode's vector paths and threads beside numpy's standard
# attention on one thread, in one run: bench_simd's table, then numpy at the
# same shape (N = 4096, d = 64, float32: S = Q K^T / sqrt(d), a softmax by
# rows, O = P V) with OPENBLAS_NUM_THREADS=1 and OpenBLAS choosing its own
# kernels for this CPU (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset), the
# kernel it chose, and FA2's one-thread speed over numpy's. Both sides are
# timed in CPU seconds of their process, the best of several runs.
#
# Usage: bench/simd.sh [BUILD_DIR]   (default build; needs bench_simd built
# and python3 with numpy, e.g. the python3-numpy package)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3     # the distribution's, with python3-numpy
"$py" -c 'import numpy' 2>/dev/null ||
  { echo "simd.sh: $py has no numpy (apt-get install python3-numpy libopenblas0-pthread)" >&2; exit 2; }
out=$("$build/bench/bench_simd")
echo "$out" | grep -v '^fa2-1t-seconds'
fa2=$(echo "$out" | awk '/^fa2-1t-seconds/ { print $2 }')
np=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OPENBLAS_VERBOSE=2 \
    "$py" - 2>&1 <<'PY'
import time
import numpy as np
N, d = 4096, 64
rng = np.random.default_rng(1)
Q, K, V = (rng.standard_normal((N, d)).astype(np.float32) for _ in range(3))
def attention():
    S = (Q @ K.T) * np.float32(1.0 / np.sqrt(d))
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return P @ V
attention()
best = min((lambda t0: (attention(), time.process_time() - t0)[1])(time.process_time())
           for _ in range(5))
print(f"numpy-seconds {best:.6f}")
PY
)
kernel=$(echo "$np" | grep -i 'core' | head -1 || true)
# Without OpenBLAS numpy falls back on the reference BLAS, ten times slower:
# not the comparison the benchmark means.
[ -n "$kernel" ] ||
  echo "simd.sh: OpenBLAS reported no kernel: numpy is not using OpenBLAS (apt-get install libopenblas0-pthread)" >&2
npsec=$(echo "$np" | awk '/^numpy-seconds/ { print $2 }')
echo
echo "numpy $("$py" -c 'import numpy; print(numpy.__version__)') standard attention, one thread (OPENBLAS_NUM_THREADS=1):"
echo "  OpenBLAS: ${kernel:-(no core reported)}"
awk -v f="$fa2" -v n="$npsec" 'BEGIN {
    printf "  numpy %.3f CPU s (%.2f GFLOP/s); fasim FA2, one thread, vector path %.3f CPU s: %.2fx numpy\n",
           n, 4 * 4096 * 4096 * 64 / n * 1e-9, f, n / f }'
