// The status page: it draws /api/status, polls it with its ETag, and asks /api/cell for a
// cell's detail. No build step and nothing from the network but this server.
"use strict";
const SYMBOL = { published: "✓", missing: "·", unfinished: "…", blocked: "!", failed: "✗", retrying: "↻", upstream_failed: "↑", skipped: "–", waiting: "◷" };
const STATES = Object.keys(SYMBOL);
let report = null, etag = "";

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
};

// starts expands an axis (the first start, then [step seconds, count] runs) into epoch ms.
function starts(ax) {
  if (!ax.count) return [];
  const out = [Date.parse(ax.first)];
  for (const [step, n] of ax.steps) for (let i = 0; i < n; i++) out.push(out[out.length - 1] + step * 1000);
  return out;
}

const formats = new Map();
function fmt(ms, zone) {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hour12: false });
    formats.set(zone, f);
  }
  return f.format(new Date(ms));
}

// slice cuts a row's runs to the windows [lo, hi).
function slice(runs, lo, hi) {
  const out = []; let i = 0;
  for (const r of runs) {
    const a = Math.max(i, lo), b = Math.min(i + r.n, hi);
    if (b > a) out.push({ s: r.s, n: b - a, at: a });
    i += r.n;
  }
  return out;
}

// marked splits runs so that each marked window (a window that went wrong before its last
// try) is a run of its own, carrying what went wrong.
function marked(runs, marks) {
  if (!marks || !marks.length) return runs;
  const at = new Map(marks.map((m) => [m.i, m.earlier]));
  const out = [];
  for (const r of runs) {
    let from = r.at;
    for (let i = r.at; i < r.at + r.n; i++) {
      if (!at.has(i)) continue;
      if (i > from) out.push({ s: r.s, n: i - from, at: from });
      out.push({ s: r.s, n: 1, at: i, earlier: at.get(i) });
      from = i + 1;
    }
    if (from < r.at + r.n) out.push({ s: r.s, n: r.at + r.n - from, at: from });
  }
  return out;
}

function filters() {
  const from = $("f-from").value ? Date.parse($("f-from").value) : -Infinity;
  const to = $("f-to").value ? Date.parse($("f-to").value) : Infinity;
  return { state: $("f-state").value, object: $("f-object").value.trim().toLowerCase(), from, to };
}

function render() {
  if (!report) return;
  const f = filters();
  const inv = $("invalid");
  inv.replaceChildren();
  inv.hidden = report.invalid.length === 0;
  for (const bad of report.invalid) {
    inv.append(el("p", { text: bad.file + " is not valid:" }), el("pre", { text: bad.problems.join("\n") }));
  }
  const box = $("objects");
  box.replaceChildren();
  const legend = el("div", { class: "legend", "aria-label": "Legend" });
  for (const s of STATES) legend.append(el("span", { class: s, "data-symbol": SYMBOL[s], style: `--c: var(--${s})`, text: s }));
  legend.append(el("span", { class: "marked", "data-symbol": "•", text: "went wrong before its last try (click for the tries)" }));
  box.append(legend);
  let shown = 0;
  for (const ob of report.objects) {
    if (f.object && !(ob.name.toLowerCase().includes(f.object) || ob.file.toLowerCase().includes(f.object))) continue;
    const ws = starts(ob.windows);
    let lo = 0, hi = ws.length;
    while (lo < hi && ws[lo] < f.from) lo++;
    while (hi > lo && ws[hi - 1] >= f.to) hi--;
    const rows = ob.tasks.map((t) => ({ t, runs: marked(slice(t.cells, lo, hi), t.marks) }))
      .filter((r) => !f.state || r.runs.some((x) => x.s === f.state));
    if (f.state && rows.length === 0) continue;
    shown++;
    box.append(objectView(ob, ws, lo, hi, rows, f.state));
  }
  if (shown === 0) box.append(el("p", { text: report.objects.length ? "No object matches the filters." : "No workflow or scheduled dataset config here." }));
  $("updated").textContent = "Updated " + new Date(report.generated).toLocaleTimeString();
}

