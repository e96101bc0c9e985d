// Pending pods with the scheduler's message: one scheduling cycle each against the served
// cluster (what kube-scheduler would answer now — a node, or why none fits).

import { get } from "../lib/api.js";
import { h, link, nodeRoute, podRoute, stat } from "../lib/dom.js";
import { dataTable } from "../lib/table.js";

export async function pendingView() {
  const data = await get("/api/v1/pending");
  const rows = data.pods.map((p) => ({ ...p, verdict: p.node ? "would schedule" : "unschedulable" }));
  return h("div", { class: "view", "data-view": "pending" },
    h("h1", {}, "Pending pods"),
    h("div", { class: "stats" }, stat("pending", data.total, { "data-stat": "pending" }),
      stat("would schedule now", rows.filter((r) => r.node).length),
      stat("unschedulable", rows.filter((r) => !r.node).length)),
    data.truncated ? h("p", { class: "notice warn" }, `The first ${data.pods.length} of ${data.total} are shown (each costs a scheduling cycle).`) : null,
    dataTable({ id: "pending", rows, empty: "no pending pods", sort: { key: "pod", desc: false }, columns: [
      { key: "pod", label: "Pod", render: (r) => link(podRoute(r.pod), r.pod) },
      { key: "namespace", label: "Namespace", filter: true, value: (r) => r.pod.split("/")[0] },
      { key: "verdict", label: "Scheduler", filter: true, cellClass: (r) => (r.node ? "ok" : "bad") },
      { key: "node", label: "Node", value: (r) => r.node || "", render: (r) => (r.node ? link(nodeRoute(r.node), r.node) : "—") },
      { key: "message", label: "The scheduler's message" },
    ] }));
}
