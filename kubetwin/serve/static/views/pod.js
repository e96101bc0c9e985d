// A pod's drill-down, as kube-scheduler-simulator shows it and beyond: for a pending pod one
// explained scheduling cycle — each Filter plugin's verdict per node with its reasons, each Score
// plugin's score per node with the total and the chosen node — and each node's kubelet verdict;
// for a running pod its kubelet's admission (the Topology Manager's hints per hint provider, each
// container's CRI resources) and the pod's cgroup values, then the scheduling cycle it would get
// now with itself removed from its node (the API's `rescheduled`, not the cycle that placed it);
// DRA devices when the API gives them.

import { get } from "../lib/api.js";
import { badge, facts, fmtBytes, h, link, nodeRoute, section, stat } from "../lib/dom.js";
import { dataTable } from "../lib/table.js";

const CODE_CLASS = { Success: "ok", Skip: "muted", Unschedulable: "bad", UnschedulableAndUnresolvable: "bad", Pending: "warn", Error: "bad" };

function statusCell(st) {
  if (!st) return h("span", { class: "muted", title: "not run (an earlier plugin failed)" }, "–");
  if (st.code === "Success") return h("span", { class: "ok", title: "Success" }, "✓");
  return h("span", { class: CODE_CLASS[st.code] || "", title: st.code }, st.code === "Skip" ? "skip" : "✗ ",
    (st.reasons || []).join(", "));
}

function firstFailure(v) {
  for (const [plugin, st] of Object.entries(v.filter || {})) if (st.code !== "Success" && st.code !== "Skip") return [plugin, st];
  return null;
}

function kubeletCell(v) {
  if (!v || !v.modelled) return h("span", { class: "muted" }, "not modelled");
  if (v.admitted) return h("span", { class: "ok" }, "admits", v.numaNodes && v.numaNodes.length ? ` (NUMA ${v.numaNodes.join(",")})` : "");
  return h("span", { class: "bad" }, `rejects: ${v.reason}`, v.message ? ` — ${v.message}` : "");
}

function filterTable(sched, kubelet) {
  const plugins = [];
  for (const v of Object.values(sched.nodes)) for (const p of Object.keys(v.filter || {})) if (!plugins.includes(p)) plugins.push(p);
  const rows = Object.entries(sched.nodes).map(([name, v]) => ({ name, v, fail: firstFailure(v), kubelet: kubelet[name] }));
  return dataTable({ id: "filter", rows, sort: null, rowClass: (r) => (r.name === sched.node ? "chosen" : r.fail ? "failed" : ""),
    columns: [
      { key: "name", label: "Node", render: (r) => link(nodeRoute(r.name), r.name) },
      { key: "result", label: "Filter", filter: true, value: (r) => (r.fail ? "failed" : "passed"),
        render: (r) => (r.fail ? h("span", { class: "bad" }, `failed: ${r.fail[0]}`) : h("span", { class: "ok" }, "passed")) },
      ...plugins.map((p) => ({ key: `f:${p}`, label: p, value: (r) => {
        const st = (r.v.filter || {})[p];
        return st ? `${st.code} ${(st.reasons || []).join(", ")}` : "";
      }, render: (r) => statusCell((r.v.filter || {})[p]) })),
      { key: "kubelet", label: "Kubelet", filter: true, value: (r) => (!r.kubelet || !r.kubelet.modelled ? "not modelled"
        : r.kubelet.admitted ? "admits" : `rejects: ${r.kubelet.reason}`), render: (r) => kubeletCell(r.kubelet) },
    ] });
}

function scoreTable(sched) {
  const scored = Object.entries(sched.nodes).filter(([, v]) => v.total !== undefined);
  if (!scored.length) return h("p", { class: "muted" }, sched.feasibleNodes.length === 1
    ? "One feasible node: kube-scheduler does not score it." : "No node was scored.");
  const plugins = [];
  for (const [, v] of scored) for (const p of Object.keys(v.scores || {})) if (!plugins.includes(p)) plugins.push(p);
  const rows = scored.map(([name, v]) => ({ name, v }));
  return dataTable({ id: "score", rows, sort: { key: "total", desc: true }, rowClass: (r) => (r.name === sched.node ? "chosen" : ""),
    columns: [
      { key: "name", label: "Node", render: (r) => [link(nodeRoute(r.name), r.name), r.name === sched.node ? badge("chosen", "ok") : null] },
      ...plugins.map((p) => ({ key: `s:${p}`, label: p, numeric: true, value: (r) => (r.v.scores[p] || {}).weighted ?? "",
        render: (r) => {
          const x = r.v.scores[p];
          return x ? h("span", { title: `raw ${x.raw} → normalized ${x.normalized} → weighted ${x.weighted}` }, String(x.weighted),
            h("small", { class: "muted" }, ` (${x.normalized})`)) : "";
        } })),
      { key: "total", label: "Total", numeric: true, value: (r) => r.v.total, cellClass: () => "total" },
    ] });
}

