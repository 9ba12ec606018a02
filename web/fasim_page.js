/* fasim_page.js: the page. It reads the form, calls the simulator (fasim.js,
 * web/fasim_web.c's API) and draws what it returns. It computes nothing the
 * simulator computes: every number shown is a value of the simulator's JSON,
 * and the cells of the report carry it unformatted in data-value, with its
 * place in `fasim --json`'s output in data-path. */
"use strict";

const page = {
  sim: null,          /* the emscripten module */
  report: null,       /* the last report, as fasim --json writes it */
  views: [],          /* per panel: { info, state, el } */
  step: 0,            /* 0-based; each panel shows min(step, its last) */
  timer: null,
  timings: {},        /* ms: load, report, views */
};
window.fasimPage = page;

const $ = (id) => document.getElementById(id);

function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
}

function whole(v) {
  return typeof v === "number" ? v.toLocaleString("en-US") : esc(v);
}

/* The form as command-line words, the report's options. */
function formArgs() {
  const f = $("problem").elements;
  const args = ["--N", f.N.value.trim(), "--d", f.d.value.trim(), "--M", f.M.value.trim(),
                "--dtype", f.dtype.value];
  if (f.causal.checked) args.push("--causal");
  if (f.count_only.checked) args.push("--count-only");
  if (f.algo.value) args.push("--algo", f.algo.value);
  return args;
}

function call(name, types, args) {
  const doc = JSON.parse(page.sim.ccall(name, "string", types, args));
  return doc;
}

function showError(msg) {
  const e = $("error");
  e.hidden = !msg;
  e.textContent = msg || "";
}

/* ---- the report ---------------------------------------------------------- */

/* Rows of the report's table: label, path within a run, format. */
const REPORT_ROWS = [
  ["B_r x B_c", ["plan.Br", "plan.Bc"], "x"],
  ["T_r x T_c", ["plan.Tr", "plan.Tc"], "x"],
  ["tile steps", ["steps"]],
  ["SRAM peak, bytes", ["plan.sram_peak_bytes"]],
  ["plan fits M", ["plan.fits"], "yes"],
];
const TRAFFIC_ROWS = [
  ["total elements", ["hbm.read_elems", "hbm.write_elems"], "+"],
  ["bytes read", ["hbm.read_bytes"]],
  ["bytes written", ["hbm.write_bytes"]],
  ["total bytes", ["hbm.total_bytes"]],
  ["closed-form bytes", ["theory.exact_bytes"]],
  ["matches the closed form", ["theory.matches"], "yes"],
  ["bytes / naive's", ["hbm.ratio_to_naive"], "ratio"],
  ["FLOPs (matrix products)", ["flops.matmul"]],
  ["max |O - oracle|", ["error.max_abs"], "sci"],
];

function at(obj, path) {
  return path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
}

function cell(run, k, paths, fmt) {
  const vals = paths.map((p) => at(run, p));
  if (vals.some((v) => v === undefined || v === null)) return '<td class="num">-</td>';
  const spans = vals.map((v, n) => {
    let text;
    if (fmt === "yes") text = v ? "yes" : "NO";
    else if (fmt === "ratio") text = v.toFixed(4);
    else if (fmt === "sci") text = v.toExponential(2);
    else text = whole(v);
    return `<span data-path="runs.${k}.${paths[n]}" data-value="${esc(String(v))}">${text}</span>`;
  });
  let inner = spans.join(fmt === "x" ? " x " : fmt === "+" ? " + " : "");
  return `<td class="num">${inner}</td>`;
}

