#!/usr/bin/env bash
# validate.sh — the GPU timing model against the published figures: runs
# `fasim validate` on bench/published/gpu-figures.tsv and writes its table to
# bench/results/gpu-validation-DATE.txt (UTC date; -2, -3, ... when that
# file exists), printing it too. Builds
# nothing: it runs $FASIM, else build/cli/fasim, else the fasim on PATH.
#
# Usage: scripts/validate.sh [FIGURES.tsv]
# Exit status: fasim validate's (0 every row predicted, 1 a row the model
# refused or a file it could not read, 2 a malformed row), or 127 when no
# fasim is found.
set -euo pipefail
cd "$(dirname "$0")/.."

fasim=${FASIM:-}
if [ -z "$fasim" ]; then
  if [ -x build/cli/fasim ]; then fasim=build/cli/fasim
  elif command -v fasim >/dev/null; then fasim=$(command -v fasim)
  else echo "validate.sh: no fasim: build it (scripts/quickstart.sh) or set FASIM" >&2; exit 127
  fi
fi
figures=${1:-bench/published/gpu-figures.tsv}
# A file of that name already there (a committed one, or an earlier run the
# same day) is kept: the table goes to the next free name, -2, -3, ...
out=bench/results/gpu-validation-$(date -u +%Y-%m-%d).txt
n=2
while [ -e "$out" ]; do
  out=bench/results/gpu-validation-$(date -u +%Y-%m-%d)-$n.txt
  n=$((n + 1))
done
mkdir -p bench/results
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
rc=0
"$fasim" validate "$figures" >"$tmp" || rc=$?
if [ -s "$tmp" ]; then
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo "no git")
  { echo "# scripts/validate.sh $figures at commit $commit, $(date -u '+%Y-%m-%d %H:%M') UTC"
    cat "$tmp"; } >"$out"
  cat "$out"
  echo "written: $out" >&2
fi
exit "$rc"
