// bench_web.mjs: the page's speed in headless chromium (Debian's), loaded
// from disk as a reader opens it: the simulator's load (fasim.js, the
// WebAssembly embedded), and the classroom report, N = 1024, d = 64,
// M = 96K, fp16, naive, fa1 and fa2 in compute mode (the page's first run),
// then the same report again in the same page. Prints the size of fasim.js.
// Usage: node bench/bench_web.mjs [PAGE_DIR (build/web)] [LOADS (3)]
import { createRequire } from "node:module";
import { statSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";

const require = createRequire(new URL("../web/package.json", import.meta.url));
const { chromium } = require("playwright-core");
const dir = process.argv[2] || "build/web";
const loads = Number(process.argv[3] || 3);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
                                        args: ["--no-sandbox"] });
const rows = [];
for (let k = 0; k < loads; k++) {
  const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
  await page.goto(pathToFileURL(path.resolve(dir, "index.html")).href);
  await page.waitForFunction(() => window.fasimReady === true, null, { timeout: 300000 });
  const t = await page.evaluate(() => window.fasimPage.timings);
  const again = await page.evaluate(() => {
    const t0 = performance.now();
    window.fasimPage.sim.ccall("fw_report", "string", ["string"], [""]);
    return performance.now() - t0;
  });
  rows.push([t.load, t.report, again, t.views]);
  await page.close();
}
await browser.close();
const med = (c) => rows.map((r) => r[c]).sort((a, b) => a - b)[rows.length >> 1];
console.log(`fasim.js (the WebAssembly inside, base64): ${statSync(path.join(dir, "fasim.js")).size} bytes`);
console.log(`over ${loads} loads, median (ms): simulator loaded ${med(0).toFixed(0)}, ` +
            `classroom report ${med(1).toFixed(0)} (first) and ${med(2).toFixed(0)} (again), ` +
            `FA1 and FA2 views recorded ${med(3).toFixed(0)}`);