function renderReport(rep) {
  const c = rep.config;
  $("report-note").innerHTML =
    `N = <span data-path="config.N" data-value="${c.N}">${whole(c.N)}</span>, ` +
    `d = <span data-path="config.d" data-value="${c.d}">${c.d}</span>, ${esc(c.dtype)}, ` +
    `M = <span data-path="config.M_bytes" data-value="${c.M_bytes}">${whole(c.M_bytes)}</span> B, ` +
    `${c.causal ? "causal" : "not causal"}; ${esc(c.mode)} mode` +
    (c.mode === "compute" ? " (output checked against the float64 oracle)" : "") +
    `. Theorem 2's bound for FlashAttention: <span data-path="bounds.theta_flash_elems" ` +
    `data-value="${rep.bounds.theta_flash_elems}">${whole(Math.round(rep.bounds.theta_flash_elems))}</span> elements.`;
  const runs = rep.runs;
  let h = "<thead><tr><th scope=\"col\">loop order</th>" +
    runs.map((r, k) => `<th scope="col" data-path="runs.${k}.algo" data-value="${esc(r.algo)}">${esc(r.algo)}` +
             `${r.pass !== "fwd" ? " " + esc(r.pass) : ""}</th>`).join("") + "</tr></thead><tbody>";
  const row = (label, paths, fmt) =>
    `<tr><th scope="row">${esc(label)}</th>` + runs.map((r, k) => cell(r, k, paths, fmt)).join("") + "</tr>";
  REPORT_ROWS.forEach(([l, p, f]) => { h += row(l, p, f); });
  const names = [];
  runs.forEach((r) => Object.keys((r.hbm && r.hbm.tensors) || {}).forEach((t) => {
    if (!names.includes(t)) names.push(t);
  }));
  h += `<tr><th scope="row" colspan="${runs.length + 1}"><b>HBM traffic, elements</b></th></tr>`;
  for (const t of names) {
    for (const [dir, key] of [["read", "read_elems"], ["write", "write_elems"]]) {
      if (runs.every((r) => !at(r, `hbm.tensors.${t}.${key}`))) continue;
      h += row(`${t} ${dir}`, [`hbm.tensors.${t}.${key}`]);
    }
  }
  TRAFFIC_ROWS.forEach(([l, p, f]) => { h += row(l, p, f); });
  $("report-table").innerHTML = h + "</tbody>";
  $("report-text").textContent = page.sim.ccall("fw_report_text", "string", [], []);
}

/* ---- the view -------------------------------------------------------------- */

const TILE_READ = 1, TILE_WRITTEN = 2, TILE_LOADING = 4, TILE_STORING = 8, TILE_CURRENT = 16;
const BLOCK_DONE = 1, BLOCK_NOW = 2, BLOCK_SKIPPED = 8;

function openViews(args) {
  const panels = $("panels");
  panels.innerHTML = "";
  page.views = [];
  ["fa1", "fa2"].forEach((algo, slot) => {
    const el = document.createElement("article");
    el.className = "panel";
    el.dataset.algo = algo;
    panels.appendChild(el);
    const info = call("fw_view_open", ["number", "string"], [slot, args.concat(["--algo", algo]).join("\n")]);
    page.views.push({ slot, info, el, state: null });
    if (info.error) {
      el.innerHTML = `<h3>${esc(algo)}</h3><p class="error" role="alert">${esc(info.error)}</p>`;
    }
  });
}

function lastStep() {
  return Math.max(0, ...page.views.filter((v) => !v.info.error).map((v) => v.info.nsteps - 1));
}

function tileGrid(t, info) {
  const cells = t.cells.map(([r, w, mark]) => {
    const cls = [];
    let text = r ? String(r) : "";
    if (w) text += "w" + (w > 1 ? w : "");
    if (mark & TILE_READ) cls.push("read");
    if (mark & TILE_LOADING) { cls.push("loading"); text = "\u2193" + text; }
    if (mark & TILE_STORING) { cls.push("storing"); text = "\u2191" + text; }
    if (mark & TILE_CURRENT) cls.push("current");
    return `<div class="${cls.join(" ")}" title="read ${r}x, written ${w}x">${text}</div>`;
  }).join("");
  const ti = info.tensors.find((x) => x.name === t.name);
  const note = ti && (ti.grid_rows > t.cell_rows || ti.grid_cols > t.cell_cols)
    ? ` (${ti.grid_rows} x ${ti.grid_cols} tiles)` : "";
  return `<figure class="tensor"><figcaption>${esc(t.name)}${note}</figcaption>` +
    `<div class="tiles" style="grid-template-columns: repeat(${t.cell_cols}, auto)">${cells}</div></figure>`;
}

