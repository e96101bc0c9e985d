"""Lower bounds on the nodes (or the price) a workload needs, from relaxations no placement can
beat; the search proves a mix minimal when its size meets the bound.

* **resource sums**: per resource, the pods' requests over a node's allocatable (less what the
  daemon pods eligible on it request) — the fractional bin-packing bound
  (``cluster-autoscaler/estimator``'s binpacking without the packing);
* **big items**: pods asking for more than half a node's room of one resource never share a node
  two by two, so each needs a node of its own;
* **NUMA**: with ``topologyManagerPolicy: single-numa-node`` and the static CPU Manager, the
  exclusive CPUs of a Guaranteed pod's integer-CPU containers (pod scope: of the pod) come from
  one NUMA node (``cm/topologymanager/policy_single_numa_node.go``,
  ``cm/cpumanager/policy_static.go``): they are items in NUMA-node bins of the NUMA node's CPU
  count (reserved CPUs not taken off, so the bound stays a bound), and nodes hold
  ``len(machine.nodes)`` bins. With ``restricted`` the same holds for every item no larger than
  a NUMA node: the CPU Manager's preferred hints are the narrowest masks whose CPUs could hold
  the request (``generateCPUTopologyHints``' ``minAffinitySize``, one NUMA node for such an
  item) and ``restricted`` admits only a preferred merged hint (``policy_restricted.go``); larger
  items are left out (a relaxation). With the Static Memory Manager the memory of a Guaranteed
  pod's containers (pod scope: of the pod) is packed the same way into bins of a NUMA node's
  allocatable memory (``memorymanager/policy_static.go``: the preferred width is the fewest NUMA
  nodes whose allocatable memory holds the request); the bound is the larger of the two.

Mixes of several types are bounded by the resource sums over the mix (:func:`mix_admissible`)
and, for the price, by the cheapest price per unit of each resource. Not an upstream module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

INFEASIBLE = math.inf


def amount(resource: str, value: int | float) -> str:
    """A scheduler amount for a message: cpu in cores, bytes in binary units."""
    from ..model.quantity import Quantity

    value = int(value)
    if resource == "cpu":
        return f"{Quantity.from_milli(value)} CPU"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if value >= size:
                return f"{value / size:.4g}{unit}"
    return str(value)


@dataclass(frozen=True)
class Demand:
    """What the workload asks for: one request vector per pod (pods of one template shared)."""

    #: (requests in scheduler units incl. ``pods``: 1, exclusive-CPU items per NUMA, how many pods)
    shapes: tuple[tuple[dict[str, int], tuple[int, ...], int], ...]
    totals: dict[str, int] = field(default_factory=dict)
    #: (memory items in bytes a Guaranteed pod's containers ask for (pod scope: summed), how many pods)
    memory_items: tuple[tuple[tuple[int, ...], int], ...] = ()

    @property
    def pods(self) -> int:
        return sum(n for _, _, n in self.shapes)


def _exclusive_items(pod: Any, scope: str, gates: Any) -> tuple[int, ...]:
    """Whole CPUs a Guaranteed pod's containers take exclusively (pod scope: summed)."""
    from ..kubelet.qos import get_pod_qos

    if get_pod_qos(pod, gates) != "Guaranteed":
        return ()
    items = []
    for c in pod.spec.containers:
        q = c.requests.get("cpu")
        if q is not None and q.milli_value() % 1000 == 0 and q.milli_value() > 0:
            items.append(q.milli_value() // 1000)
    if scope == "pod" and items:
        return (sum(items),)
    return tuple(items)


def _memory_items(pod: Any, scope: str, gates: Any) -> tuple[int, ...]:
    """Memory a Guaranteed pod's containers ask for (pod scope: summed), in bytes."""
    from ..kubelet.qos import get_pod_qos

    if get_pod_qos(pod, gates) != "Guaranteed":
        return ()
    items = [q.value() for c in pod.spec.containers if (q := c.requests.get("memory")) is not None and q.value() > 0]
    if scope == "pod" and items:
        return (sum(items),)
    return tuple(items)


#: the pseudo-resource of DRA devices a pod's claim templates ask for (the bound's own name)
DRA_DEVICES = "kubetwin.io/dra-devices"


def label(resource: str) -> str:
    """A resource's name in a bound's basis."""
    return "DRA devices (claims' requests over the devices the node type's drivers publish)" \
        if resource == DRA_DEVICES else resource


def _request_devices(r: Any) -> int:
    """The fewest devices one request of a claim asks for (``exactly``, ``firstAvailable``, or the
    v1beta1 shape); ``allocationMode: All`` counts one, anything unexpected none (still a bound)."""
    if not isinstance(r, dict):
        return 0
    if isinstance(r.get("firstAvailable"), list):
        return min((_request_devices({"exactly": e}) for e in r["firstAvailable"]), default=0)
    exactly = r.get("exactly")
    e: dict[str, Any] = exactly if isinstance(exactly, dict) else r
    if e.get("allocationMode") == "All":
        return 1
    count = e.get("count", 1)
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def _claim_devices(pod: Any, templates: dict[tuple[str, str], Any]) -> int:
    """Devices the claims made from the pod's templates ask for (shared claims are left out)."""
    total = 0
    for rc in pod.spec.resource_claims:
        if not rc.resource_claim_template_name:
            continue
        tmpl = templates.get((pod.metadata.namespace, rc.resource_claim_template_name))
        spec = ((tmpl or {}).get("spec") or {}).get("spec") or {}
        for r in ((spec.get("devices") or {}).get("requests") or []):
            total += _request_devices(r)
    return total


def demand_of(sc: Any, *, scope: str = "container") -> Demand:
    """The pods of a scenario without nodes: its bare pods and each controller's replicas (a
    Job's parallelism), with their effective requests (``PodRequests``)."""
    from ..model.features import gates_for
    from ..scheduler.framework.resources import pod_request_amounts

    gates = gates_for(sc.settings.kubernetes_version, sc.settings.feature_gates)
    shapes: list[tuple[dict[str, int], tuple[int, ...], int]] = []
    memory: list[tuple[tuple[int, ...], int]] = []
    pods: list[tuple[Any, int]] = [(a.pod, 1) for a in sc.arrivals if a.owner is None]
    owned: dict[str, int] = {}
    for a in sc.arrivals:
        if a.owner is not None:
            owned[a.owner] = owned.get(a.owner, 0) + 1
    for c in sc.controllers:
        pods.append((c.template, max(c.replicas, owned.get(c.key, 0))))
    totals: dict[str, int] = {}
    templates = {(str((t.get("metadata") or {}).get("namespace") or "default"), str((t.get("metadata") or {}).get("name"))): t
                 for t in sc.objects.get("ResourceClaimTemplate", [])}
    # devices from slices the workload itself brings (not per node type) would make the bound wrong
    count_devices = not sc.objects.get("ResourceSlice")
    for pod, n in pods:
        if n <= 0:
            continue
        req = dict(pod_request_amounts(pod, gates, status=False))
        req["pods"] = 1
        if count_devices:
            devices = _claim_devices(pod, templates)
            if devices:
                req[DRA_DEVICES] = devices
        shapes.append((req, _exclusive_items(pod, scope, gates), n))
        mem = _memory_items(pod, scope, gates)
        if mem:
            memory.append((mem, n))
        for r, v in req.items():
            totals[r] = totals.get(r, 0) + v * n
    return Demand(tuple(shapes), totals, tuple(memory))


@dataclass(frozen=True)
class TypeBound:
    """The lower bound for one node type alone, and which relaxation gave it."""

    nodes: float
    basis: str
    #: room per node after its daemon pods, by resource
    room: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": None if self.nodes == INFEASIBLE else int(self.nodes), "basis": self.basis}


def _bins(items: list[tuple[int, int]], cap: int, single: bool) -> tuple[int, int] | None:
    """NUMA-node bins of ``cap`` for ``(size, count)`` items that must each come from one NUMA
    node: (bins, items left out); None when an item larger than a bin must still fit in one
    (``single``: single-numa-node), items larger than a bin are left out otherwise."""
    if single and any(k > cap for k, _ in items):
        return None
    fit = [(k, n) for k, n in items if k <= cap]
    total = sum(k * n for k, n in fit)
    big = sum(n for k, n in fit if 2 * k > cap)
    return max(math.ceil(total / cap), big), sum(n for k, n in items if k > cap)


def _numa_bound(demand: Demand, node_type: Any) -> tuple[int, str] | None:
    cfg, machine = node_type.template.kubelet, node_type.template.machine
    if cfg is None or machine is None or not machine.nodes:
        return None
    policy = cfg.topology_manager_policy
    if policy not in ("single-numa-node", "restricted"):
        return None
    single = policy == "single-numa-node"
    per_node = len(machine.nodes)
    best: tuple[int, str] | None = None
    cap = max(n.cpus.size() for n in machine.nodes)
    items = [(k, n) for _, ks, n in demand.shapes for k in ks]
    if cfg.cpu_manager_policy == "static" and items and cap > 0:
        got = _bins(items, cap, single)
        if got is None:
            return (-1, f"a pod's exclusive CPUs exceed a NUMA node's {cap} CPUs")
        bins, out = got
        if bins:
            note = f", {out} larger item(s) left out" if out else ""
            best = (math.ceil(bins / per_node), f"NUMA: {bins} NUMA node(s) of {cap} CPUs for the exclusive CPUs of "
                                                f"{policy} pods, {per_node} per node{note}")
    mem = [(k, n) for ks, n in demand.memory_items for k in ks]
    if cfg.memory_manager_policy == "Static" and mem:
        mcap = _numa_memory_allocatable(node_type)
        if mcap > 0:
            got = _bins(mem, mcap, single)
            if got is None:
                return (-1, f"a Guaranteed pod's memory exceeds a NUMA node's allocatable {amount('memory', mcap)}")
            bins, out = got
            nodes = math.ceil(bins / per_node)
            if bins and (best is None or nodes > best[0]):
                note = f", {out} larger item(s) left out" if out else ""
                best = (nodes, f"NUMA: {bins} NUMA node(s) of {amount('memory', mcap)} allocatable memory for the "
                               f"memory of Guaranteed {policy} pods (Static Memory Manager), {per_node} per node{note}")
    return best


def _numa_memory_allocatable(node_type: Any) -> int:
    """The largest allocatable memory of a NUMA node under the Static Memory Manager (capacity
    less ``reservedMemory`` and hugepages), from the type's kubelet as it starts."""
    from ..sim.kubelets import kubelet_for

    static = kubelet_for(node_type.template).memory.static
    if static is None:
        return 0
    return max((ns.memory_map["memory"].allocatable for ns in static.state.machine_state.values()
                if "memory" in ns.memory_map), default=0)


def type_bound(demand: Demand, node_type: Any, daemon: dict[str, int], *, numa: bool = True) -> TypeBound:
    """The fewest nodes of ``node_type`` alone that could hold ``demand``, each node also running
    the daemon pods whose requests are ``daemon``; ``numa=False`` leaves the kubelet's NUMA
    bound out (the scheduler-only count)."""
    alloc = node_type.allocatable()
    alloc[DRA_DEVICES] = sum(len((s.get("spec") or {}).get("devices") or ()) for s in node_type.nodes(1)[0].slices)
    room = {r: alloc.get(r, 0) - daemon.get(r, 0) for r in set(alloc) | set(demand.totals)}
    best, basis = 0.0, "no pods"
    for r, total in sorted(demand.totals.items()):
        if total <= 0:
            continue
        if room.get(r, 0) <= 0:
            return TypeBound(INFEASIBLE, f"no room for {r} on a node (allocatable {amount(r, alloc.get(r, 0))}, "
                                         f"daemon pods {amount(r, daemon.get(r, 0))})", room)
        biggest = max(req.get(r, 0) for req, _, n in demand.shapes if n > 0)
        if biggest > room[r]:
            return TypeBound(INFEASIBLE, f"a pod requests {amount(r, biggest)} {r}, more than a node's room {amount(r, room[r])}", room)
        need = math.ceil(total / room[r])
        if need > best:
            best, basis = need, f"{label(r)}: requests {amount(r, total)} over {amount(r, room[r])} per node"
        big = sum(n for req, _, n in demand.shapes if 2 * req.get(r, 0) > room[r])
        if big > best:
            best, basis = big, f"{label(r)}: {big} pod(s) ask for more than half a node"
    found = _numa_bound(demand, node_type) if numa else None
    if found is not None:
        numa_nodes, numa_basis = found
        if numa_nodes < 0:
            return TypeBound(INFEASIBLE, numa_basis, room)
        if numa_nodes > best:
            best, basis = numa_nodes, numa_basis
    return TypeBound(best, basis, room)


def mix_admissible(demand: Demand, rooms: list[dict[str, int]], counts: tuple[int, ...]) -> bool:
    """The resource-sum relaxation of a mix: its nodes' room covers every resource's total."""
    for r, total in demand.totals.items():
        if total > sum(room.get(r, 0) * c for room, c in zip(rooms, counts) if room.get(r, 0) > 0):
            return False
    return True


def mix_node_bound(demand: Demand, rooms: list[dict[str, int]]) -> tuple[float, str]:
    """The fewest nodes any mix of the types can have: per resource, its total over the largest
    room any type offers, and the pods too big to share even the largest node two by two."""
    best, basis = 0.0, "no pods"
    for r, total in sorted(demand.totals.items()):
        if total <= 0:
            continue
        largest = max((room.get(r, 0) for room in rooms), default=0)
        if largest <= 0:
            return INFEASIBLE, f"no node type has room for {r}"
        need = math.ceil(total / largest)
        if need > best:
            best, basis = need, f"{label(r)}: requests {amount(r, total)} over the largest room {amount(r, largest)} of a node type"
        big = sum(n for req, _, n in demand.shapes if 2 * req.get(r, 0) > largest)
        if big > best:
            best, basis = big, f"{label(r)}: {big} pod(s) ask for more than half the largest node"
    return best, basis


def price_bound(demand: Demand, rooms: list[dict[str, int]], prices: list[float]) -> tuple[float, str]:
    """The least any mix can cost: per resource, its total at the cheapest price per unit."""
    best, basis = 0.0, "no pods"
    for r, total in sorted(demand.totals.items()):
        if total <= 0:
            continue
        rates = [p / room[r] for room, p in zip(rooms, prices) if room.get(r, 0) > 0]
        if not rates:
            return INFEASIBLE, f"no node type has room for {r}"
        cost = total * min(rates)
        if cost > best:
            best, basis = cost, f"{label(r)}: requests {amount(r, total)} at the cheapest price per unit"
    return best, basis


def daemon_demand(workload: Any, node_type: Any, kubernetes_version: str | None) -> dict[str, int]:
    """What the workload's daemon pods eligible on a node of ``node_type`` request there."""
    from ..model.features import gates_for
    from ..model.pod import pod_from_dict
    from ..scheduler.framework.resources import pod_request_amounts
    from ..sim.daemonset import daemon_pods

    gates = gates_for(kubernetes_version)
    out: dict[str, int] = {}
    node = node_type.template.node
    ops = gates.enabled("TaintTolerationComparisonOperators")
    for ds in workload.daemon_sets:
        for obj in daemon_pods(ds, [node], set(), comparison_operators=ops):
            req = dict(pod_request_amounts(pod_from_dict(obj, checked=True), gates, status=False))
            req["pods"] = 1
            for r, v in req.items():
                out[r] = out.get(r, 0) + v
    return out
