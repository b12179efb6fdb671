// tcplab lab: the page. State: an example's name or a pasted TOML (`base`), and
// the knobs moved since (`set`, key path → scenario value). Every change asks the
// server for the instant answers (/api/analyze), then restarts the packet run.
"use strict";
const TOKEN = document.querySelector('meta[name="tcplab-token"]').content;
const $ = (id) => document.getElementById(id);
const state = { example: null, base: "", set: {}, custom: false, quick: null, controls: [],
                job: null, source: null, runs: {}, lastTomlSent: null, seq: 0, bufferUnit: "packets" };
window.labState = state;  // read by the browser tests

async function api(path, body) {
  const opts = body === undefined ? { headers: { "X-Tcplab-Token": TOKEN } }
    : { method: "POST", headers: { "X-Tcplab-Token": TOKEN, "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(path, opts);
  const ct = r.headers.get("content-type") || "";
  const data = ct.includes("json") ? await r.json() : await r.text();
  if (!r.ok) throw Object.assign(new Error(data.error || data), { key: data.key || null, status: r.status });
  return data;
}

const fmt = (v, d = 3) => (v === null || v === undefined || Number.isNaN(v)) ? "–" : (+v).toPrecision(d);
const fmtMs = (v) => (v < 10 ? v.toFixed(1) : Math.round(v)) + " ms";
const mbps = (v) => (v === null || v === undefined) ? "–" : (v / 1e6).toFixed(3) + " Mb/s";

// --- URL: the scenario and the knobs (same URL, same result: the seed is in the scenario) ---
function b64(s) { return btoa(unescape(encodeURIComponent(s))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""); }
function unb64(s) { s = s.replace(/-/g, "+").replace(/_/g, "/"); return decodeURIComponent(escape(atob(s))); }
function shareHash() {
  const p = new URLSearchParams();
  if (state.custom || !state.example) p.set("toml", b64(state.base));
  else p.set("scenario", state.example);
  for (const [k, v] of Object.entries(state.set)) p.append("set", k + "=" + JSON.stringify(v));
  return "#" + p.toString();
}
function updateHash() { history.replaceState(null, "", shareHash()); }
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const set = {};
  for (const s of p.getAll("set")) { const i = s.indexOf("="); if (i > 0) { try { set[s.slice(0, i)] = JSON.parse(s.slice(i + 1)); } catch (e) { set[s.slice(0, i)] = s.slice(i + 1); } } }
  return { scenario: p.get("scenario"), toml: p.get("toml") ? unb64(p.get("toml")) : null, set };
}

// --- controls, generated from the server's list (the engine's schema and defaults) ---
function encodeValue(c, raw) {
  if (c.kind === "bool") return !!raw;
  if (c.kind === "choice") return String(raw);
  let v = Number(raw);
  if (c.bdp && state.bufferUnit === "bdp" && state.quick && state.quick.facts.bdp_pkts) v = Math.round(v * state.quick.facts.bdp_pkts);
  if (c.step === 1) v = Math.round(v);
  return c.to ? `${v}${c.to}` : v;
}
function renderControls(controls) {
  state.controls = controls;
  const box = $("controls");
  box.textContent = "";
  const sections = {};
  for (const c of controls) {
    let fs = sections[c.section];
    if (!fs) { fs = sections[c.section] = document.createElement("fieldset"); const lg = document.createElement("legend"); lg.textContent = c.section; fs.appendChild(lg); box.appendChild(fs); }
    const row = document.createElement("div");
    row.className = "ctl"; row.dataset.key = c.key; row.title = c.help || "";
    const lab = document.createElement("label"); lab.textContent = c.label; row.appendChild(lab);
    let input, num;
    if (c.kind === "choice") {
      input = document.createElement("select");
      for (const ch of c.choices) { const o = document.createElement("option"); o.value = o.textContent = ch; input.appendChild(o); }
      input.value = c.value; row.appendChild(input);
      input.addEventListener("change", () => knob(c, input.value));
    } else if (c.kind === "bool") {
      input = document.createElement("input"); input.type = "checkbox"; input.checked = !!c.value; row.appendChild(input);
      input.addEventListener("change", () => knob(c, input.checked));
    } else {
      const wrap = document.createElement("span"); wrap.style.display = "flex"; wrap.style.gap = "0.3em";
      input = document.createElement("input"); input.type = "range"; input.min = c.min; input.max = c.max;
      input.step = c.step === "any" ? (c.max - c.min) / 1000 : c.step;
      num = document.createElement("input"); num.type = "number"; num.step = c.step === "any" ? "any" : c.step;
      let shown = c.value;
      if (c.bdp && state.bufferUnit === "bdp" && state.quick && state.quick.facts.bdp_pkts) shown = +(c.value / state.quick.facts.bdp_pkts).toFixed(3);
      input.value = shown; num.value = shown;
      if (c.bdp) { input.max = state.bufferUnit === "bdp" ? 10 : Math.max(c.value * 4, 200); input.step = state.bufferUnit === "bdp" ? 0.01 : 1; num.step = state.bufferUnit === "bdp" ? "any" : 1; }
      else if (c.key.endsWith(".count")) input.max = Math.max(c.value * 4, 20);
      else if (c.max > 1000 && c.value > 0) input.max = Math.max(c.value * 10, c.min * 10);
      num.className = "num"; num.name = c.key;
      wrap.appendChild(input); wrap.appendChild(num); row.appendChild(wrap);
      input.addEventListener("input", () => { num.value = input.value; });
      input.addEventListener("change", () => knob(c, input.value));
      num.addEventListener("change", () => { input.value = num.value; knob(c, num.value); });
    }
    input.name = c.key;
    const unit = document.createElement("span"); unit.className = "unit";
    if (c.bdp) {
      const sel = document.createElement("select"); sel.className = "bufunit";
      for (const [v, t] of [["packets", "packets"], ["bdp", "× BDP"]]) { const o = document.createElement("option"); o.value = v; o.textContent = t; sel.appendChild(o); }
      sel.value = state.bufferUnit; sel.addEventListener("change", () => { state.bufferUnit = sel.value; renderControls(state.controls); });
      unit.appendChild(sel);
    } else unit.textContent = c.unit || "";
    row.appendChild(unit);
    const err = document.createElement("div"); err.className = "err"; row.appendChild(err);
    fs.appendChild(row);
  }
}
function knob(c, raw) {
  state.set[c.key] = encodeValue(c, raw);
  analyze();
}
function showError(message, key) {
  for (const e of document.querySelectorAll(".ctl .err")) e.textContent = "";
  $("toml-error").textContent = "";
  if (!message) return;
  const row = key && [...document.querySelectorAll(".ctl")].find((r) => r.dataset.key === key);
  if (row) row.querySelector(".err").textContent = message;
  else $("toml-error").textContent = message;
}

// --- the instant answers, then the packet run ---
let analyzing = 0;
async function analyze() {
  const mine = ++analyzing;
  updateHash();
  const t0 = performance.now();
  let ans;
  try {
    ans = await api("/api/analyze", { toml: state.base, set: state.set, example: state.example });
  } catch (e) {
    if (mine !== analyzing) return;
    showError(e.message, e.key);
    for (const tr of $("answers").tBodies[0].rows) tr.classList.add("stale");
    document.body.dataset.error = e.message;
    return;
  }
  if (mine !== analyzing) return;
  delete document.body.dataset.error;
  showError(null);
  state.quick = ans.quick;
  state.quickMs = performance.now() - t0;
  $("sc-name").textContent = ans.name || "scenario";
  $("sc-desc").textContent = ans.description || "";
  if (document.activeElement !== $("toml")) $("toml").value = ans.toml;
  state.lastTomlSent = ans.toml;
  $("dl-toml").href = "data:application/toml;charset=utf-8," + encodeURIComponent(ans.toml);
  $("dl-toml").download = (ans.name || "scenario") + ".toml";
  renderControls(ans.controls);
  state.runs = { packet: state.runs.packet && { ...state.runs.packet, stale: true } };
  // an ns-2 or linux run of the previous scenario would answer another question: stop it
  for (const [eng, j] of Object.entries(state.others || {})) {
    j.src.close();
    api(`/api/jobs/${j.id}/cancel`, {}).catch(() => {});
    setStatus(eng, "cancelled", `${eng}: cancelled (the scenario changed)`);
  }
  state.others = {};
  renderTable(); renderWhy(); renderPredictions();
  state.seq += 1; document.body.dataset.quickSeq = state.seq;
  startRun("packet");
}

async function startRun(engine) {
  if (engine === "packet" && state.job) await cancelRun(true);
  const status = engine === "packet" ? $("packet-status") : $("engine-note");
  let job;
  try {
    job = await api("/api/run", { toml: state.base, set: state.set, example: state.example, engine });
  } catch (e) {
    setStatus(engine, "error", `${engine}: ${e.message}`);
    if (engine === "packet") showError(e.message, e.key);
    return;
  }
  const t0 = performance.now();
  const src = new EventSource(`/api/jobs/${job.job}/events`);
  if (engine === "packet") { state.job = job.job; state.source = src; $("cancel").disabled = false; $("progress").value = 0; }
  else { state.others = state.others || {}; state.others[engine] = { id: job.job, src }; }
  const done = () => { if (engine !== "packet" && state.others && state.others[engine] && state.others[engine].id === job.job) delete state.others[engine]; };
  setStatus(engine, "running", `${engine}: running…`);
  src.addEventListener("progress", (ev) => {
    const p = JSON.parse(ev.data);
    if (engine === "packet") $("progress").value = p.done_s / p.total_s;
    setStatus(engine, "running", `${engine}: ${p.done_s.toFixed(1)} / ${p.total_s} simulated s`);
  });
  src.addEventListener("result", (ev) => {
    const r = JSON.parse(ev.data);
    r.ms_page = performance.now() - t0;
    r.job = job.job;
    done();
    state.runs[engine] = r;
    src.close();
    if (engine === "packet") { state.job = null; $("cancel").disabled = true; $("progress").value = 1; }
    renderTable(); renderWhy();
    if (engine === "packet") { renderPlots(r); renderDownloads(r); }
    setStatus(engine, "done", `${engine}: done in ${(r.wall_s).toFixed(2)} s (${r.metrics.events || "?"} events)`);
  });
  src.addEventListener("failed", (ev) => {
    done();
    const r = JSON.parse(ev.data);
    src.close();
    if (engine === "packet") { state.job = null; $("cancel").disabled = true; showError(r.message, r.key); }
    setStatus(engine, "error", `${engine}: ${r.message}`);
  });
  src.addEventListener("cancelled", () => { src.close(); setStatus(engine, "cancelled", `${engine}: cancelled`); });
}
function setStatus(engine, st, text) {
  const el = engine === "packet" ? $("packet-status") : $("engine-note");
  el.dataset.state = st; el.textContent = text;
}
async function cancelRun(quiet) {
  const id = state.job;
  if (!id) return;
  state.job = null;
  if (state.source) state.source.close();
  $("cancel").disabled = true;
  const t0 = performance.now();
  try { await api(`/api/jobs/${id}/cancel`, {}); } catch (e) { /* already over */ }
  if (!quiet) setStatus("packet", "cancelled", `packet: cancelled (${(performance.now() - t0).toFixed(0)} ms)`);
}

// --- the table: every engine, with the difference to the packet engine ---
function renderTable() {
  const body = $("answers").tBodies[0];
  body.textContent = "";
  const q = state.quick;
  const packet = state.runs.packet && !state.runs.packet.stale ? state.runs.packet : null;
  const ref = packet ? packet.metrics.tcp_goodput_bps : null;
  const row = (cls, cells) => { const tr = body.insertRow(); tr.className = cls; for (const c of cells) { const td = tr.insertCell(); td.textContent = c; } return tr; };
  const delta = (g) => (ref && g !== null && g !== undefined) ? ((g / ref - 1) * 100).toFixed(1) + " %" : "–";
  if (q) {
    for (const r of q.rows) {
      const tr = row("model", [r.engine, mbps(r.goodput_bps), fmt(r.utilization), "–", "–", fmt(r.jain_index), delta(r.goodput_bps),
        fmtMs(r.engine.startsWith("fluid") ? q.ms.fluid : q.ms.closed_forms)]);
      tr.title = r.source || "";
    }
    if (!q.rows.length) row("model", ["closed forms", "no model applies (see Why)", "", "", "", "", "", ""]);
  }
  for (const eng of ["packet", "ns2", "linux"]) {
    const r = state.runs[eng];
    if (!r) continue;
    const m = r.metrics;
    row(eng + (r.stale ? " stale" : ""), [eng + " engine", mbps(m.tcp_goodput_bps), fmt(m.bottleneck_utilization), fmt(m.bottleneck_loss_rate),
      String(m.tcp_timeouts ?? "–"), fmt(m.jain_index), eng === "packet" ? "0" : delta(m.tcp_goodput_bps), `${r.wall_s.toFixed(2)} s`]);
  }
}
function renderPredictions() {
  const body = $("predictions").tBodies[0];
  body.textContent = "";
  if (!state.quick) return;
  const sorted = [...state.quick.predictions].sort((a, b) => (b.applies - a.applies));
  for (const p of sorted) {
    const tr = body.insertRow(); tr.className = p.applies ? "applies" : "not";
    const inputs = Object.entries(p.inputs || {}).map(([k, v]) => `${k} = ${typeof v === "number" ? fmt(v, 4) : v}`).join(", ");
    const val = p.applies ? (typeof p.value === "number" ? fmt(p.value, 4) : JSON.stringify(p.value)) : "does not apply";
    for (const c of [p.model, p.group || "all", val, p.quantity, (inputs ? inputs + "; " : "") + p.reason]) { const td = tr.insertCell(); td.textContent = c; }
  }
}
function renderWhy() {
  const ul = $("why"); ul.textContent = "";
  const p = state.runs.packet && !state.runs.packet.stale ? state.runs.packet : null;
  const items = (state.quick ? state.quick.why : []).slice();
  if (p && p.why) for (const w of p.why) if (!items.some((x) => x.text === w.text)) items.push(w);
  for (const w of items) {
    const li = document.createElement("li"); li.textContent = w.text + " ";
    const s = document.createElement("span"); s.className = "src"; s.textContent = `[${w.source}]`; li.appendChild(s); ul.appendChild(li);
  }
}
function renderDownloads(r) {
  const box = $("downloads"); box.textContent = "results: ";
  for (const f of r.files) { const a = document.createElement("a"); a.href = `/api/jobs/${r.job}/files/${f}`; a.textContent = f; a.download = f; box.appendChild(a); }
}

// --- plots, with the models' lines and linked time axes ---
const PLOTS = ["plot-cwnd", "plot-queue", "plot-goodput", "plot-seq"];
// one plotting width for every plot (legends outside, in a fixed margin) and one time range:
// the time axes line up, and zooming one zooms all (linkAxes)
let timeRange = null;
const layout = (title, ytitle, extra = {}) => ({ title: { text: title, font: { size: 13 } }, margin: { l: 60, r: 240, t: 30, b: 35 },
  xaxis: { title: { text: "time (s)" }, range: timeRange ? [...timeRange] : undefined },
  yaxis: { title: { text: ytitle }, rangemode: "tozero" }, hovermode: "closest", showlegend: true,
  legend: { font: { size: 10 }, x: 1.02, xanchor: "left", y: 1 }, ...extra });
function renderPlots(r) {
  const P = r.plots, q = state.quick;
  timeRange = [0, r.end_s];
  const cfg = { responsive: true, displaylogo: false };
  const cw = [];
  if (P.cwnd) for (const f of P.cwnd.flows) cw.push({ x: f.t, y: f.y, name: `flow ${f.flow}`, mode: "lines", line: { shape: "hv", width: 1 } });
  const end = r.end_s;
  if (q) for (const o of q.overlay) cw.push({ x: [0, end], y: [o.y, o.y], name: o.label, mode: "lines", line: { dash: o.dash || "dash", color: "black", width: 1.2 }, hovertemplate: `${o.label}<br>${o.source}<extra></extra>` });
  const shown = P.cwnd ? ` (${P.cwnd.shown} of ${P.cwnd.of} flows)` : "";
  Plotly.react("plot-cwnd", cw, layout("cwnd per flow" + shown + (q && q.overlay.length ? " — model prediction dashed" : ""), "cwnd (packets)"), cfg);
  const qu = [];
  if (P.queue) { qu.push({ x: P.queue.t, y: P.queue.y, name: "queue", mode: "lines", line: { width: 1 } }); qu.push({ x: [0, end], y: [P.queue.buffer, P.queue.buffer], name: `buffer ${P.queue.buffer}`, mode: "lines", line: { dash: "dot", color: "gray" } }); }
  Plotly.react("plot-queue", qu, layout("bottleneck queue", "packets"), cfg);
  const gp = [];
  if (P.goodput) for (const [g, y] of Object.entries(P.goodput.groups)) gp.push({ x: P.goodput.t, y, name: g, mode: "lines", line: { shape: "hv" } });
  Plotly.react("plot-goodput", gp, layout("goodput per second", "Mb/s"), cfg);
  const sq = [];
  if (P.seq) {
    const s = P.seq;
    const first = { x: [], y: [] }, again = { x: [], y: [] };
    for (let i = 0; i < s.t.length; i++) { const o = s.rtx[i] ? again : first; o.x.push(s.t[i]); o.y.push(s.seq[i]); }
    sq.push({ ...first, name: "sent", mode: "markers", marker: { size: 3, color: "#1f77b4" } });
    sq.push({ ...again, name: "retransmitted", mode: "markers", marker: { size: 5, color: "red" } });
    if (s.ack_t) sq.push({ x: s.ack_t, y: s.ack, name: "ack", mode: "lines", line: { shape: "hv", width: 1, color: "green" } });
    if (s.drop_t) sq.push({ x: s.drop_t, y: s.drop_seq, name: "drop", mode: "markers", marker: { symbol: "x", size: 7, color: "black" } });
  }
  Plotly.react("plot-seq", sq, layout(P.seq ? `sequence / ack, flow ${P.seq.flow} (retransmissions red)` : "sequence / ack (not traced for a run this large)", "packet"), cfg);
  linkAxes();
  document.body.dataset.plotSeq = (+(document.body.dataset.plotSeq || 0) + 1);
}
let linking = false, linked = false;
function linkAxes() {
  if (linked) return;
  linked = true;
  for (const id of PLOTS) {
    $(id).on("plotly_relayout", (ev) => {
      if (linking) return;
      const r0 = ev["xaxis.range[0]"], r1 = ev["xaxis.range[1]"];
      const auto = ev["xaxis.autorange"];
      if (r0 === undefined && !auto) return;
      linking = true;
      Promise.all(PLOTS.filter((o) => o !== id).map((o) => Plotly.relayout(o, auto ? { "xaxis.autorange": true } : { "xaxis.range": [r0, r1] })))
        .finally(() => { linking = false; });
    });
  }
}
function yRangeIn(id, range) {
  // the y extent of what a plot shows between range[0] and range[1] (Plotly's autorange takes all data)
  let lo = Infinity, hi = -Infinity;
  for (const tr of $(id).data || []) {
    const x = tr.x || [], y = tr.y || [];
    for (let i = 0; i < x.length; i++) if (x[i] >= range[0] && x[i] <= range[1] && y[i] !== null) { lo = Math.min(lo, y[i]); hi = Math.max(hi, y[i]); }
  }
  if (!(hi >= lo)) return null;
  const pad = Math.max(1, (hi - lo) * 0.05);
  return [lo - pad, hi + pad];
}
function zoomTo(range) {
  linking = true;
  Promise.all(PLOTS.map((id) => {
    if (!range) return Plotly.relayout(id, { "xaxis.autorange": true, "yaxis.autorange": true });
    const y = id === "plot-seq" ? yRangeIn(id, range) : null;
    return Plotly.relayout(id, y ? { "xaxis.range": range, "yaxis.range": y } : { "xaxis.range": range, "yaxis.autorange": true });
  })).finally(() => { linking = false; });
}
$("zoom-loss").addEventListener("click", () => {
  const r = state.runs.packet; if (!r) return;
  const drops = (r.plots.seq && r.plots.seq.episodes && r.plots.seq.episodes.length ? r.plots.seq.episodes : (r.plots.drops || {}).t) || [];
  const t = drops.find((x) => x > r.warmup_s) ?? drops[0];
  if (t === undefined) return;
  const rtt = r.rtt_s || 0.1;
  zoomTo([t - 3 * rtt, t + 10 * rtt]);
});
$("zoom-all").addEventListener("click", () => zoomTo(null));
function downloadFigures(format) { for (const id of PLOTS) Plotly.downloadImage(id, { format, filename: id.replace("plot-", ""), width: 1000, height: 400 }); }
$("fig-svg").addEventListener("click", () => downloadFigures("svg"));
$("fig-png").addEventListener("click", () => downloadFigures("png"));

// --- scenario choice, upload, TOML pane, share, notebook, gallery ---
let examples = [];
function loadExample(name, set = {}) {
  const ex = examples.find((e) => e.name === name);
  if (!ex) { showError(`no example scenario ${name}`); return; }
  state.example = name; state.base = ex.toml; state.set = { ...set }; state.custom = false;
  $("example").value = name; $("toml").value = ex.toml;
  analyze();
}
$("example").addEventListener("change", () => { if ($("example").value) loadExample($("example").value); });
$("upload").addEventListener("change", async () => {
  const f = $("upload").files[0]; if (!f) return;
  if (f.size > 256 * 1024) { showError(`${f.name}: ${f.size} bytes, more than the lab's limit of 262144 bytes`); return; }
  state.base = await f.text(); state.set = {}; state.custom = true; state.example = null; $("example").value = "";
  $("toml").value = state.base; analyze();
});
let tomlTimer = null;
$("toml").addEventListener("input", () => {
  clearTimeout(tomlTimer);
  tomlTimer = setTimeout(() => {
    const text = $("toml").value;
    if (text === state.lastTomlSent) return;
    state.base = text; state.set = {}; state.custom = true; analyze();
  }, 600);
});
$("cancel").addEventListener("click", () => cancelRun(false));
$("run-ns2").addEventListener("click", () => startRun("ns2"));
$("run-linux").addEventListener("click", () => startRun("linux"));
$("share").addEventListener("click", async () => {
  const url = location.origin + location.pathname + shareHash();
  $("share-out").textContent = url;
  try { await navigator.clipboard.writeText(url); } catch (e) { /* shown instead */ }
});
$("notebook").addEventListener("click", async () => {
  const r = await fetch("/api/notebook", { method: "POST", headers: { "X-Tcplab-Token": TOKEN, "Content-Type": "application/json" },
    body: JSON.stringify({ toml: state.base, set: state.set, example: state.example }) });
  if (!r.ok) { showError((await r.json()).error); return; }
  const blob = await r.blob();
  const a = document.createElement("a"); a.href = URL.createObjectURL(blob);
  a.download = (r.headers.get("content-disposition") || "").match(/filename="([^"]+)"/)?.[1] || "lab.ipynb"; a.click();
});
$("show-gallery").addEventListener("click", () => { $("gallery").hidden = !$("gallery").hidden; });
async function renderGallery() {
  const cards = await api("/api/gallery");
  const box = $("cards");
  for (const c of cards) {
    const d = document.createElement("div"); d.className = "card"; d.dataset.claim = c.id;
    const h = document.createElement("h4"); h.textContent = `${c.id} — ${c.title}`; d.appendChild(h);
    const v = document.createElement("div"); v.className = "verdict " + c.verdict; v.textContent = c.verdict; v.title = `from ${c.verdict_from}`; d.appendChild(v);
    for (const url of (c.figure_urls || []).slice(0, 1)) { const img = document.createElement("img"); img.src = url; img.alt = `${c.id} figure`; img.className = "thumb"; d.appendChild(img); }
    const st = document.createElement("div"); st.textContent = c.statement; d.appendChild(st);
    const fg = document.createElement("div"); fg.className = "fig"; fg.textContent = `figure: ${c.figure || "—"}`; d.appendChild(fg);
    const kn = document.createElement("div"); kn.className = "knobs"; kn.textContent = `knobs: ${c.knobs}`; d.appendChild(kn);
    if (c.scenario) {
      const b = document.createElement("button"); b.className = "open"; b.textContent = `open live (${c.scenario})`;
      b.addEventListener("click", () => { $("gallery").hidden = true; loadExample(c.scenario, c.set); });
      d.appendChild(b);
    }
    box.appendChild(d);
  }
}
async function engines() {
  const e = await api("/api/engines");
  const notes = [];
  for (const eng of ["ns2", "linux"]) {
    const b = $("run-" + eng);
    if (e[eng].refused) { b.disabled = true; b.title = e[eng].refused; notes.push(`${eng}: ${e[eng].refused}`); }
  }
  if (notes.length) { $("engine-note").textContent = notes.join("; "); $("engine-note").dataset.state = "refused"; }
}

async function main() {
  examples = await api("/api/examples");
  for (const ex of examples) { const o = document.createElement("option"); o.value = ex.name; o.textContent = ex.name; o.title = ex.description; $("example").appendChild(o); }
  engines();
  renderGallery();
  window.addEventListener("hashchange", () => fromHash());
  fromHash();
}
function fromHash() {
  const h = readHash();
  if (h.toml !== null) { state.base = h.toml; state.set = h.set; state.custom = true; state.example = h.scenario; $("toml").value = h.toml; analyze(); }
  else loadExample(h.scenario || "c-parallel-sack", h.set);
}
main();
