// Cluster overview: the served cluster's figures, then a table of its nodes — requested and
// allocatable per resource (scheduler units, as NodeInfo sums them), NUMA nodes, pods,
// conditions, the kubelet modelled or not — with totals over the rows shown.

import { get } from "../lib/api.js";
import { badge, fmtAmount, h, link, nodeRoute, stat } from "../lib/dom.js";
import { dataTable } from "../lib/table.js";

const FIRST = ["cpu", "memory", "ephemeral-storage", "pods"];

/** Resources to show: cpu, memory, storage and pods first, then any other with a non-zero amount. */
function resourcesOf(nodes) {
  const seen = new Set();
  for (const n of nodes) {
    for (const [r, v] of Object.entries(n.allocatableAmounts || {})) if (v || FIRST.includes(r)) seen.add(r);
  }
  return [...FIRST.filter((r) => seen.has(r)), ...[...seen].filter((r) => !FIRST.includes(r)).sort()];
}

const requested = (n, r) => (r === "pods" ? n.pods : (n.requestedAmounts || {})[r] || 0);
const allocatable = (n, r) => (n.allocatableAmounts || {})[r] ?? null;

function usage(n, r) {
  const a = allocatable(n, r), q = requested(n, r);
  const pct = a ? Math.min(100, (100 * q) / a) : 0;
  return h("div", { class: "usage", title: a ? `${pct.toFixed(1)} % requested` : "" },
    h("span", {}, `${fmtAmount(r, q)} / ${fmtAmount(r, a)}`),
    h("div", { class: "bar" }, h("i", { style: `width:${pct}%`, class: pct >= 90 ? "hot" : "" })));
}

function conditions(n) {
  const bad = (n.conditions || []).filter((c) => (c.type === "Ready") !== (c.status === "True"));
  const chips = [];
  if (n.unschedulable) chips.push(badge("SchedulingDisabled", "warn"));
  for (const c of bad) chips.push(badge(c.type === "Ready" ? `NotReady` : c.type, "warn"));
  if (!chips.length) chips.push(badge((n.conditions || []).length ? "Ready" : "no conditions", "ok"));
  return chips;
}

function conditionText(n) {
  return conditions(n).map((c) => c.textContent).join(" ");
}

export async function overview() {
  const data = await get("/api/v1/cluster");
  const nodes = data.nodes;
  const resources = resourcesOf(nodes);
  const columns = [
    { key: "name", label: "Node", render: (n) => link(nodeRoute(n.name), n.name) },
    { key: "group", label: "Group", filter: true },
    ...resources.map((r) => ({ key: `res:${r}`, label: r === "pods" ? "pods" : `${r} requested / allocatable`, numeric: true,
      value: (n) => requested(n, r), render: (n) => usage(n, r) })),
    { key: "numaNodes", label: "NUMA nodes", numeric: true, value: (n) => n.numaNodes ?? "" },
    { key: "conditions", label: "Conditions", value: conditionText, render: conditions, filter: true },
    { key: "kubelet", label: "Kubelet", filter: true, value: (n) => (n.kubeletModelled ? "modelled" : "not modelled"),
      render: (n) => (n.kubeletModelled ? badge("modelled", "ok") : badge("not modelled", "muted")) },
    { key: "kubeletDisagreements", label: "Kubelet rejects", numeric: true,
      title: "running pods this node's modelled kubelet would reject", cellClass: (n) => (n.kubeletDisagreements ? "bad" : "") },
  ];
  const footer = (shown) => [
    `Total (${shown.length} nodes)`, "",
    ...resources.map((r) => {
      const q = shown.reduce((a, n) => a + requested(n, r), 0);
      const a = shown.reduce((x, n) => x + (allocatable(n, r) || 0), 0);
      return `${fmtAmount(r, q)} / ${fmtAmount(r, a)}`;
    }),
    String(shown.reduce((a, n) => a + (n.numaNodes || 0), 0)), "", "",
    String(shown.reduce((a, n) => a + n.kubeletDisagreements, 0)),
  ];
  return h("div", { class: "view", "data-view": "overview" },
    h("h1", {}, "Cluster"),
    h("div", { class: "stats" },
      stat("nodes", nodes.length, { "data-stat": "nodes" }),
      stat("running pods", data.runningPods, { "data-stat": "running" }),
      h("a", { href: "#/pending", class: "stat-link" }, stat("pending pods", data.pendingPods, { "data-stat": "pending" })),
      stat("kubelet states", data.kubeletClasses, { "data-stat": "kubelets", title: "distinct modelled kubelets (machine × configuration × pods)" }),
      stat("Kubernetes", data.kubernetesVersion, { "data-stat": "version" })),
    h("p", { class: "muted" }, "Loaded from ", (data.sources || []).map((x, i) => [i ? ", " : "", h("code", {}, x)]),
      data.generation ? ` — changed ${data.generation} time(s) since (extender binds)` : ""),
    dataTable({ id: "nodes", rows: nodes, columns, footer, sort: { key: "name", desc: false } }));
}
