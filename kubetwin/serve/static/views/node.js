// A node: its object (labels, taints, capacity, allocatable), then its modelled kubelet's NUMA
// map — socket → NUMA node → core → CPU, each CPU coloured by who holds it (reserved, shared
// pool, a container's exclusive CPUs, a pod's shared pool), memory per NUMA node with each
// container's blocks, devices — and every container's CRI resources.

import { get } from "../lib/api.js";
import { badge, colourOf, facts, fmtAmount, fmtBytes, h, link, parseCpuList, podRoute, section, stat } from "../lib/dom.js";
import { dataTable } from "../lib/table.js";

/** CPU id -> {kind, owner} from the kubelet's per-NUMA rows. */
function cpuOwners(kubelet) {
  const out = new Map();
  const put = (list, kind, owner) => parseCpuList(list).forEach((c) => out.set(c, { kind, owner }));
  for (const row of kubelet.numaNodes || []) {
    put(row.cpus, "shared", "");
    if (row.sharedPool !== undefined) put(row.sharedPool, "shared", "");
    for (const [owner, list] of Object.entries(row.podSharedPool || {})) put(list, "pod-pool", owner);
    for (const [owner, list] of Object.entries(row.exclusive || {})) put(list, "exclusive", owner);
    if (row.reserved) put(row.reserved, "reserved", "");
  }
  return out;
}

const podOf = (owner) => owner.split("/").slice(0, 2).join("/");
const shortOwner = (owner) => owner.split("/").slice(1).join("/");

function cpuCell(cpu, core, owners) {
  const o = owners.get(cpu) || { kind: "shared", owner: "" };
  const what = { reserved: "reserved for the system", shared: "shared pool", exclusive: "exclusive", "pod-pool": "pod's shared pool" }[o.kind];
  return h("div", { class: `cpu ${o.kind}`, "data-cpu": cpu, "data-owner": o.owner,
    style: o.owner ? `background:${colourOf(podOf(o.owner))}` : null,
    title: `CPU ${cpu} · core ${core.core} · socket ${core.socket} · NUMA node ${core.numaNode} — ${what}${o.owner ? ": " + o.owner : ""}` },
  h("b", {}, cpu), h("small", {}, o.owner ? shortOwner(o.owner) : o.kind === "reserved" ? "reserved" : ""));
}

/** The memory manager's table per NUMA node: `reserved` is what containers were given (its
 * MemoryTable's Reserved), out of `allocatable`; `free` the rest. */
function memoryOf(row) {
  if (!row.memory) return null;
  const bars = Object.entries(row.memory).filter(([, m]) => m.allocatable || m.reserved).map(([type, m]) => {
    const pct = m.allocatable ? (100 * m.reserved) / m.allocatable : 0;
    return h("div", { class: "mem", "data-memory": type },
      h("span", {}, `${type}: ${fmtBytes(m.reserved)} given to containers of ${fmtBytes(m.allocatable)} allocatable, ${fmtBytes(m.free)} free`),
      h("div", { class: "bar" }, h("i", { style: `width:${pct}%` })));
  });
  const owners = Object.entries(row.memoryOwners || {}).map(([k, v]) =>
    h("li", {}, h("i", { class: "swatch", style: `background:${colourOf(podOf(k))}` }), `${k}: ${fmtBytes(v)}`));
  return h("div", { class: "numa-memory" }, bars, owners.length ? h("ul", { class: "owners" }, owners) : null);
}

function devicesOf(row) {
  if (!row.devices || !row.devices.length) return null;
  return h("ul", { class: "devices" }, row.devices.map((d) =>
    h("li", { "data-device": d.id, style: d.owner ? `background:${colourOf(podOf(d.owner))}` : null },
      `${d.resource} ${d.id}`, d.owner ? ` → ${d.owner}` : " (free)", d.health !== "Healthy" ? ` — ${d.health}` : "")));
}

function numaMap(kubelet) {
  const owners = cpuOwners(kubelet);
  const rows = new Map((kubelet.numaNodes || []).map((r) => [r.id, r]));
  const sockets = new Map();
  for (const core of kubelet.cores || []) {
    if (!sockets.has(core.socket)) sockets.set(core.socket, new Map());
    const numas = sockets.get(core.socket);
    if (!numas.has(core.numaNode)) numas.set(core.numaNode, []);
    numas.get(core.numaNode).push(core);
  }
  const shownNuma = new Set();
  const grid = [...sockets.entries()].sort((a, b) => a[0] - b[0]).map(([socket, numas]) =>
    h("div", { class: "socket", "data-socket": socket }, h("h3", {}, `Socket ${socket}`),
      [...numas.entries()].sort((a, b) => a[0] - b[0]).map(([numa, cores]) => {
        const row = rows.get(numa) || {};
        const first = !shownNuma.has(numa);
        shownNuma.add(numa);
        return h("div", { class: "numa", "data-numa": numa },
          h("h4", {}, `NUMA node ${numa}`, h("span", { class: "muted" }, ` CPUs ${row.cpus || ""}`)),
          h("div", { class: "cores" }, cores.map((core) =>
            h("div", { class: "core", title: `core ${core.core}` }, core.cpus.map((c) => cpuCell(c, core, owners))))),
          first ? memoryOf(row) : null, first ? devicesOf(row) : null);
      })));
  const legendOwners = [...new Set([...owners.values()].filter((o) => o.owner).map((o) => podOf(o.owner)))].sort();
  const legend = h("div", { class: "legend" },
    h("span", {}, h("i", { class: "cpu-key reserved" }), "reserved"),
    h("span", {}, h("i", { class: "cpu-key shared" }), "shared pool"),
    legendOwners.map((p) => h("span", {}, h("i", { style: `background:${colourOf(p)}` }), link(podRoute(p), p))));
  return h("div", { class: "numa-map" }, legend, h("div", { class: "sockets" }, grid));
}