function statsTable(s) {
  if (!s.available) return "<p>m and l: not computed (count-only run)</p>";
  if (!s.shown) return "<p>m and l: not used at this line</p>";
  const f = (v) => (v === null ? "-inf" : v.toPrecision(5));
  let h = `<table class="stats"><caption>m and l of rows ${s.row0 + 1}..` +
    `${s.row0 + s.m_old.length} (before &rarr; after this step)</caption>` +
    `<tr><th>row</th><th>m before</th><th>m after</th><th>l before</th><th>l after</th></tr>`;
  for (let r = 0; r < s.m_old.length; r++) {
    const ch = s.m_old[r] !== s.m_new[r];
    h += `<tr${ch ? ' class="changed"' : ""}><td>${s.row0 + r + 1}${ch ? " *" : ""}</td>` +
      `<td>${s.before_valid ? f(s.m_old[r]) : "-"}</td><td>${s.after_valid ? f(s.m_new[r]) : "-"}</td>` +
      `<td>${s.before_valid ? f(s.l_old[r]) : "-"}</td><td>${s.after_valid ? f(s.l_new[r]) : "-"}</td></tr>`;
  }
  return h + "</table>" + (s.m_is_L_after ? "<p>m now holds L = m + log l</p>" : "") +
    (s.nchanged ? `<p>* m changed in ${s.nchanged} row(s) of the block</p>` : "");
}

function renderView(v) {
  if (v.info.error) return;
  const info = v.info;
  const k = Math.min(page.step, info.nsteps - 1);
  const st = call("fw_view_step", ["number", "number"], [v.slot, k]);
  v.state = st;
  if (st.error) {
    v.el.innerHTML = `<p role="alert">${esc(st.error)}</p>`;
    return;
  }
  const blk = st.i >= 0 ? `i = ${st.i + 1}` + (st.j >= 0 ? `, j = ${st.j + 1}` : "") : "outside the loops";
  const code = info.code.map((c) =>
    `<li${c.line && c.line === st.line ? ' class="now" aria-current="step"' : ""}>` +
    `${c.line ? String(c.line).padStart(2) : "  "} ${" ".repeat(2 * c.indent)}${esc(c.text)}</li>`).join("");
  const moved = st.moved.length
    ? st.moved.map((x) => (x.kind === "load"
        ? `load ${esc(x.tensor)} &rarr; ${esc(x.buf)}` : `store ${esc(x.buf)} &rarr; ${esc(x.tensor)}`) +
        ` (${whole(x.bytes)} B)`).join("; ")
    : "nothing moves between HBM and SRAM";
  const M = info.M;
  const bufs = st.sram.map((b) =>
    `<div class="buf${b.loaded ? " loaded" : ""}${b.stored ? " stored" : ""}" style="width:${(100 * b.bytes / M).toFixed(2)}%"` +
    ` title="${esc(b.name)}: ${b.rows} x ${b.cols}, ${b.bytes} B">${esc(b.name)}</div>`).join("");
  const c = st.counts, fin = info.final;
  let blocks = "";
  if (st.blocks) {
    const bc = st.blocks.cells.map((s) => {
      const cls = s & BLOCK_NOW ? "now" : s & BLOCK_DONE ? "done" : s & BLOCK_SKIPPED ? "skipped" : "";
      const mark = s & BLOCK_NOW ? "\u25A0" : s & BLOCK_DONE ? "\u2713" : s & BLOCK_SKIPPED ? "\u00D7" : "";
      return `<div class="${cls}">${mark}</div>`;
    }).join("");
    blocks = `<figure><figcaption>blocks (i down, j across)</figcaption><div class="blocks" ` +
      `style="grid-template-columns: repeat(${st.blocks.cell_cols}, auto)">${bc}</div></figure>`;
  }
  v.el.dataset.line = st.line;
  v.el.dataset.step = st.step;
  v.el.innerHTML =
    `<h3>${esc(info.algo)}: ${esc(info.title)}</h3>` +
    `<p class="facts">B_r = ${info.Br}, B_c = ${info.Bc}, T_r x T_c = ${info.Tr} x ${info.Tc}` +
    `${info.computed ? "" : "; " + esc(info.mode_note)}</p>` +
    `<p class="where">step <span class="k">${st.step + 1}</span> of ${whole(info.nsteps)} &middot; ` +
    `line <span class="line">${st.line}</span> &middot; ${blk}</p>` +
    `<div class="cols"><ol class="code" aria-label="pseudocode">${code}</ol>` +
    `<div><table class="counters"><tr><th></th><th>so far</th><th>in all</th></tr>` +
    `<tr><td>HBM bytes read</td><td class="num read-bytes" data-value="${c.read_bytes}">${whole(c.read_bytes)}</td>` +
    `<td class="num">${whole(fin.read_bytes)}</td></tr>` +
    `<tr><td>HBM bytes written</td><td class="num write-bytes" data-value="${c.write_bytes}">${whole(c.write_bytes)}</td>` +
    `<td class="num">${whole(fin.write_bytes)}</td></tr></table>` +
    `<p class="moved">${moved}</p>` +
    `<p>SRAM: ${whole(st.sram_used)} B of M = ${whole(M)} B</p>` +
    `<div class="sram" role="img" aria-label="SRAM buffers against M">${bufs}</div>` +
    `${statsTable(st.stats)}</div></div>` +
    `<div class="tensors">${st.tiles.map((t) => tileGrid(t, info)).join("")}${blocks}</div>`;
}

