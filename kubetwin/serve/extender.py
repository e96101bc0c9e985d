"""A kube-scheduler extender answering from kubetwin's model of each node's kubelet.

The protocol is kube-scheduler's HTTP extender (``pkg/scheduler/extender.go``) with the types of
``k8s.io/kube-scheduler/extender/v1`` (``types.go``). Those Go structs carry **no JSON tags**, so
their fields travel under the Go field names (``Pod``, ``NodeNames``, ``FailedNodes``, ``Host``,
``Score``, ``NodeNameToMetaVictims``, ``UID``, ``PodUID``, ...), and Go's ``encoding/json`` matches
them case-insensitively on decode — as here. A ``nil`` map, slice or pointer is ``null``.

* ``filter``: ``ExtenderArgs`` → ``ExtenderFilterResult``. With ``nodeCacheCapable: true`` the
  scheduler sends ``NodeNames`` and reads ``NodeNames`` back; otherwise it sends ``Nodes`` (a
  NodeList) and reads ``Nodes``. A node whose modelled kubelet would reject the pod
  (``TopologyAffinityError``, ``SMTAlignmentError``, the memory manager's and device manager's
  errors, ``OutOf<resource>``) goes to ``FailedNodes`` with the kubelet's reason and message — or
  to ``FailedAndUnresolvableNodes`` when even the node's kubelet with nothing admitted would
  reject it (preemption cannot help). A node without a modelled kubelet passes.
* ``prioritize``: ``ExtenderArgs`` → ``HostPriorityList``, one ``HostPriority`` per node, 0..
  ``MaxExtenderPriority`` (10): the NUMA fit of the kubelet's allocation (10 when the pod's
  exclusive CPUs, memory blocks and devices come from one NUMA node, 5 from two, ...; 0 when
  nothing of the pod is NUMA-bound, the kubelet would reject it, or no kubelet is modelled).
* ``preempt``: ``ExtenderPreemptionArgs`` → ``ExtenderPreemptionResult``: of the scheduler's
  candidate nodes, those whose kubelet would admit the pod once the victims are gone keep their
  victims (as ``MetaVictims``); the others are dropped.
* ``bind``: ``ExtenderBindingArgs`` → ``ExtenderBindingResult``: the served cluster's node admits
  the pod (only with ``--allow-writes``). kubetwin binds nothing in a real API server.

Not an upstream module: kubetwin's extender (the protocol's other side,
``pkg/scheduler/extender.go``, is kube-scheduler's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from ..errors import InputError
from .kubelet_models import Verdict, pod_shape

if TYPE_CHECKING:
    from ..model.pod import Pod
    from .cluster import ServedCluster

ARGS_FIELDS = ("Pod", "Nodes", "NodeNames")
PREEMPTION_ARGS_FIELDS = ("Pod", "NodeNameToVictims", "NodeNameToMetaVictims")
VICTIMS_FIELDS = ("Pods", "NumPDBViolations")
META_POD_FIELDS = ("UID",)
BINDING_ARGS_FIELDS = ("PodName", "PodNamespace", "PodUID", "Node")


def go_fields(obj: Any, names: tuple[str, ...], path: str) -> dict[str, Any]:
    """A JSON object decoded into a Go struct without JSON tags: keys matched to the field names
    case-insensitively (``encoding/json``); an unknown key is refused with the nearest name."""
    from ..model.strict import unknown_key_error

    if not isinstance(obj, Mapping):
        raise InputError(f"expected an object, not {_json_type(obj)}", path=path)
    folded = {n.lower(): n for n in names}
    out: dict[str, Any] = {}
    for k, v in obj.items():
        name = folded.get(str(k).lower())
        where = f"{path}.{k}" if path else str(k)
        if name is None:
            raise unknown_key_error(str(k), names, path=where, what="field")
        if name in out:
            raise InputError(f"duplicate field {name!r} (Go's encoding/json matches field names case-insensitively)",
                             path=where)
        out[name] = v
    return out


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "number",
            float: "number"}.get(type(v), type(v).__name__)


def decode_pod(raw: Any, path: str) -> Pod:
    """The ``*v1.Pod`` of a request: a Pod as the API server stores it; kube-scheduler's pods come
    from its informer cache without ``apiVersion``/``kind`` (TypeMeta), which are filled in."""
    from ..model.pod import pod_from_dict

    if not isinstance(raw, Mapping):
        raise InputError(f"Required value: a Pod object, not {_json_type(raw)}", path=path)
    obj = dict(raw)
    obj.setdefault("apiVersion", "v1")
    obj.setdefault("kind", "Pod")
    try:
        return pod_from_dict(obj)
    except InputError as exc:
        raise exc.within(path) from None


def _string_list(raw: Any, path: str) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
        raise InputError("expected an array of node names (strings)", path=path)
    return raw


def _node_items(raw: Any, path: str) -> list[dict[str, Any]]:
    """The items of a NodeList, each a Node (strictly checked; TypeMeta filled in as for pods)."""

    if not isinstance(raw, Mapping):
        raise InputError(f"expected a NodeList object, not {_json_type(raw)}", path=path)
    items = raw.get("items")
    if items is None:
        items = []
    if not isinstance(items, list):
        raise InputError("expected an array of Node objects", path=f"{path}.items")
    rest = {k: v for k, v in raw.items() if k != "items"}
    for k in rest:
        if k not in ("apiVersion", "kind", "metadata"):
            from ..model.strict import unknown_key_error

            raise unknown_key_error(k, ("apiVersion", "kind", "metadata", "items"), path=f"{path}.{k}")
    nodes = []
    for i, item in enumerate(items):
        where = f"{path}.items[{i}]"
        if not isinstance(item, Mapping):
            raise InputError(f"expected a Node object, not {_json_type(item)}", path=where)
        node = dict(item)
        node.setdefault("apiVersion", "v1")
        node.setdefault("kind", "Node")
        if node["apiVersion"] != "v1" or node["kind"] != "Node":
            raise InputError(f"expected apiVersion v1, kind Node, not {node['apiVersion']!r}, {node['kind']!r}",
                             path=f"{where}.kind")
        meta = node.get("metadata")
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str) or not meta["name"]:
            raise InputError("Required value: metadata.name", path=f"{where}.metadata.name")
        nodes.append(node)
    _check_nodes(nodes, path)
    return nodes


def _check_nodes(nodes: list[dict[str, Any]], path: str) -> None:
    """Every Node strictly checked: at C speed (``apischema.strict_struct``), and on a failure by the
    plain walker, for its message and field path."""
    from types import GenericAlias

    import msgspec

    from ..model.apischema import check_api_object, strict_struct

    typ = strict_struct("v1", "Node")
    if typ is not None:
        try:
            msgspec.convert(nodes, GenericAlias(list, (typ,)))
            return
        except msgspec.ValidationError:
            pass
    for i, node in enumerate(nodes):
        try:
            check_api_object(node, None)
        except InputError as exc:
            exc.file = None
            raise exc.within(f"{path}.items[{i}]") from None


class ExtenderArgs:
    """``ExtenderArgs``: the pod and its candidate nodes, by name or as Node objects."""

    __slots__ = ("pod", "names", "items")

    def __init__(self, raw: Any):
        f = go_fields(raw, ARGS_FIELDS, "")
        self.pod = decode_pod(f.get("Pod"), "Pod")
        self.items: list[dict[str, Any]] | None = None
        if f.get("NodeNames") is not None:
            self.names = _string_list(f["NodeNames"], "NodeNames")
        elif f.get("Nodes") is not None:
            self.items = _node_items(f["Nodes"], "Nodes")
            self.names = [i["metadata"]["name"] for i in self.items]
        else:
            raise InputError("Required value: NodeNames (nodeCacheCapable: true) or Nodes (nodeCacheCapable: false)",
                             path="NodeNames")


def _failure(v: Verdict) -> str:
    return f"kubelet admission: {v.reason}: {v.message}" if v.message else f"kubelet admission: {v.reason}"


def filter_nodes(cluster: ServedCluster, raw: Any) -> dict[str, Any]:
    """``ExtenderFilterResult`` for an ``ExtenderArgs``."""
    args = ExtenderArgs(raw)
    pod = args.pod
    cluster.remember(pod)
    models = cluster.kubelets
    shape = pod_shape(pod)
    rejected = models.rejections(pod, shape)
    failed: dict[str, str] = {}
    unresolvable: dict[str, str] = {}
    if rejected:
        passing = []
        for name in args.names:
            hit = rejected.get(name)
            if hit is None:
                passing.append(name)
            else:
                (unresolvable if hit[1] else failed)[name] = _failure(hit[0])
    else:
        passing = list(args.names)
    result: dict[str, Any] = {"Nodes": None, "NodeNames": None, "FailedNodes": failed,
                              "FailedAndUnresolvableNodes": unresolvable, "Error": ""}
    if args.items is None:
        result["NodeNames"] = passing
    else:
        keep = set(passing)
        result["Nodes"] = {"metadata": {}, "items": [i for i in args.items if i["metadata"]["name"] in keep]}
    return result


def prioritize_nodes(cluster: ServedCluster, raw: Any) -> list[dict[str, Any]]:
    """``HostPriorityList`` for an ``ExtenderArgs``: the NUMA fit on each node."""
    args = ExtenderArgs(raw)
    cluster.remember(args.pod)
    verdicts = cluster.kubelets.verdicts(args.names, args.pod)
    return [{"Host": name, "Score": v.score if v is not None and v.admitted else 0} for name, v in verdicts.items()]


def _victim_uids(raw: Any, path: str, meta: bool) -> tuple[list[str], int]:
    f = go_fields(raw, VICTIMS_FIELDS, path)
    pods = f.get("Pods") or []
    if not isinstance(pods, list):
        raise InputError("expected an array of pods", path=f"{path}.Pods")
    n = f.get("NumPDBViolations", 0)
    if n is None:
        n = 0
    if not isinstance(n, int) or isinstance(n, bool):
        raise InputError("expected an integer", path=f"{path}.NumPDBViolations")
    uids = []
    for i, p in enumerate(pods):
        where = f"{path}.Pods[{i}]"
        if meta:
            uid = go_fields(p, META_POD_FIELDS, where).get("UID")
            if not isinstance(uid, str):
                raise InputError("Required value: UID (a string)", path=f"{where}.UID")
            uids.append(uid)
        else:
            uids.append(decode_pod(p, where).uid)
    return uids, n


def preempt(cluster: ServedCluster, raw: Any) -> dict[str, Any]:
    """``ExtenderPreemptionResult``: the candidates whose kubelet admits the pod without the victims."""
    f = go_fields(raw, PREEMPTION_ARGS_FIELDS, "")
    pod = decode_pod(f.get("Pod"), "Pod")
    meta = f.get("NodeNameToMetaVictims") is not None
    field = "NodeNameToMetaVictims" if meta else "NodeNameToVictims"
    candidates = f.get(field) or {}
    if not isinstance(candidates, Mapping):
        raise InputError("expected an object: node name -> victims", path=field)
    out: dict[str, Any] = {}
    for node, victims in candidates.items():
        uids, violations = _victim_uids(victims, f"{field}.{node}", meta)
        keep = True
        if cluster.kubelets.modelled(node):
            gone = set(uids)
            rest = [p for p in cluster.bound.get(node, []) if p.uid not in gone]
            kubelet, _ = cluster.kubelets.replay(node, rest)
            keep = kubelet.admit(pod).admitted
        if keep:
            out[node] = {"Pods": [{"UID": u} for u in uids], "NumPDBViolations": violations}
    return {"NodeNameToMetaVictims": out}


def bind(cluster: ServedCluster, raw: Any, *, allow_writes: bool) -> tuple[int, dict[str, Any]]:
    """``ExtenderBindingResult`` (and the HTTP status): the node's kubelet admits the pod."""
    f = go_fields(raw, BINDING_ARGS_FIELDS, "")
    for name in BINDING_ARGS_FIELDS:
        if not isinstance(f.get(name), str) or (name != "PodUID" and not f[name]):
            raise InputError(f"Required value: {name} (a string)", path=name)
    if not allow_writes:
        return 403, {"Error": "kubetwin serve is read-only: start it with --allow-writes to bind pods"}
    pod = cluster.pod_by_uid(f["PodUID"]) if f["PodUID"] else None
    if pod is None:
        pod = cluster.pending.get(f"{f['PodNamespace']}/{f['PodName']}")
    if pod is None or pod.name != f["PodName"] or pod.namespace != f["PodNamespace"]:
        return 404, {"Error": f"pod {f['PodNamespace']}/{f['PodName']} (uid {f['PodUID']!r}) is not pending in the "
                              "served cluster and was not in a filter or prioritize call"}
    verdict = cluster.bind(pod, f["Node"])
    if verdict is not None and not verdict.admitted:
        return 200, {"Error": f"node {f['Node']}: {_failure(verdict)}"}
    return 200, {"Error": ""}
