#!/usr/bin/env bash
# test_web.sh — the page in a real browser (web/test_page.mjs): Debian's
# chromium driven by playwright-core loads build/web/, changes N and M,
# steps the view, and checks the numbers against fasim --json.
# Skips (77) where node, chromium, playwright-core or the built page is
# missing; in CI (CI=true), which installs them all (.ci/run), that fails.
# Usage: test_web.sh PAGE_DIR FASIM WEB_SOURCE_DIR
set -u
page=$1 fasim=$2 src=$3
missing() {
  if [ "${CI:-}" = true ]; then
    echo "FAIL: $1" >&2
    exit 1
  fi
  echo "test_web: skipped: $1"
  exit 77
}
command -v node >/dev/null || missing "no node (apt-get install nodejs npm)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing "no chromium (apt-get install chromium)"
[ -d "$src/node_modules/playwright-core" ] ||
  missing "no playwright-core (npm ci --prefix web)"
[ -f "$page/index.html" ] && [ -f "$page/fasim.js" ] ||
  missing "the page is not built (cmake --build build --target web)"
exec node "$src/test_page.mjs" "$page" "$fasim"
