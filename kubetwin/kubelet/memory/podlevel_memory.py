"""``AllocatePod`` of the Static memory policy: one NUMA "bubble" for a pod-level pod, then its partition.

The bubble is the pod-level memory/hugepages request, reserved once on the pod's NUMA affinity
(``podEntries``); the machine state only ever sees the bubble. Inside it, containers that are
equivalent-Guaranteed get exclusive blocks of their own size, a regular init container without
one runs in what the sidecars left at its turn, and everything else shares the pod's pool:
bubble − sidecars − exclusive app blocks. A pod whose exclusive blocks leave shared containers
nothing is refused with ``EmptyPodSharedPoolError`` (``validatePodScopeResources``).

Sizes are Go ``uint64``: a subtraction below zero wraps, as in the kubelet (the API server's
pod-level validation keeps that from happening for valid pods).

Upstream: ``pkg/kubelet/cm/memorymanager/policy_static.go`` (``AllocatePod``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...model.pod import Container, Pod, is_sidecar
from ...model.resources import is_pod_level_resources_set
from ..admission_errors import AdmissionError, EmptyPodSharedPoolError
from ..podlevel import get_pod_qos, is_container_equivalent_guaranteed
from ..qos import GUARANTEED
from ..topology.bitmask import bits_of
from .state import Block

if TYPE_CHECKING:
    from .policy_static import StaticMemoryPolicy

_U64 = 1 << 64


def _is_memory(name: str) -> bool:
    return name == "memory" or name.startswith("hugepages-")


def _sub(a: int, b: int) -> int:
    """``a - b`` on uint64."""
    return (a - b) % _U64


def pod_level_managed(pod: Pod, gates) -> bool:
    """The memory manager's own test: only ``PodLevelResourceManagers`` and pod-level resources set."""
    return gates.enabled("PodLevelResourceManagers") and is_pod_level_resources_set(pod)


def container_requested_resources(pod: Pod, c: Container, gates) -> dict[str, int]:
    """``getContainerRequestedResources``: nothing for a container that is not equivalent-Guaranteed
    in a pod-level pod; otherwise its memory and hugepages requests (zero ones included)."""
    if pod_level_managed(pod, gates) and not is_container_equivalent_guaranteed(c):
        return {}
    return {k: q.value() for k, q in c.resources.requests.items() if _is_memory(k)}


def pod_requested_resources(pod: Pod, gates) -> dict[str, int]:
    """``getPodRequestedResources``: the pod-level requests (> 0) of a pod-level pod, else the
    sidecar-aware container aggregate (no overhead: the memory manager never adds it)."""
    if pod_level_managed(pod, gates):
        res = pod.spec.resources
        out: dict[str, int] = {}
        for k, q in (res.requests.items() if res is not None else ()):
            if _is_memory(k) and q.value() > 0:
                out[k] = q.value()
        return out
    by_init: dict[str, int] = {}
    by_restartable: dict[str, int] = {}
    for c in pod.spec.init_containers:
        for name, qty in container_requested_resources(pod, c, gates).items():
            by_init.setdefault(name, 0)
            if is_sidecar(c):
                by_restartable[name] = by_restartable.get(name, 0) + qty
            elif by_restartable.get(name, 0) + qty > by_init[name]:
                by_init[name] = by_restartable.get(name, 0) + qty
    by_app: dict[str, int] = {}
    for c in pod.spec.containers:
        for name, qty in container_requested_resources(pod, c, gates).items():
            by_app[name] = by_app.get(name, 0) + qty
    out = {}
    for name, qty in by_app.items():
        out[name] = max(qty + by_restartable.get(name, 0), by_init.get(name, 0))
    return out


