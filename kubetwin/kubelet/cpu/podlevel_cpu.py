"""``AllocatePod`` of the static policy: one CPU bubble for a pod-level pod, then its partition.

Metrics as upstream: no pinning request for the pod itself, one per exclusive container; the
bubble moves the exclusive-CPU and shared-pool gauges once.

The bubble is sized by the pod's integer CPU budget and aligned once; exclusive containers take
slices of it in order; a regular init container without exclusive CPUs runs in what the
sidecars left at its turn; everything else shares the final pod shared pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...model.cpuset import EMPTY, CPUSet
from ...model.pod import Pod, is_sidecar
from ..admission_errors import AdmissionError
from ..podlevel import guaranteed_cpus, pod_guaranteed_cpus, validate_pod_scope_resources
from .assignment import AllocationError
from .state import CPUState

if TYPE_CHECKING:
    from .policy_static import StaticPolicy


def allocate_pod_bubble(p: "StaticPolicy", s: CPUState, pod: Pod) -> None:
    total = pod_guaranteed_cpus(pod, p.gates)
    if total == 0:
        return
    c = p.counters
    try:
        validate_pod_scope_resources(pod, total, p.gates)
        p._smt_check(s, total)
        if pod.uid in s.pod_entries:
            return
        first = next(iter(pod.all_containers()))[0]
        hint = p.affinity(pod.uid, first.name)
        bubble = p.allocate_cpus(s, total, hint.affinity, EMPTY)
        p.note_cpus_not_in(f"pod {pod.name}", bubble, p.last_allocatable,
                           "not free (in use by another container or reserved)")
        # before the containers are stored: the per-NUMA gauge does not see this pod yet
        p.update_metrics_on_allocate(s, bubble)
        plan = _partition(p, pod, bubble)
    except AdmissionError:
        c.pinning_errors += 1
        c.bump(c.allocation_errors, ("cpu", "pod"))
        raise
    except AllocationError as exc:
        c.pinning_errors += 1
        c.bump(c.allocation_errors, ("cpu", "pod"))
        raise AdmissionError(str(exc)) from None
    s.pod_entries[pod.uid] = bubble
    for name, cpus, kind in plan:
        s.set(pod.uid, name, cpus)
        c.bump(c.allocations, ("cpu", "pod"))
        c.bump(c.assignments, ("cpu", kind))


def _partition(p: "StaticPolicy", pod: Pod, bubble: CPUSet) -> list[tuple[str, CPUSet, str]]:
    sidecars = EMPTY
    plan: dict[str, tuple[CPUSet, str]] = {}
    deferred: list[str] = []
    for ic in pod.spec.init_containers:
        n = guaranteed_cpus(pod, ic, p.gates)
        if n > 0:
            p.counters.pinning_requests += 1
            cpus = _take_in(p, ic.name, bubble - sidecars, n)
            plan[ic.name] = (cpus, "pod_exclusive")
            if is_sidecar(ic):
                sidecars = sidecars | cpus
        elif is_sidecar(ic):
            deferred.append(ic.name)
        else:
            plan[ic.name] = (bubble - sidecars, "pod_shared")
    shared = bubble - sidecars
    for ac in pod.spec.containers:
        n = guaranteed_cpus(pod, ac, p.gates)
        if n > 0:
            p.counters.pinning_requests += 1
            cpus = _take_in(p, ac.name, shared, n)
            shared = shared - cpus
            plan[ac.name] = (cpus, "pod_exclusive")
        else:
            deferred.append(ac.name)
    for name in deferred:
        plan[name] = (shared, "pod_shared")
    order = [c.name for c, _ in pod.all_containers()]
    return [(name, plan[name][0], plan[name][1]) for name in order if name in plan]


def _take_in(p: "StaticPolicy", name: str, pool: CPUSet, n: int) -> CPUSet:
    """A container's slice of the bubble; whole-core takes of v1.36 can reach outside it (flagged)."""
    cpus = p.strategy.take(p.tm, pool, n)
    p.note_cpus_not_in(f"container {name}", cpus, pool,
                       "not in the pod's free CPUs (outside its bubble or already given to a sibling container)")
    return cpus
