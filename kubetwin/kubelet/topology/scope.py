"""Topology Manager scopes: how a pod's hints are gathered, merged and allocated
(``pkg/kubelet/cm/topologymanager/scope.go``, ``scope_container.go``, ``scope_pod.go``,
``scope_none.go``).

``container``: each container's hints are merged and allocated in turn. ``pod``: the pod's hints
once, the merged affinity stored for every container (with pod-level resource managers, the
providers allocate the pod as a whole). The ``none`` policy's scope only lets the providers
allocate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ...model.pod import Pod
from ...model.resources import is_pod_level_resources_set
from ..admission_errors import TopologyAffinityError
from .policy import NONE

if TYPE_CHECKING:
    from .manager import TopologyManager

CONTAINER, POD = "container", "pod"


class NoneScope:
    """``scope_none.go``: no hints, no merge; the providers allocate."""

    def admit(self, tm: "TopologyManager", pod: Pod) -> None:
        for c, _ in pod.all_containers():
            for _, p in tm.providers:
                p.allocate(pod, c)


class ContainerScope:
    """``scope_container.go``: one merge and allocation per container."""

    def admit(self, tm: "TopologyManager", pod: Pod) -> None:
        for c, _ in pod.all_containers():
            hints = [(name, p.get_topology_hints(pod, c)) for name, p in tm.providers]
            best, admit = tm.policy.merge([h for _, h in hints])
            tm.record(c.name, hints, best, admit)
            if not admit:
                tm.count_alignment(CONTAINER, False)
                raise TopologyAffinityError().with_hints(c, cast(list[tuple[str, object]], hints))
            tm.affinities[(pod.uid, c.name)] = best
            for _, p in tm.providers:
                p.allocate(pod, c)
            tm.count_alignment(CONTAINER, True)


class PodScope:
    """``scope_pod.go``: one merge for the whole pod."""

    def admit(self, tm: "TopologyManager", pod: Pod) -> None:
        hints = [(name, p.get_pod_topology_hints(pod)) for name, p in tm.providers]
        best, admit = tm.policy.merge([h for _, h in hints])
        tm.record(None, hints, best, admit)
        gates = tm.gates
        pod_level = (gates is not None and gates.enabled("PodLevelResources")
                     and gates.enabled("PodLevelResourceManagers") and is_pod_level_resources_set(pod))
        if not admit:
            tm.count_alignment(POD, False)
            if pod_level:
                raise TopologyAffinityError("Pod Scope: Resources cannot be allocated with Topology "
                                            "locality").with_hints(None, cast(list[tuple[str, object]], hints))
            raise TopologyAffinityError().with_hints(None, cast(list[tuple[str, object]], hints))
        for c, _ in pod.all_containers():
            tm.affinities[(pod.uid, c.name)] = best
        if pod_level:
            for _, p in tm.providers:
                p.allocate_pod(pod)
        else:
            for c, _ in pod.all_containers():
                for _, p in tm.providers:
                    p.allocate(pod, c)
        tm.count_alignment(POD, True)


_SCOPES: dict[str, ContainerScope | PodScope] = {CONTAINER: ContainerScope(), POD: PodScope()}
_NONE = NoneScope()


def scope_for(tm: "TopologyManager") -> NoneScope | ContainerScope | PodScope:
    """The scope admitting for ``tm``: none under the ``none`` policy, else its configured one."""
    if tm.policy.name == NONE:
        return _NONE
    return _SCOPES[POD] if tm.scope == POD else _SCOPES[CONTAINER]
