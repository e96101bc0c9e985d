// Simulations of the served cluster as jobs: start one (the scenario as it is, plus variants),
// follow its progress, and compare its runs side by side — counts over simulated time (pods
// running, pending, evicted, OOM-killed, nodes), every summary figure per run with what differs
// from the first run marked, and what each variant changed.

import { ApiError, get, post } from "../lib/api.js";
import { badge, h, link, section, stat } from "../lib/dom.js";
import { lineChart } from "../lib/chart.js";
import { dataTable } from "../lib/table.js";
import { errorBox } from "../lib/errors.js";

const ACTIVE = new Set(["queued", "running"]);
const POLL_MS = 1000;

/** Call `refresh()` every POLL_MS while `more()` and `holder` is still in the page; a failure
 * is shown in `holder` and stops the polling. */
function poll(holder, refresh, more) {
  const tick = async () => {
    if (!holder.isConnected || !more()) return;
    try {
      await refresh();
    } catch (err) {
      holder.replaceChildren(errorBox(err));
      return;
    }
    setTimeout(tick, POLL_MS);
  };
  setTimeout(tick, POLL_MS);
}

function progress(job) {
  const p = job.progress;
  const pct = p.total ? (100 * p.done) / p.total : job.state === "succeeded" ? 100 : 0;
  return h("div", { class: "usage", title: `run ${p.run + 1} of ${p.runs}: ${p.done} of ${p.total} steps` },
    h("span", {}, `run ${Math.min(p.run + 1, p.runs)}/${p.runs} · ${pct.toFixed(0)} %`),
    h("div", { class: "bar" }, h("i", { style: `width:${pct}%` })));
}

const when = (t) => (t ? new Date(t * 1000).toLocaleTimeString() : "");

function stateBadge(state) {
  return badge(state, { succeeded: "ok", failed: "bad", cancelled: "muted", running: "warn", queued: "muted" }[state]);
}

function startForm(onStarted) {
  const text = h("textarea", { rows: 3, name: "variants", "aria-label": "variants, one per line",
    placeholder: "one variant a line, as --variant takes it, e.g.\nnone:kubelet.topologyManagerPolicy=none" });
  const out = h("div", { class: "form-out" });
  const form = h("form", { class: "start", onsubmit: async (e) => {
    e.preventDefault();
    const variants = text.value.split("\n").map((x) => x.trim()).filter(Boolean);
    out.replaceChildren(h("span", { class: "muted" }, "submitting…"));
    try {
      const job = await post("/api/v1/simulations", { variants });
      out.replaceChildren();
      onStarted(job);
    } catch (err) {
      out.replaceChildren(errorBox(err));
      if (err instanceof ApiError && err.status === 403) {
        out.append(h("p", {}, "Start one from a shell instead: ", h("code", {},
          `curl -X POST http://${location.host}/api/v1/simulations -d '${JSON.stringify({ variants })}'`)));
      }
    }
  } }, h("label", {}, "Variants (optional) — each run after the scenario as loaded:"), text,
  h("button", { type: "submit" }, "Start simulation"), out);
  return form;
}

function jobsTable(jobs) {
  return dataTable({ id: "jobs", rows: jobs, empty: "no simulations yet", sort: { key: "submitted", desc: true }, columns: [
    { key: "id", label: "Job", render: (j) => link(`/simulations/${j.id}`, j.id) },
    { key: "state", label: "State", filter: true, render: (j) => stateBadge(j.state) },
    { key: "progress", label: "Progress", value: (j) => j.progress.done / (j.progress.total || 1), render: progress },
    { key: "variants", label: "Variants", value: (j) => j.variants.join(", ") || "(none)" },
    { key: "submitted", label: "Submitted", numeric: true, render: (j) => when(j.submitted) },
    { key: "error", label: "Error", value: (j) => j.error || "", cellClass: (j) => (j.error ? "bad" : "") },
  ] });
}

export async function simulationsView() {
  let jobs = await get("/api/v1/simulations");
  const table = jobsTable(jobs);
  const holder = h("div", {}, table);
  const more = () => jobs.some((j) => ACTIVE.has(j.state));
  if (more()) {
    poll(holder, async () => {     // the rows change in place: a search being typed stays
      jobs = await get("/api/v1/simulations");
      table.setRows(jobs);
    }, more);
  }
  return h("div", { class: "view", "data-view": "simulations" },
    h("h1", {}, "Simulations"),
    h("p", { class: "muted" }, "A job runs kubetwin simulate on the files the service was started with: once as they are, then once per variant."),
    section("Start a simulation", startForm((job) => { location.hash = `#/simulations/${job.id}`; })),
    section("Jobs", holder));
}

// --- one job -----------------------------------------------------------------------------

const runName = (r, i) => (r.summary.variant ? r.summary.variant.name : i === 0 ? "as loaded" : `run ${i + 1}`);