function containersTable(kubelet) {
  const rows = [];
  for (const p of kubelet.pods || []) {
    for (const c of p.containers) rows.push({ pod: `${p.namespace}/${p.name}`, admitted: p.admitted, reason: p.reason, ...c,
      r: c.resources || {} });
  }
  return dataTable({ id: "containers", rows, sort: null, empty: "no pods on this node",
    columns: [
      { key: "pod", label: "Pod", render: (r) => link(podRoute(r.pod), r.pod) },
      { key: "name", label: "Container" },
      { key: "type", label: "Type", filter: true },
      { key: "qosClass", label: "QoS", filter: true },
      { key: "admitted", label: "Admitted", filter: true, value: (r) => (r.admitted ? "yes" : `no: ${r.reason}`),
        cellClass: (r) => (r.admitted ? "" : "bad") },
      { key: "cpuset", label: "cpuset.cpus", value: (r) => r.r.cpusetCpus ?? "" },
      { key: "mems", label: "cpuset.mems", value: (r) => r.r.cpusetMems ?? "" },
      { key: "shares", label: "cpu shares", numeric: true, value: (r) => r.r.cpuShares ?? "" },
      { key: "quota", label: "CFS quota", numeric: true, value: (r) => r.r.cpuQuota ?? "" },
      { key: "mem", label: "memory limit", numeric: true, value: (r) => r.r.memoryLimitInBytes ?? "",
        render: (r) => (r.r.memoryLimitInBytes ? fmtBytes(r.r.memoryLimitInBytes) : r.r.memoryLimitInBytes === 0 ? "none" : "") },
      { key: "oom", label: "oom_score_adj", numeric: true, value: (r) => r.r.oomScoreAdj ?? "" },
      { key: "devices", label: "Devices", value: (r) => (r.devices || []).map((d) => `${d.resourceName}: ${d.deviceIds.join(",")}`).join("; ") },
    ] });
}

/** A Quantity string as written, plain byte counts with binary suffixes. */
function quantity(resource, v) {
  if (v === undefined) return "";
  return /^\d+$/.test(v) && resource !== "cpu" && resource !== "pods" ? fmtAmount(resource, Number(v)) : v;
}

function amountsTable(node) {
  const rows = Object.keys(node.capacity).concat(Object.keys(node.kubelet ? node.kubelet.allocatable : {}))
    .filter((r, i, all) => all.indexOf(r) === i).map((r) => ({ resource: r }));
  return dataTable({ id: "amounts", rows, columns: [
    { key: "resource", label: "Resource" },
    { key: "capacity", label: "Capacity (Node)", value: (x) => quantity(x.resource, node.capacity[x.resource]) },
    { key: "allocatable", label: "Allocatable (Node)", value: (x) => quantity(x.resource, node.allocatable[x.resource]) },
    { key: "kubelet", label: "Allocatable (modelled kubelet)",
      value: (x) => quantity(x.resource, node.kubelet ? node.kubelet.allocatable[x.resource] : undefined) },
  ] });
}

export async function nodeView(name) {
  const node = await get(`/api/v1/nodes/${encodeURIComponent(name)}`);
  const k = node.kubelet;
  const head = h("div", { class: "stats" },
    stat("pods", node.pods.length, { "data-stat": "pods" }),
    stat("node group", node.group),
    k ? stat("CPU manager", k.cpuManagerPolicy) : null,
    k ? stat("memory manager", k.memoryManagerPolicy) : null,
    k ? stat("topology manager", `${k.topologyManagerPolicy} (${k.topologyManagerScope})`) : null);
  return h("div", { class: "view", "data-view": "node" },
    h("p", { class: "crumbs" }, h("a", { href: "#/overview" }, "Cluster"), " / node"),
    h("h1", {}, node.name),
    head,
    facts([
      ["labels", Object.entries(node.labels).map(([a, b]) => badge(`${a}=${b}`, "label"))],
      ["taints", node.taints.length ? node.taints.map((t) => badge(`${t.key}${t.value ? "=" + t.value : ""}:${t.effect}`, "warn")) : "none"],
      ["reserved CPUs", k && k.reservedCpus],
    ]),
    k ? section("NUMA map", numaMap(k))
      : section("NUMA map", h("p", { class: "notice" }, "This node has no modelled kubelet (no machine): give its node group a ",
        h("code", {}, "machine"), ", or name one with ", h("code", {}, "kubetwin serve --kubelets"), ".")),
    section("Resources", amountsTable(node)),
    k ? section("Containers (CRI resources as the kubelet sets them)", containersTable(k))
      : section("Pods", h("ul", {}, node.pods.map((p) => h("li", {}, link(podRoute(p), p))))));
}
