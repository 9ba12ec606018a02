// bench_web.mjs: the page's speed in headless chromium (Debian's), loaded
// from disk as a reader opens it: the simulator's load (fasim.js, the
// WebAssembly embedded), and the classroom report, N = 1024, d = 64,
// M = 96K, fp16, naive, fa1 and fa2 in compute mode (the page's first run),
// then the same report again in the same page. Prints the size of fasim.js.
//
// Two ways a reader opens it, each LOADS times:
//   a new tab in a window that is already open (one browser context, whose
//     first tab holds a one-line page): the usual way a link is followed;
//   a new window each time (a new browser context a load), which headless
//     chromium (156 here) gives its own browser UI: it builds the omnibox
//     popup's web UI and parses some 400 scripts of it while the page's
//     first report runs, on the same two cores (chrome://tracing shows them;
//     --disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,
//     WebUIOmniboxAimPopup removes them, and the time with them).
// Usage: node bench/bench_web.mjs [PAGE_DIR (build/web)] [LOADS (5)]
import { createRequire } from "node:module";
import { statSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const require = createRequire(new URL("../web/package.json", import.meta.url));
const { chromium } = require("playwright-core");
const dir = process.argv[2] || "build/web";
const loads = Number(process.argv[3] || 5);
if (!Number.isInteger(loads) || loads < 1 || loads > 100) {
  console.error("usage: node bench/bench_web.mjs [PAGE_DIR] [LOADS: 1 to 100]");
  process.exit(2);
}
async function load(ctx) {
  const page = await ctx.newPage();
  await page.goto(pathToFileURL(path.resolve(dir, "index.html")).href);
  await page.waitForFunction(() => window.fasimReady === true, null, { timeout: 300000 });
  const t = await page.evaluate(() => window.fasimPage.timings);
  const again = await page.evaluate(() => {
    const t0 = performance.now();
    window.fasimPage.sim.ccall("fw_report", "string", ["string"], [""]);
    return performance.now() - t0;
  });
  await page.close();
  return [t.load, t.report, again, t.views];
}

async function measure(newWindowEach) {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
                                          args: ["--no-sandbox"] });
  const viewport = { width: 1920, height: 1080 };
  const rows = [];
  if (newWindowEach) {
    for (let k = 0; k < loads; k++) {
      const ctx = await browser.newContext({ viewport });
      rows.push(await load(ctx));
      await ctx.close();
    }
  } else {
    const ctx = await browser.newContext({ viewport });
    const first = await ctx.newPage();
    await first.goto("data:text/html,<title>open</title><p>a window already open</p>");
    await first.waitForTimeout(1500);
    for (let k = 0; k < loads; k++)
      rows.push(await load(ctx));
  }
  await browser.close();
  return rows;
}

function summary(rows, c) {
  const v = rows.map((r) => r[c]).sort((a, b) => a - b);
  return `${v[v.length >> 1].toFixed(0)} (${v[0].toFixed(0)} to ${v[v.length - 1].toFixed(0)})`;
}

console.log(`fasim.js (the WebAssembly inside, base64): ${statSync(path.join(dir, "fasim.js")).size} bytes`);
for (const [name, each] of [["a new tab in an open window", false],
                            ["a new window each time", true]]) {
  const rows = await measure(each);
  console.log(`${name}, ${loads} loads, ms, median (least to most):`);
  console.log(`  simulator loaded ${summary(rows, 0)}`);
  console.log(`  classroom report, the page's first run ${summary(rows, 1)}, again ${summary(rows, 2)}`);
  console.log(`  FA1 and FA2 views recorded ${summary(rows, 3)}`);
}