function minutes(t) {
  if (t >= 3600) return `${(t / 3600).toFixed(t % 3600 ? 1 : 0)}h`;
  if (t >= 60) return `${(t / 60).toFixed(t % 60 ? 1 : 0)}m`;
  return `${t}s`;
}

/** Number of nodes over simulated time: the Cluster Autoscaler's group sizes, else the fixed count. */
function nodeSeries(r, timeless) {
  const rows = ((r.autoscaling || {}).timeSeries || []).filter((x) => x.nodes);
  if (rows.length) return rows.map((x) => [x.time, Object.values(x.nodes).reduce((a, b) => a + b, 0)]);
  const ts = r.timeSeries;
  const end = timeless ? Math.max(ts.length - 1, 0) : ts.length ? ts[ts.length - 1].time : 0;
  return [[0, r.summary.nodes], [end, r.summary.nodes]];
}

function charts(results) {
  // a scenario that ends at simulated time 0 (every pod placed at once) is drawn per sample
  const timeless = results.every((r) => r.timeSeries.every((x) => x.time === 0));
  const at = (x, i) => (timeless ? i : x.time);
  const metric = (title, pick) => lineChart({ title, xLabel: timeless ? (v) => `#${v}` : minutes,
    series: results.map((r, i) => ({ name: runName(r, i), points: pick(r) })) });
  const over = (key) => (r) => r.timeSeries.map((x, i) => [at(x, i), x[key]]);
  return h("div", { class: "charts", "data-role": "charts" },
    metric("Pods running", over("running")), metric("Pods pending", over("pending")),
    metric("Pods evicted (cumulative)", over("evicted")), metric("OOM kills (cumulative)", over("oom_killed")),
    metric("Nodes", (r) => nodeSeries(r, timeless)));
}

/** The summary's figures as flat rows: numbers, and one level of {name: number} maps. */
function figures(summary) {
  const out = {};
  for (const [k, v] of Object.entries(summary)) {
    if (k === "variant" || k === "scenario") continue;
    if (typeof v === "number") out[k] = v;
    else if (v && typeof v === "object" && !Array.isArray(v)) {
      for (const [k2, v2] of Object.entries(v)) if (typeof v2 === "number") out[`${k}.${k2}`] = v2;
    }
  }
  return out;
}

function compareTable(results) {
  const per = results.map((r) => figures(r.summary));
  const keys = [...new Set(per.flatMap((f) => Object.keys(f)))].filter((k) => k !== "wallSeconds" && k !== "schedulingAttemptsPerSecond");
  const rows = keys.map((k) => ({ figure: k, values: per.map((f) => f[k]) }));
  const fmt = (v) => (v === undefined ? "" : Number.isInteger(v) ? String(v) : v.toFixed(3));
  return dataTable({ id: "compare", rows, columns: [
    { key: "figure", label: "Figure" },
    ...results.map((r, i) => ({ key: `run${i}`, label: runName(r, i), numeric: true, value: (x) => x.values[i] ?? "",
      render: (x) => fmt(x.values[i]),
      cellClass: (x) => (i > 0 && x.values[i] !== x.values[0] ? "changed" : "") })),
    { key: "differs", label: "Differs", filter: true, value: (x) => (x.values.every((v) => v === x.values[0]) ? "same" : "differs") },
  ] });
}

function changes(results) {
  return h("div", { class: "runs" }, results.map((r, i) => h("div", { class: "run", "data-run": runName(r, i) },
    h("h3", {}, runName(r, i)),
    r.summary.variant ? h("ul", {}, r.summary.variant.changes.map((c) => h("li", {}, h("code", {}, c))))
      : h("p", { class: "muted" }, "the scenario as loaded (the baseline)"))));
}

async function jobContent(id) {
  const job = await get(`/api/v1/simulations/${encodeURIComponent(id)}`);
  const parts = [h("div", { class: "stats" }, stat("state", stateBadge(job.state), { "data-stat": "state" }),
    stat("progress", progress(job)), stat("submitted", when(job.submitted)), stat("finished", when(job.finished) || "—")),
  job.error ? h("div", { class: "error", role: "alert" }, job.error) : null];
  if (job.results) {
    parts.push(section("What each run changed", changes(job.results)),
      section("Over simulated time", charts(job.results)),
      section("Summary side by side (differences from the first run marked)", compareTable(job.results)));
  }
  return { job, content: h("div", {}, parts) };
}

export async function simulationView(id) {
  let { job, content } = await jobContent(id);
  const holder = h("div", {}, content);
  if (ACTIVE.has(job.state)) {
    poll(holder, async () => {
      const next = await jobContent(id);
      job = next.job;
      holder.replaceChildren(next.content);
    }, () => ACTIVE.has(job.state));
  }
  return h("div", { class: "view", "data-view": "simulation" },
    h("p", { class: "crumbs" }, h("a", { href: "#/simulations" }, "Simulations"), " / job"),
    h("h1", {}, `Simulation ${id}`), holder);
}
