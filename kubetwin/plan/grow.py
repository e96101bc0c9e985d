"""Growing a mix that fits when no node type alone runs the workload (pods held to different
types by nodeSelector, node affinity, taints or devices), then shrinking it node by node.

From the empty mix, each simulation's pods that do not run ask for nodes: per owner, the
cheapest type (price per pod it holds) whose node takes the pod — NodeAffinity and
TaintToleration against the type's node, as the Cluster Autoscaler's estimator checks a node
group's template node (``cluster-autoscaler/estimator/binpacking_estimator.go``, via
:func:`kubetwin.sim.cluster_autoscaler.node_local_fit`) — and room for its requests; each type
gets as many nodes as the missing pods' requests fill (at least one). When a mix fits, each type
in turn loses nodes while the workload still runs. The result is a mix that fits — an upper
bound the mix search (:mod:`.search`) then tries to beat.

Not an upstream module: kubetwin's own planner.
"""

from __future__ import annotations

import math
from typing import Any


def owners(sc: Any, gates: Any) -> dict[str, tuple[Any, dict[str, int]]]:
    """Owner key (as trials name them) -> (a pod of it, its requests incl. one ``pods`` slot)."""
    from ..scheduler.framework.resources import pod_request_amounts

    out: dict[str, tuple[Any, dict[str, int]]] = {}

    def add(key: str, pod: Any) -> None:
        if key not in out:
            req = dict(pod_request_amounts(pod, gates, status=False))
            req["pods"] = 1
            out[key] = (pod, req)

    for c in sc.controllers:
        add(c.key, c.template)
    for a in sc.arrivals:
        add(a.owner or f"Pod/{a.pod.metadata.namespace}/{a.pod.metadata.name}", a.pod)
    return out


def _per_node(req: dict[str, int], room: dict[str, int]) -> int:
    """How many such pods a node's room holds by requests alone."""
    most = math.inf
    for r, v in req.items():
        if v > 0:
            most = min(most, room.get(r, 0) // v)
    return 0 if most == math.inf else int(most)


def grow(trial: Any, types: list[Any], rooms: list[dict[str, int]], pods: dict[str, tuple[Any, dict[str, int]]],
         gates: Any, *, priced: bool) -> tuple[int, ...] | None:
    """A mix that fits, grown from none and shrunk; None when some pod fits no type, a type's
    ``max`` stops the growth, or ``trial`` (the search's, memoised and budgeted) returns None."""
    from ..sim.cluster_autoscaler import node_local_fit

    n = len(types)
    counts = [0] * n
    takes: dict[tuple[str, int], bool] = {}
    while True:
        got = trial(tuple(counts))
        if got is None:
            return None
        if got.fits:
            break
        need: list[dict[str, int]] = [{} for _ in range(n)]
        for owner, running, wanted in got.short:
            if owner not in pods:
                return None
            pod, req = pods[owner]
            choices = []
            for i, t in enumerate(types):
                key = (owner, i)
                if key not in takes:
                    takes[key] = node_local_fit(pod, t.template.node, gates) and _per_node(req, rooms[i]) > 0
                if takes[key]:
                    price = t.price if priced else 1.0
                    choices.append((price / _per_node(req, rooms[i]), i))
            if not choices:
                return None
            i = min(choices)[1]
            missing = max(wanted - running, 1)
            for r, v in req.items():
                need[i][r] = need[i].get(r, 0) + v * missing
        grew = False
        for i, t in enumerate(types):
            if not need[i]:
                continue
            add = max([1] + [math.ceil(v / rooms[i][r]) for r, v in need[i].items() if v > 0 and rooms[i].get(r, 0) > 0])
            new = min(counts[i] + add, t.max)
            grew = grew or new > counts[i]
            counts[i] = new
        if not grew:
            return None
    for i in range(n):
        while counts[i] > 0:
            fewer = tuple(c - 1 if j == i else c for j, c in enumerate(counts))
            got = trial(fewer)
            if got is None or not got.fits:
                break
            counts[i] -= 1
    return tuple(counts)