def validate_pod_scope_memory(pod: Pod, gates) -> None:
    """``validatePodScopeResources`` of the memory manager (messages name the resource)."""
    total = pod_requested_resources(pod, gates)
    shared_long_running = False
    long_running: dict[str, int] = {}
    for c in pod.spec.init_containers:
        reqs = container_requested_resources(pod, c, gates)
        if not is_sidecar(c):
            if reqs:
                pool = {name: _sub(amount, long_running.get(name, 0)) for name, amount in total.items()}
                for name, size in pool.items():
                    if reqs.get(name, 0) > size:
                        raise EmptyPodSharedPoolError(f"pod rejected, largest exclusive init container requests "
                                                      f"{reqs.get(name, 0)} of {name}, but only {size} available")
            else:
                for name, size in total.items():
                    if long_running.get(name, 0) >= size:
                        raise EmptyPodSharedPoolError(f"pod rejected, pod has shared init containers but no {name} "
                                                      "available for them")
            continue
        if not reqs:
            shared_long_running = True
            continue
        for name, amount in reqs.items():
            long_running[name] = long_running.get(name, 0) + amount
    for c in pod.spec.containers:
        reqs = container_requested_resources(pod, c, gates)
        if not reqs:
            shared_long_running = True
            continue
        for name, amount in reqs.items():
            long_running[name] = long_running.get(name, 0) + amount
    if shared_long_running:
        for name, size in total.items():
            if long_running.get(name, 0) >= size:
                raise EmptyPodSharedPoolError(f"pod rejected, sum of exclusive container {name} requests equals pod "
                                              "budget, leaving no memory for shared containers")


def allocate_pod_bubble(p: "StaticMemoryPolicy", pod: Pod) -> None:
    """``AllocatePod``: reserve the bubble, partition it, count the metrics as the kubelet does."""
    if get_pod_qos(pod, p.gates) != GUARANTEED:
        return
    total = pod_requested_resources(pod, p.gates)
    m = p.counters
    m.pinning_requests += 1
    try:
        plan = _plan(p, pod, total)
    except AdmissionError:
        m.pinning_errors += 1
        m.bump(m.allocation_errors, ("memory", "pod"))
        raise
    bits, blocks, shared_pool = plan
    p._record(pod.uid, "", [Block(tuple(bits), r, size) for r, size in total.items()], reserve=True)
    conts = p.state.entries[pod.uid]
    for c, _ in pod.all_containers():
        if c.name in blocks:
            conts[c.name] = blocks[c.name]
        else:
            conts[c.name] = list(shared_pool)
            m.bump(m.assignments, ("memory", "pod_shared"))
        m.bump(m.allocations, ("memory", "pod"))


def _plan(p: "StaticMemoryPolicy", pod: Pod, total: dict[str, int]
          ) -> tuple[list[int], dict[str, list[Block]], list[Block]]:
    m = p.counters
    validate_pod_scope_memory(pod, p.gates)
    first = next(iter(pod.all_containers()))[0]
    hint = p.final_hint(p.affinity(pod.uid, first.name), total)
    assert hint.affinity is not None   # final_hint always names NUMA nodes
    bits = bits_of(hint.affinity)
    affinity = tuple(bits)
    blocks: dict[str, list[Block]] = {}
    sidecars: dict[str, int] = {}
    for c in pod.spec.init_containers:
        reqs = container_requested_resources(pod, c, p.gates)
        m.pinning_requests += 1
        if not reqs:
            if is_sidecar(c):
                continue  # runs in the pod's final shared pool
            runnable = {name: _sub(amount, sidecars.get(name, 0)) for name, amount in total.items()}
            blocks[c.name] = [Block(affinity, name, size) for name, size in runnable.items() if size > 0]
            m.bump(m.assignments, ("memory", "pod_shared"))
            continue
        blocks[c.name] = [Block(affinity, name, size) for name, size in reqs.items() if size > 0]
        m.bump(m.assignments, ("memory", "pod_exclusive"))
        if is_sidecar(c):
            for name, size in reqs.items():
                sidecars[name] = sidecars.get(name, 0) + size
    pool = {name: _sub(amount, sidecars.get(name, 0)) for name, amount in total.items()}
    for c in pod.spec.containers:
        reqs = container_requested_resources(pod, c, p.gates)
        if not reqs:
            continue
        m.pinning_requests += 1
        own = []
        for name, size in reqs.items():
            if size > 0:
                own.append(Block(affinity, name, size))
                pool[name] = _sub(pool.get(name, 0), size)
        blocks[c.name] = own
        m.bump(m.assignments, ("memory", "pod_exclusive"))
    shared_pool = [Block(affinity, name, size) for name, size in pool.items() if size > 0]
    return bits, blocks, shared_pool