/** The scheduling cycle's sections (shared with the what-if page). */
export function scheduling(d, title = "Scheduling cycle") {
  const sched = d.scheduling;
  const pre = Object.entries(sched.preFilter || {});
  return [
    section(title,
      h("p", { class: sched.node ? "notice ok" : "notice bad", "data-role": "message" }, sched.message || (sched.node ? `→ ${sched.node}` : "unschedulable")),
      facts([
        ["would bind to", sched.node ? link(nodeRoute(sched.node), sched.node) : "no node"],
        ["evaluated nodes", sched.evaluatedNodes],
        ["feasible nodes", sched.feasibleNodes.length ? sched.feasibleNodes.join(", ") : "none"],
        ["preemption", sched.preemption ? `nominated ${sched.preemption.nominatedNode}, victims: ${sched.preemption.victims.join(", ") || "none"}` : null],
        ["PreFilter", pre.length ? pre.map(([p, st]) => badge(`${p}: ${st.code}${st.reasons ? " — " + st.reasons.join(", ") : ""}`, CODE_CLASS[st.code])) : null],
        ["not modelled", (sched.notModelled || []).join(", ")],
      ])),
    section("Filter — each plugin's verdict per node", filterTable(sched, d.kubelet || {})),
    section("Score — each plugin's weighted score per node (normalized in brackets)", scoreTable(sched)),
  ];
}

/** A running pod's cycle as if scheduled now without itself, with the API's note and whether
 * the pick is the node the pod runs on. */
function rescheduled(r) {
  const verdict = !r.chosenNode ? [`No node would take it now, not even ${r.runsOn}, where it runs.`, "bad"]
    : r.sameNode ? [`kube-scheduler would pick ${r.runsOn} again, the node it runs on.`, "ok"]
      : [`kube-scheduler would pick ${r.chosenNode}, not ${r.runsOn}, where it runs.`, "warn"];
  return h("div", { "data-role": "rescheduled" },
    section("Scheduled now? — kube-scheduler's view of this pod today",
      h("p", { class: "notice", "data-role": "rescheduled-note" }, r.note),
      h("p", { class: `notice ${verdict[1]}`, "data-role": "same-node" }, verdict[0])),
    scheduling(r, "Scheduling cycle (this pod removed from its node)"));
}

function hintText(hint) {
  return hint ? `${hint.numaNodeAffinity ? "{" + hint.numaNodeAffinity.join(",") + "}" : "any"}${hint.preferred ? " preferred" : ""}` : "";
}

function hintsTable(hints) {
  const rows = [];
  for (const rec of hints) {
    for (const [provider, byRes] of Object.entries(rec.providers)) {
      if (byRes === null) { rows.push({ container: rec.container ?? "(pod)", provider, resource: "", hints: "no preference", merged: hintText(rec.merged), admit: rec.admit }); continue; }
      for (const [res, list] of Object.entries(byRes)) {
        rows.push({ container: rec.container ?? "(pod)", provider, resource: res,
          hints: list === null ? "no preference" : list.length ? list.map(hintText).join("  ") : "none possible",
          merged: hintText(rec.merged), admit: rec.admit });
      }
    }
  }
  return dataTable({ id: "hints", rows, empty: "no hint providers asked", columns: [
    { key: "container", label: "Container" },
    { key: "provider", label: "Hint provider (manager)", filter: true },
    { key: "resource", label: "Resource" },
    { key: "hints", label: "Hints" },
    { key: "merged", label: "Merged hint" },
    { key: "admit", label: "Admit", value: (r) => (r.admit ? "yes" : "no"), cellClass: (r) => (r.admit ? "ok" : "bad") },
  ] });
}

