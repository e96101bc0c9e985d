"""``kubetwin runtime`` as a library call: inputs checked, node restored, one step run, a report.

Every input is read and checked before anything happens (machine, policy resource or Helm
values, kubelet configuration, Python plugins, RDT / Block I/O configuration, pods and their
annotations, pods to delete); the node is restored from ``--state-dir`` (replayed quietly), the
step's deletions then creations run, and the report describes every container on the node
after the step (its effective cpuset and memory nodes, classes, the grant, the adjustment each
NRI plugin made) plus the pods refused in this step. ``--write-state`` is written last.

The JSON shape is the conformance contract (``../shared/conformance/FORMAT.md``, kind
RuntimePolicy): ``containers[]`` with ``pod``, ``namespace``, ``name``, ``cpus``, ``mems``,
``rdtClass``, ``blockioClass``; ``rejected[]`` with ``pod``, ``namespace``, ``reason``, ``message``.

Not an upstream module: kubetwin's own driver of one ``kubetwin runtime`` step (containers/nri adaptation + nri-plugins pkg/resmgr).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import collecting, strict_mode
from ..errors import InputError
from ..model.cpuset import CPUSet
from . import class_bridge as classes
from .annotations import validate_pod_annotations
from .node import RuntimeNode
from .nri.api import to_json
from .state import NodeState, check_same_node, check_snapshot, digest, load_state, write_state


@dataclass
class RuntimeInputs:
    machine: str
    policy: str
    pods: list[str] = field(default_factory=list)
    helm_values: str | None = None
    kubelet_config: str | None = None
    rdt: str | None = None
    blockio: str | None = None
    plugins: list[str] = field(default_factory=list)
    isolated: str = ""
    state_dir: str | None = None
    write_state: str | None = None
    delete: list[str] = field(default_factory=list)
    kubernetes_version: str | None = None
    explain: bool = False
    #: add the NodeResourceTopology the policy publishes (``-o nrt``), named ``node_name``
    nrt: bool = False
    node_name: str = ""


@dataclass
class _Loaded:
    machine: Any
    policy: Any
    kubelet: Any
    plugin_specs: list[str]
    plugin_digests: list[str]
    isolated: CPUSet
    rdt: Any
    blockio: Any
    identity: dict[str, str]


def _load(inputs: RuntimeInputs, *, machine: Any = None, kubelet: Any = None) -> _Loaded:
    """Every input read and checked; ``machine`` and ``kubelet`` (a Machine, a
    KubeletConfiguration) given already read stand for ``inputs.machine`` / ``inputs.kubelet_config``."""
    from ..machine import load_machine
    from ..machine.machineinfo import to_machineinfo
    from ..model.kubelet_config import load_kubelet_config
    from .config import load_policy
    from .plugins import load_plugin

    if machine is None:
        machine = load_machine(inputs.machine)
    policy = None
    if inputs.policy != "none":
        policy = load_policy(inputs.policy, inputs.helm_values)
    elif inputs.helm_values:
        raise InputError("--helm-values needs --policy topology-aware|balloons", path="--helm-values")
    if kubelet is None:
        kubelet = load_kubelet_config(inputs.kubelet_config, inputs.kubernetes_version)
    digests = [load_plugin(spec)[1] for spec in inputs.plugins]  # checked now; instantiated per node
    isolated = CPUSet.parse(inputs.isolated, "--isolated-cpus")
    rdt = classes.load_rdt(inputs.rdt)
    blockio = classes.load_blockio(inputs.blockio)
    identity = {
        "machine": digest(to_machineinfo(machine)),
        "policy": digest(policy.spec if policy is not None else None) + f":{policy.policy if policy else 'none'}",
        "pluginIndex": policy.plugin_index if policy is not None else "",
        "kubeletConfig": digest(repr(kubelet)),
        "plugins": digest(digests),
        "isolatedCPUs": str(isolated),
        "rdt": digest(repr(rdt)) if rdt is not None else "",
        "blockio": digest(repr(blockio)) if blockio is not None else "",
    }
    return _Loaded(machine, policy, kubelet, list(inputs.plugins), digests, isolated, rdt, blockio, identity)


def _load_pods(paths: list[str], loaded: _Loaded) -> list[tuple[Any, dict[str, Any], str]]:
    """(Pod, the manifest as given, where) for every pod of the step, annotations checked."""
    from ..model.loader import load_documents
    from ..model.objects import decode_document

    out = []
    for path in paths:
        for doc in load_documents(path):
            if not isinstance(doc.obj, dict) or doc.obj.get("kind") != "Pod":
                raise InputError(f"expected Pod objects, got kind {doc.obj.get('kind')!r}", file=doc.where,
                                 path="kind")
            pod = decode_document(doc)
            _check_pod(pod, doc.where, loaded)
            out.append((pod, doc.obj, doc.where))
    return out


def _check_pod(pod: Any, where: str, loaded: _Loaded, path: str = "metadata") -> None:
    names = [c.name for c, _ in pod.all_containers()]
    annotations = dict(pod.metadata.annotations)
    if loaded.policy is not None:
        validate_pod_annotations(annotations, names, loaded.policy.policy, loaded.policy.config, file=where,
                                 path=path)
    classes.check_annotations(annotations, file=where, path=path)
    for name in names:
        classes.check_class(loaded.rdt, classes.runtime_rdt_class(annotations, name), "RDT", file=where,
                            path=f'{path}.annotations["{classes.RDT_ANNOTATION}"]')
        classes.check_class(loaded.blockio, classes.runtime_blockio_class(annotations, name), "Block I/O",
                            file=where, path=f'{path}.annotations["{classes.BLOCKIO_ANNOTATION}"]')


def _new_node(loaded: _Loaded) -> RuntimeNode:
    from .plugins import load_plugin

    plugins = [load_plugin(spec)[0] for spec in loaded.plugin_specs]
    return RuntimeNode(loaded.machine, loaded.policy, loaded.kubelet, plugins=plugins, isolated=loaded.isolated)


def _resolve_deletes(node: RuntimeNode, names: list[str], path: str = "--delete") -> list[str]:
    keys = []
    for name in names:
        if "/" in name:
            if name not in node.pods:
                raise InputError(f'no pod "{name}" on the node', path=path,
                                 fix="running: " + (", ".join(node.pods) or "none"))
            keys.append(name)
            continue
        matches = [k for k, rec in node.pods.items() if rec.pod.name == name]
        if not matches:
            raise InputError(f'no pod "{name}" on the node', path=path,
                             fix="running: " + (", ".join(node.pods) or "none"))
        if len(matches) > 1:
            raise InputError(f'"{name}" names pods in several namespaces: {", ".join(matches)}', path=path,
                             fix="give NAMESPACE/NAME")
        keys.append(matches[0])
    return keys


def _step(node: RuntimeNode, deletes: list[str], pods: list[Any]) -> list[Any]:
    for key in deletes:
        node.delete_pod(key)
    rejected = []
    for pod in pods:
        r = node.create_pod(pod)
        if r is not None:
            rejected.append(r)
    return rejected


def run_runtime(inputs: RuntimeInputs) -> dict[str, Any]:
    from ..outputs import check_output

    loaded = _load(inputs)
    if inputs.write_state:
        check_output(f"{inputs.write_state}/node.json", "--write-state")
    state = NodeState(dict(loaded.identity))
    if inputs.state_dir:
        previous = load_state(inputs.state_dir)
        check_same_node(previous, loaded.identity, inputs.state_dir)
        state.history = previous.history
    step_pods = _load_pods(inputs.pods, loaded)
    node = _new_node(loaded)
    if state.history:
        with strict_mode(False), collecting():
            for i, past in enumerate(state.history):
                try:
                    pods = []
                    for raw in past.get("create") or []:
                        from ..model.pod import pod_from_dict

                        pods.append(pod_from_dict(raw, f"{inputs.state_dir}: history[{i}]"))
                    _step(node, list(past.get("delete") or []), pods)
                except InputError as exc:
                    raise InputError(f"the state folder's history does not replay: {exc}", file=inputs.state_dir,
                                     path="--state-dir") from None
        check_snapshot(previous, _snapshot(build_report(node, loaded, [])), inputs.state_dir or "")
    deletes = _resolve_deletes(node, inputs.delete)
    trace_start = len(node.adaptation.trace)
    rejected = _step(node, deletes, [p for p, _, _ in step_pods])
    state.history.append({"delete": deletes, "create": [raw for _, raw, _ in step_pods]})
    report = build_report(node, loaded, rejected, explain=inputs.explain, trace_start=trace_start)
    if inputs.nrt:
        from .nrt import export

        report["nodeResourceTopology"] = export(node, inputs.node_name or loaded.machine.name or "node")
    if inputs.write_state:
        write_state(inputs.write_state, state, _snapshot(report))
    return report


def _snapshot(report: dict[str, Any]) -> dict[str, Any]:
    """What the state file keeps of a report beside the history."""
    return {"containers": report["containers"], "node": report["node"]}


def run_on_node(inputs: RuntimeInputs, *, machine: Any, kubelet: Any, running: list[Any],
                pods: list[tuple[Any, dict[str, Any]]], where: str = "request body") -> dict[str, Any]:
    """One ``kubetwin runtime`` step on a node already read (``kubetwin serve``'s nodes): its
    ``running`` pods created first, quietly (as ``--state-dir``'s history is replayed), then
    ``inputs.delete`` and the step's ``pods`` ((Pod, manifest) pairs, each checked against the
    policy and classes first, errors at ``pods[i]``). ``inputs.pods``, ``state_dir`` and
    ``write_state`` are not read: nothing is written."""
    loaded = _load(inputs, machine=machine, kubelet=kubelet)
    for i, (pod, _) in enumerate(pods):
        _check_pod(pod, where, loaded, path=f"pods[{i}].metadata")
    node = _new_node(loaded)
    with strict_mode(False), collecting():
        _step(node, [], list(running))
    deletes = _resolve_deletes(node, inputs.delete, path="delete")
    trace_start = len(node.adaptation.trace)
    rejected = _step(node, deletes, [p for p, _ in pods])
    report = build_report(node, loaded, rejected, explain=inputs.explain, trace_start=trace_start)
    if inputs.nrt:
        from .nrt import export

        report["nodeResourceTopology"] = export(node, inputs.node_name or loaded.machine.name or "node")
    return report


# --- the report --------------------------------------------------------------------------------
def _effective_cpus(node: RuntimeNode, text: str) -> CPUSet:
    """An empty ``cpuset.cpus`` inherits the parent's: every online CPU of the node."""
    return CPUSet.parse(text) if text else node.system.online_cpus


def _effective_mems(node: RuntimeNode, text: str) -> str:
    if text:
        return str(CPUSet.parse(text))
    return str(CPUSet(i for i in node.system.node_ids() if node.system.node(i).memory > 0))


def container_report(node: RuntimeNode, loaded: _Loaded, prec: Any, rec: Any, explain: bool) -> dict[str, Any]:
    res = rec.ctr.resources()
    annotations = dict(prec.pod.metadata.annotations)
    cpus = _effective_cpus(node, res.cpu.cpus)
    rdt_class = res.rdt_class if res.rdt_class is not None else classes.runtime_rdt_class(annotations, rec.name)
    blockio_class = (res.blockio_class if res.blockio_class is not None
                     else classes.runtime_blockio_class(annotations, rec.name))
    out: dict[str, Any] = {
        "pod": prec.pod.name, "namespace": prec.pod.namespace, "name": rec.name, "type": rec.kind,
        "qosClass": rec.qos, "cpus": str(cpus), "mems": _effective_mems(node, res.cpu.mems),
        "rdtClass": rdt_class or None, "blockioClass": blockio_class or None,
        "cpusetCpus": res.cpu.cpus, "cpusetMems": res.cpu.mems,
        "numaNodes": str(CPUSet(node.system.cpu(c).node for c in cpus)),
    }
    schemata = classes.rdt_schemata(loaded.rdt, rdt_class or "", node.machine)
    if schemata is not None:
        out["rdtSchemata"] = schemata
    resmgr = node.resmgr
    if resmgr is not None:
        c = resmgr.cache.lookup_container(rec.ctr.id)
        if c is not None:
            grant = resmgr.policy.describe_container(c)
            if grant is not None:
                out["grant"] = grant
            if explain and hasattr(resmgr.policy, "explain"):
                why = resmgr.policy.explain(c.id)
                if why is not None:
                    out["explain"] = why
    out["resources"] = to_json(res)
    out["criResources"] = rec.cri
    out["adjustments"] = rec.replies
    if rec.owners:
        out["owners"] = rec.owners
    return out


def build_report(node: RuntimeNode, loaded: _Loaded, rejected: list[Any], *, explain: bool = False,
                 trace_start: int = 0) -> dict[str, Any]:
    containers = [container_report(node, loaded, p, r, explain) for p, r in node.running()]
    report: dict[str, Any] = {
        "containers": containers,
        "rejected": [r.to_json() for r in rejected],
        "node": node_report(node, containers),
        "plugins": node.adaptation.plugin_list(),
    }
    if explain:
        report["events"] = [e.to_json() for e in node.adaptation.trace[trace_start:]]
    return report


def node_report(node: RuntimeNode, containers: list[dict[str, Any]]) -> dict[str, Any]:
    """The NUMA map after admission: per NUMA node, its CPUs and who runs where."""
    sys = node.system
    out: dict[str, Any] = {}
    if node.resmgr is not None:
        out["policy"] = node.resmgr.policy.describe()
    numa = []
    for nid in sys.node_ids():
        n = sys.node(nid)
        cpus = n.cpus
        exclusive, shared = [], []
        for c in containers:
            cs = CPUSet.parse(c["cpus"]) if c["cpus"] else CPUSet()
            if not (cs & cpus):
                continue
            who = f"{c['namespace']}/{c['pod']}/{c['name']}"
            grant = c.get("grant") or {}
            if "exclusive" in grant or "isolated" in grant:
                exclusive.append({"container": who, "cpus": str(cs & cpus)})
            else:
                shared.append(who)
        entry: dict[str, Any] = {"node": nid, "cpus": str(cpus), "memory": n.memory, "memoryType": n.memory_type}
        if exclusive:
            entry["exclusive"] = exclusive
        if shared:
            entry["shared"] = shared
        numa.append(entry)
    out["numaNodes"] = numa
    return out
