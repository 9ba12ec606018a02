// test_page.mjs: the page in a real browser. Debian's chromium, driven by
// playwright-core, loads the built page from disk, changes N and M, and
// checks that every number of its report equals `fasim --json` for the same
// options, that out-of-range inputs show the command line's own message,
// that stepping the view moves the current line and the counters, whose
// last values are the report's totals, that the page fetches nothing, and that
// its vector path (wasm128) gives the scalar path's bits (fw_simd_check).
//
// Usage: node test_page.mjs PAGE_DIR FASIM [--screenshot FILE.png]
// Prints the page's load time and the report's time in the page.
import { execFileSync, spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { chromium } from "playwright-core";

const [pageDir, fasim, ...rest] = process.argv.slice(2);
const shotAt = rest.indexOf("--screenshot");
const shot = shotAt >= 0 ? rest[shotAt + 1] : null;
let failed = 0, passed = 0;

function check(ok, what) {
  if (ok) passed++;
  else {
    failed++;
    console.log(`FAIL: ${what}`);
  }
}

function cliJson(args) {
  return JSON.parse(execFileSync(fasim, [...args, "--json"], { encoding: "utf8" }));
}

function cliError(args) {
  const r = spawnSync(fasim, args, { encoding: "utf8" });
  return { status: r.status, line: r.stderr.trim().split("\n")[0] };
}

function at(obj, p) {
  return p.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

// Drop what differs between two runs of the same configuration: wall times.
function timeless(v) {
  if (Array.isArray(v)) return v.map(timeless);
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).filter(([k]) => k !== "seconds")
                              .map(([k, x]) => [k, timeless(x)]));
  return v;
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
                                        args: ["--no-sandbox"] });