function objectView(ob, ws, lo, hi, rows, state) {
  const sec = el("section", { class: "object", "data-object": ob.name });
  sec.append(el("h2", { text: `${ob.name} (${ob.kind})` }));
  const meta = el("p", { class: "meta" });
  meta.append(`${ob.file} · ${ob.schedule ? "schedule " + ob.schedule : "no schedule"} · ${ob.timezone} · ${hi - lo} of ${ob.windows.count} windows`);
  if (ob.next_fire) meta.append(` · next fire ${fmt(Date.parse(ob.next_fire), ob.timezone)} ${ob.timezone} (${ob.next_fire})`);
  if (ob.end) meta.append(` · the schedule ends at ${ob.end}: no window after it is expected`);
  sec.append(meta);
  if (ob.waiting) {
    // The window not finished yet: nothing is missing, it runs once it is finished.
    const w = ob.waiting, [ws0, we0] = w.window.split("/");
    let text = `waiting: ${fmt(Date.parse(ws0), ob.timezone)} to ${fmt(Date.parse(we0), ob.timezone)} ${ob.timezone} (${w.window}) is not finished`;
    if (w.delay) text += `, it waits ${w.delay} after its end for late rows`;
    text += `; it may run at ${fmt(Date.parse(w.ready_at), ob.timezone)} ${ob.timezone} (${w.ready_at})`;
    if (w.runs_at) text += `, the schedule runs it at ${fmt(Date.parse(w.runs_at), ob.timezone)} ${ob.timezone} (${w.runs_at})`;
    sec.append(el("p", { class: "meta waiting", text }));
  }
  // Windows the schedule leaves alone until their source or spec changes, and why.
  for (const st of ob.stale || []) {
    sec.append(el("p", { class: "meta held", text: `${st.window}: ${st.message}` }));
  }
  for (const u of ob.waiting_upstream || []) {
    sec.append(el("p", { class: "meta held", text: `${u.window}: ${u.message}` }));
  }
  for (const h of ob.held || []) {
    sec.append(el("p", { class: "meta held", text: `held ${h.window}: ${h.message}` }));
  }
  if (ob.error) sec.append(el("p", { class: "meta", text: "error: " + ob.error }));
  if (ob.missed && ob.missed.length) {
    const m = el("p", { class: "meta" });
    m.append(`${ob.missed.length} missed windows (catch-up is off): `, el("code", { text: ob.backfill || "" }));
    sec.append(m);
  }
  // The summary bar: proportions of the windows by state, each labelled.
  const total = Object.values(ob.summary).reduce((a, b) => a + b, 0);
  const bar = el("div", { class: "summary", role: "img", "aria-label": "Windows by state: " + Object.entries(ob.summary).map(([k, v]) => `${v} ${k}`).join(", ") });
  for (const s of STATES) {
    const n = ob.summary[s] || 0;
    if (!n) continue;
    bar.append(el("span", { class: s, style: `flex: ${n}; background: var(--${s})`, title: `${n} ${s} (${Math.round(100 * n / total)}%)` }));
  }
  sec.append(bar);
  const wrong = new Set(ob.tasks.flatMap((t) => (t.marks || []).map((m) => m.i))).size;
  sec.append(el("p", { class: "meta counts", text: STATES.filter((s) => ob.summary[s]).map((s) => `${ob.summary[s]} ${s}`).join(" · ") +
    (wrong ? ` · ${wrong} window${wrong > 1 ? "s" : ""} went wrong before ${wrong > 1 ? "their" : "its"} last try` : "") }));
  if (hi > lo) {
    const axis = el("div", { class: "axis" });
    const utc = (ms) => new Date(ms).toISOString().replace(".000Z", "Z");
    axis.append(el("span", { text: `${fmt(ws[lo], ob.timezone)} ${ob.timezone}`, title: utc(ws[lo]) }),
      el("span", { class: "end", text: `${fmt(ws[hi - 1], ob.timezone)} ${ob.timezone}`, title: utc(ws[hi - 1]) }));
    for (const odd of ob.windows.odd_days || []) {
      if (odd.index < lo || odd.index >= hi) continue;
      axis.append(el("span", { class: "odd", style: `left: ${100 * (odd.index - lo) / (hi - lo)}%`, title: `${odd.hours}-hour day: ${fmt(ws[odd.index], ob.timezone)}` }));
    }
    sec.append(axis);
  }
  for (const { t, runs } of rows) {
    const row = el("div", { class: "row", "data-task": t.id });
    row.append(el("span", { class: "task", text: t.id, title: `${t.id} (${t.kind})` }));
    const b = el("div", { class: "bar" });
    for (const r of runs) {
      const first = fmt(ws[r.at], ob.timezone), last = fmt(ws[r.at + r.n - 1], ob.timezone);
      const z = `${ob.timezone}, ${new Date(ws[r.at]).toISOString().replace(".000Z", "Z")} UTC`;
      let label = r.n === 1 ? `${t.id} ${first} (${z}): ${r.s}` : `${t.id} ${first} to ${last} (${z}): ${r.n} windows ${r.s}`;
      if (r.earlier) label += ` (${r.earlier.join(", then ")} before)`;
      const seg = el("button", { type: "button", class: "seg " + r.s + (r.earlier ? " marked" : ""), "data-state": r.s, "data-start": new Date(ws[r.at]).toISOString().replace(".000Z", "Z"),
        style: `flex: ${r.n}; background: var(--${r.s})${state && r.s !== state ? "; opacity: .25" : ""}`, title: label, "aria-label": label });
      if (r.earlier) seg.setAttribute("data-earlier", r.earlier.join(" "));
      seg.textContent = SYMBOL[r.s] + (r.earlier ? "•" : "");
      seg.addEventListener("click", (ev) => {
        // A run of several windows: the one under the pointer (or the first, from the keyboard).
        const rect = seg.getBoundingClientRect();
        const k = ev.clientX ? Math.min(r.n - 1, Math.floor((ev.clientX - rect.left) / rect.width * r.n)) : 0;
        showCell(ob, t.id, new Date(ws[r.at + k]).toISOString().replace(".000Z", "Z"));
      });
      b.append(seg);
    }
    row.append(b);
    sec.append(row);
  }
  return sec;
}