function renderViews() {
  page.views.forEach(renderView);
  $("goto-step").value = page.step + 1;
}

function go(step) {
  page.step = Math.max(0, Math.min(step, lastStep()));
  renderViews();
}

function togglePlay() {
  if (page.timer) {
    clearInterval(page.timer);
    page.timer = null;
    $("play").innerHTML = "&#x25B6; play";
    return;
  }
  $("play").innerHTML = "&#x23F8; pause";
  page.timer = setInterval(() => {
    if (page.step >= lastStep()) togglePlay();
    else go(page.step + 1);
  }, 400);
}

/* ---- running the form ------------------------------------------------------ */

function run() {
  const args = formArgs();
  $("cmdline").textContent = "fasim " + args.join(" ");
  const t0 = performance.now();
  const rep = call("fw_report", ["string"], [args.join("\n")]);
  const t1 = performance.now();
  if (rep.error) {
    showError(rep.error);
    document.body.dataset.state = "error";
    return;
  }
  showError("");
  page.report = rep;
  renderReport(rep);
  const t2 = performance.now();
  openViews(args.filter((a, n) => a !== "--algo" && args[n - 1] !== "--algo"));
  page.step = 0;
  renderViews();
  page.timings.report = t1 - t0;
  page.timings.views = performance.now() - t2;
  $("status").textContent = `Report computed in ${Math.round(t1 - t0)} ms, views recorded in ` +
    `${Math.round(page.timings.views)} ms, in this browser.`;
  document.body.dataset.state = "ready";
}

/* Say that the simulator is at work, let the browser draw that, then run:
 * the report takes a while in compute mode at a large N. body's data-state
 * is "busy" until run() has shown the report or the message. */
function runSoon() {
  if (page.timer) togglePlay();
  document.body.dataset.state = "busy";
  $("status").textContent = "Computing\u2026";
  setTimeout(() => { run(); window.fasimReady = true; }, 20);
}

function wire() {
  $("problem").addEventListener("submit", (e) => { e.preventDefault(); runSoon(); });
  $("first").onclick = () => go(0);
  $("back").onclick = () => go(page.step - 1);
  $("step").onclick = () => go(page.step + 1);
  $("play").onclick = togglePlay;
  $("goto").onclick = () => go(parseInt($("goto-step").value, 10) - 1 || 0);
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("input, select, textarea")) return;
    if (e.key === "ArrowRight") go(page.step + 1);
    else if (e.key === "ArrowLeft") go(page.step - 1);
    else if (e.key === " ") { e.preventDefault(); togglePlay(); }
  });
}

fasimModule().then((sim) => {
  page.sim = sim;
  page.timings.load = performance.now();
  $("version").textContent = sim.ccall("fw_version", "string", [], []);
  $("run").disabled = false;
  wire();
  runSoon();
});