try {
  const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const fetched = [];     // the page must fetch nothing but its own files
  page.on("request", (r) => { if (!/^(file|data):/.test(r.url())) fetched.push(r.url()); });
  // Run the form: the page is busy until the report or the message is shown.
  const submit = async () => {
    await page.click("#run");
    await page.waitForFunction(() => document.body.dataset.state !== "busy", null, { timeout: 120000 });
  };
  const t0 = Date.now();
  await page.goto(pathToFileURL(path.join(pageDir, "index.html")).href);
  await page.waitForFunction(() => window.fasimReady === true, null, { timeout: 120000 });
  const first = await page.evaluate(() => window.fasimPage.timings);
  console.log(`page: simulator loaded in ${Math.round(first.load)} ms; the default report ` +
              `(N = 1024, M = 96K, naive, fa1, fa2) computed in ${Math.round(first.report)} ms, ` +
              `the two views recorded in ${Math.round(first.views)} ms (${Date.now() - t0} ms in all)`);

  // The page's vector path (WebAssembly's SIMD, fmaf through doubles) must
  // give the scalar specification's bits on random tiles, tiny and
  // fp16-like values included.
  const simd = JSON.parse(await page.evaluate(() =>
    window.fasimPage.sim.ccall("fw_simd_check", "string", ["number"], [2000])));
  console.log(`page: products on the ${simd.path} path, ${simd.values} values against the ` +
              `scalar path, ${simd.differ} differ`);
  check(simd.path === "wasm128", `the page's products take the ${simd.path} path, not wasm128`);
  check(simd.values > 2000 * 20 && simd.differ === 0,
        `${simd.differ} of ${simd.values} values differ from the scalar path`);

  // Change N and M; the report must be fasim --json's for the same options.
  const args = ["--N", "512", "--d", "64", "--M", "64K", "--dtype", "fp16"];
  await page.fill("input[name=N]", "512");
  await page.fill("input[name=M]", "64K");
  await submit();
  await page.waitForFunction(() => document.querySelector("[data-path='config.N']")
                                        ?.dataset.value === "512");
  const cli = cliJson(args);
  const cells = await page.$$eval("[data-path]", (els) => els.map((e) => [e.dataset.path, e.dataset.value]));
  check(cells.length >= 60, `the report shows ${cells.length} values`);
  for (const [p, v] of cells) {
    const want = at(cli, p);
    check(want !== undefined && String(want) === v, `${p}: page ${v}, fasim --json ${want}`);
  }
  const shown = await page.evaluate(() => window.fasimPage.report);
  // The first key where they differ, to say what is wrong when they do.
  // Errors against the float64 oracle may differ in the last bit: the
  // oracle calls the C library's exp, which glibc and emscripten's musl
  // round differently; every other number must be equal.
  const firstDiff = (a, b, where) => {
    if (JSON.stringify(a) === JSON.stringify(b)) return null;
    if (typeof a === "number" && typeof b === "number" && /\.(error|grad_error)\b/.test(where) &&
        Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(a), Math.abs(b))) return null;
    if (a && b && typeof a === "object" && typeof b === "object") {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
        const d = firstDiff(a[k], b[k], `${where}.${k}`);
        if (d) return d;
      }
      return null;
    }
    return `${where}: page ${JSON.stringify(a)}, fasim --json ${JSON.stringify(b)}`;
  };
  const diff = firstDiff(timeless(shown), timeless(cli), "report");
  check(diff === null, `the page's report is fasim --json's, wall times aside${diff ? ` (${diff})` : ""}`);
  check(await page.textContent("#cmdline") === "fasim " + args.join(" "), "the command line shown");

  // Out-of-range inputs: the command line's message, from the same check.
  for (const [field, bad] of [["N", "0"], ["N", "99999999999"], ["M", "3KB"], ["d", "100000"]]) {
    const a = args.slice();
    a[a.indexOf("--" + field) + 1] = bad;
    await page.fill(`input[name=${field}]`, bad);
    await submit();
    const msg = (await page.textContent("#error")).trim();
    const want = cliError(a);
    check(want.status === 2 && msg === want.line, `--${field} ${bad}: page "${msg}", fasim "${want.line}"`);
    check(await page.isVisible("#error"), `--${field} ${bad}: the message is shown`);
    await page.fill(`input[name=${field}]`, field === "M" ? "64K" : field === "N" ? "512" : "64");
  }
  await submit();
  check(await page.isHidden("#error"), "a good input clears the message");

  // Stepping: FA2's panel moves its current line and its counters.
  const fa2 = "#panels .panel[data-algo=fa2]";
  const where = async () => page.$eval(fa2, (el) => ({
    step: Number(el.dataset.step), line: Number(el.dataset.line),
    read: Number(el.querySelector(".read-bytes").dataset.value),
    written: Number(el.querySelector(".write-bytes").dataset.value),
    now: el.querySelector(".code li.now")?.textContent ?? "",
  }));
  const seen = [await where()];
  for (let k = 0; k < 12; k++) {
    await page.click("#step");
    seen.push(await where());
  }
  check(seen.every((s, k) => s.step === k), "each step moves on by one");
  check(new Set(seen.map((s) => s.line)).size >= 4, "the current line moves: lines " +
        seen.map((s) => s.line).join(" "));
  check(seen.every((s) => s.now.trim().startsWith("\u25B6") || s.now.includes(String(s.line))),
        "the current line is marked in the pseudocode");
  check(seen.every((s, k) => k === 0 || s.read >= seen[k - 1].read) && seen[12].read > seen[0].read,
        "the bytes read so far grow");
  await page.click("#back");
  const back = await where();
  check(back.step === 11 && back.line === seen[11].line && back.read === seen[11].read,
        "back returns to the step before");
  // The last step: the counters are the report's totals (fasim --json).
  await page.fill("#goto-step", "1000000");
  await page.click("#goto");
  const last = await where();
  const run = cli.runs.find((r) => r.algo === "fa2");
  check(last.read === run.hbm.read_bytes && last.written === run.hbm.write_bytes,
        `FA2's last step: read ${last.read}, written ${last.written}; fasim --json: ` +
        `${run.hbm.read_bytes}, ${run.hbm.write_bytes}`);
  const nsteps = await page.evaluate(() => window.fasimPage.views[1].info.nsteps);
  check(last.step === nsteps - 1, `go to past the end stops at the last step, ${nsteps}`);
  check(errors.length === 0, `no script errors: ${errors.join("; ")}`);
  check(fetched.length === 0, `nothing fetched from elsewhere: ${fetched.join(" ")}`);

  if (shot) {
    // The README's picture: N = 512, M = 64K (T_r = T_c = 8), a few steps in.
    await page.fill("#goto-step", "30");
    await page.click("#goto");
    await page.screenshot({ path: shot, fullPage: true });
  }
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