function admission(d) {
  const a = d.admission;
  const rows = a.containers.map((c) => ({ ...c, r: c.resources || {} }));
  return [
    section("Kubelet admission",
      h("p", { class: a.admitted ? "notice ok" : "notice bad" }, a.admitted ? `Admitted by ${d.node}'s kubelet` : `Rejected: ${a.reason} — ${a.message}`),
      a.explanation ? h("pre", { class: "explanation" }, a.explanation) : null,
      (a.knownUpstreamBugs || []).map((b) => h("p", { class: "notice warn" }, "known upstream bug: ", b)),
      h("h3", {}, "Topology Manager hints per manager"), hintsTable(a.hints || []),
      h("h3", {}, "Containers (CRI LinuxContainerResources)"),
      dataTable({ id: "containers", rows, columns: [
        { key: "name", label: "Container" }, { key: "type", label: "Type" }, { key: "qosClass", label: "QoS" },
        { key: "cpuset", label: "cpuset.cpus", value: (r) => r.r.cpusetCpus ?? "" },
        { key: "mems", label: "cpuset.mems", value: (r) => r.r.cpusetMems ?? "" },
        { key: "shares", label: "cpu shares", numeric: true, value: (r) => r.r.cpuShares ?? "" },
        { key: "quota", label: "CFS quota / period", value: (r) => (r.r.cpuQuota === undefined ? "" : `${r.r.cpuQuota} / ${r.r.cpuPeriod}`) },
        { key: "mem", label: "memory limit", numeric: true, value: (r) => r.r.memoryLimitInBytes ?? "",
          render: (r) => (r.r.memoryLimitInBytes ? fmtBytes(r.r.memoryLimitInBytes) : "none") },
        { key: "oom", label: "oom_score_adj", numeric: true, value: (r) => r.r.oomScoreAdj ?? "" },
        { key: "unified", label: "unified", value: (r) => Object.entries(r.r.unified || {}).map(([k, v]) => `${k}=${v}`).join(" ") },
        { key: "devices", label: "Devices", value: (r) => (r.devices || []).map((x) => `${x.resourceName}: ${x.deviceIds.join(",")}`).join("; ") },
      ] })),
  ];
}

function cgroups(c) {
  return section(`Pod cgroup (${c.cgroupVersion}) — QoS ${c.qosClass}`,
    h("p", { class: "muted" }, c.qosRule),
    dataTable({ id: "cgroups", rows: c.podCgroup, columns: [
      { key: "file", label: "File" }, { key: "value", label: "Value" },
      { key: "written", label: "Written", filter: true, value: (r) => (r.written ? "written" : "left as is") },
      { key: "formula", label: "Why" },
    ] }));
}

/** Any JSON as nested lists and tables (the DRA part's shape is the API's to choose). */
function jsonView(v) {
  if (Array.isArray(v)) {
    if (v.length && v.every((x) => x && typeof x === "object" && !Array.isArray(x))) {
      const keys = [...new Set(v.flatMap((x) => Object.keys(x)))];
      return h("table", { class: "data" }, h("thead", {}, h("tr", {}, keys.map((k) => h("th", {}, k)))),
        h("tbody", {}, v.map((x) => h("tr", {}, keys.map((k) => h("td", {}, x[k] === undefined ? "" : jsonView(x[k])))))));
    }
    return v.map((x, i) => [i ? ", " : "", jsonView(x)]);
  }
  if (v && typeof v === "object") return facts(Object.entries(v).map(([k, x]) => [k, jsonView(x)]));
  return v === null ? "—" : String(v);
}

export async function podView(namespace, name) {
  const d = await get(`/api/v1/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`);
  return h("div", { class: "view", "data-view": "pod" },
    h("p", { class: "crumbs" }, h("a", { href: "#/overview" }, "Cluster"), " / ",
      d.node ? [link(nodeRoute(d.node), d.node), " / "] : [h("a", { href: "#/pending" }, "pending"), " / "], "pod"),
    h("h1", {}, d.pod),
    h("div", { class: "stats" }, stat("phase", d.phase, { "data-stat": "phase" }),
      stat("node", d.node ? link(nodeRoute(d.node), d.node) : "—"), stat("uid", h("code", {}, d.uid))),
    d.scheduling ? scheduling(d) : null,
    d.admission ? admission(d) : null,
    d.cgroups ? cgroups(d.cgroups) : null,
    d.rescheduled ? rescheduled(d.rescheduled) : null,
    d.dra ? section("DRA — allocated devices, and why others were passed over", h("div", { "data-role": "dra" }, jsonView(d.dra))) : null,
    d.node && !d.admission ? h("p", { class: "notice" }, `${d.node} has no modelled kubelet: no admission or cgroup values to show.`) : null);
}
