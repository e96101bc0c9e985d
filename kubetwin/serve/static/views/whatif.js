// What-if: a pod of the user's (JSON, as the API takes it) run through one explained scheduling
// cycle against the served cluster — each Filter plugin's verdict and Score per node, and each
// node's kubelet verdict beside them (POST /api/v1/schedule; nothing in the cluster changes).

import { post } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { errorBox } from "../lib/errors.js";
import { scheduling } from "./pod.js";

// the README's extender example pod (examples/serve/solver-6cpu.json), tolerating gpu-0's taint
const EXAMPLE = {
  metadata: { name: "solver-0", namespace: "default" },
  spec: {
    tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
    containers: [{ name: "solver", image: "registry.example/solver:1",
      resources: { requests: { cpu: "6", memory: "8Gi" }, limits: { cpu: "6", memory: "8Gi" } } }],
  },
};

const KEY = "kubetwin-what-if-pod";

export async function whatIfView() {
  const text = h("textarea", { rows: 8, name: "pod", spellcheck: "false", "aria-label": "the pod, as JSON" },
    sessionStorage.getItem(KEY) || JSON.stringify(EXAMPLE, null, 2));
  const out = h("div", { "data-role": "what-if-result" });
  const form = h("form", { class: "start", onsubmit: async (e) => {
    e.preventDefault();
    sessionStorage.setItem(KEY, text.value);
    let pod;
    try {
      pod = JSON.parse(text.value);
    } catch (err) {
      out.replaceChildren(h("div", { class: "error", role: "alert" }, `The pod is not JSON: ${err.message}`));
      return;
    }
    out.replaceChildren(h("p", { class: "loading" }, "Scheduling…"));
    try {
      const d = await post("/api/v1/schedule", { pod });
      out.replaceChildren(...scheduling(d));
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
  } }, h("label", {}, "A Pod (JSON; kubectl get pod NAME -o json, or written by hand):"), text,
  h("button", { type: "submit" }, "Schedule it"));
  return h("div", { class: "view", "data-view": "what-if" },
    h("h1", {}, "What if this pod came?"),
    h("p", { class: "muted" }, "One scheduling cycle of kube-scheduler's default profile against the served cluster, with each node's modelled kubelet verdict beside it. The cluster does not change."),
    form, out);
}