async function showCell(ob, task, start) {
  const q = new URLSearchParams({ file: ob.file, start, task });
  const resp = await fetch("api/cell?" + q);
  const body = $("detail-body");
  body.replaceChildren();
  if (!resp.ok) { body.append(el("p", { text: await resp.text() })); } else {
    const d = await resp.json();
    body.append(el("h2", { text: `${d.object} · ${d.task}` }), el("p", { text: `${d.window} (${ob.timezone}: ${fmt(Date.parse(start), ob.timezone)})` }));
    const tbl = el("table", { class: "detail" });
    const add = (k, v) => { if (v !== undefined && v !== "" && v !== 0) tbl.append(el("tr", {}, el("th", { text: k }), el("td", { text: String(v) }))); };
    const earlier = (d.tries || []).slice(0, -1).map((t) => t.try_state).filter((x) => x !== "published" && x !== "skipped");
    add("state", d.state + (earlier.length ? ` (after ${d.tries.length} tries: ${earlier.join(", then ")} before)` : "")); add("idempotency key", d.idempotency_key); add("run", d.run_id); add("attempt", d.attempt);
    add("snapshot", d.snapshot_id); add("rows read", d.rows_read); add("rows kept", d.rows_kept);
    add("rows outside the window", d.rows_outside_window && `${d.rows_outside_window} (left for their own windows)`);
    add("rows with no window value", d.rows_no_window_value); add("retry due", d.retry_at); add("error", d.error);
    body.append(tbl);
    if (d.tries && d.tries.length > 1) {
      // Every try of the window, oldest first: a gate that held it back stays visible after
      // a fix published it.
      const tt = el("table", { class: "tries" }, el("tr", {}, el("th", { text: "ended" }), el("th", { text: "why" }), el("th", { text: "started" }), el("th", { text: "run" })));
      for (const t of d.tries) {
        const failed = (t.checks || []).filter((c) => !c.passed).map((c) => `${c.name}: ${c.failing_rows} failing rows`);
        tt.append(el("tr", { "data-try": t.try_state }, el("td", { class: "state", text: t.try_state }),
          el("td", { text: failed.length ? failed.join("; ") : (t.error || (t.snapshot_id ? "snapshot " + t.snapshot_id : "")) }),
          el("td", { text: t.started || "" }), el("td", { text: `${t.run_id} #${t.attempt}` })));
      }
      body.append(el("h3", { text: `Tries (${d.tries.length})` }), tt);
    }
    if (d.checks && d.checks.length) {
      const ct = el("table", { class: "checks" }, el("tr", {}, el("th", { text: "check" }), el("th", { text: "result" }), el("th", { text: "failing rows" })));
      for (const c of d.checks) ct.append(el("tr", { "data-check": c.name }, el("td", { text: c.name }), el("td", { text: c.passed ? "passed" : "FAILED" }), el("td", { text: String(c.failing_rows) })));
      body.append(el("h3", { text: "Checks" }), ct);
    }
    body.append(el("h3", { text: "Run it again" }), el("pre", { class: "command" }, el("code", { text: d.command })));
    if (d.ledger && d.ledger.length) body.append(el("h3", { text: "The ledger" }), el("pre", { class: "ledger", text: d.ledger.join("\n") }));
  }
  $("detail").hidden = false;
  $("detail").focus();
}

async function poll() {
  try {
    const resp = await fetch("api/status", { headers: etag ? { "If-None-Match": etag } : {} });
    if (resp.status === 200) {
      etag = resp.headers.get("ETag") || "";
      report = await resp.json();
      const t0 = performance.now();
      render();
      // What the benchmark reads: how long drawing took once the data was there.
      window.ldpRender = { ms: performance.now() - t0, segments: document.querySelectorAll(".seg").length };
    }
  } catch (e) { $("updated").textContent = "The server is not answering: " + e; }
  setTimeout(poll, 3000);
}

for (const id of ["f-state", "f-object", "f-from", "f-to"]) $(id).addEventListener("input", render);
$("close").addEventListener("click", () => { $("detail").hidden = true; });
document.addEventListener("keydown", (e) => { if (e.key === "Escape") $("detail").hidden = true; });
poll();
