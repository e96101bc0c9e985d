"""Per-node figures at the end of a run: requests, NUMA maps, stranded CPUs, GPU use.

"Stranded" CPUs are the free CPUs of NUMA nodes that already hold exclusive CPUs: a pod that needs
a whole NUMA node (single-numa-node) can no longer use them, though the node's totals say they are free.

Not an upstream module: kubetwin's own figures.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .results import NodeReport, NUMAReport


def numa_report(kubelet: Any) -> tuple[list[NUMAReport], int]:
    cpu = kubelet.cpu
    out = []
    stranded = 0
    exclusive_all = None
    if cpu.static is not None:
        from ..model.cpuset import CPUSet

        exclusive_all = CPUSet()
        for conts in cpu.state.entries.values():
            for cs in conts.values():
                exclusive_all = exclusive_all | cs
        for cs in cpu.state.pod_entries.values():
            exclusive_all = exclusive_all | cs
    reserved = cpu.reserved
    for n in kubelet.machine.nodes:
        cpus = n.cpus
        total = cpus.size()
        excl = (cpus & exclusive_all).size() if exclusive_all is not None else 0
        res = (cpus & reserved).size()
        free = total - excl - res
        if excl and free:
            stranded += free
        rep = NUMAReport(n.id, total, excl, free, n.memory, 0)
        static = kubelet.memory.static
        table = static.state.machine_state[n.id].memory_map.get("memory") if static is not None else None
        if table is not None:
            rep.memory_reserved, rep.memory_allocatable, rep.memory_free = table.reserved, table.allocatable, table.free
        out.append(rep)
    return out, stranded


def _device_kind(driver: str, device: dict[str, Any]) -> str:
    attrs = device.get("attributes") or {}
    kind = attrs.get("type") or attrs.get(f"{driver}/type") or {}
    return str(kind.get("string")) if isinstance(kind, dict) and kind.get("string") else driver


def dra_devices_per_node(sim: Any) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """Per node: DRA devices its ResourceSlices publish and those allocated at the end, by kind."""
    published: dict[str, dict[str, int]] = {}
    where: dict[tuple[str, str, str], tuple[str, str]] = {}
    for obj in sim.sc.objects.get("ResourceSlice", ()):
        spec = obj.get("spec") or {}
        node = spec.get("nodeName")
        if not node:
            continue
        driver, pool = spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")
        for d in spec.get("devices") or ():
            kind = _device_kind(driver, d)
            where[(driver, pool, d.get("name", ""))] = (node, kind)
            per = published.setdefault(node, {})
            per[kind] = per.get(kind, 0) + 1
    allocated: dict[str, dict[str, int]] = {}
    if sim.dra is not None:
        for r in sim.dra.allocated_results():
            hit = where.get((r.driver, r.pool, r.device))
            if hit is not None:
                per = allocated.setdefault(hit[0], {})
                per[hit[1]] = per.get(hit[1], 0) + 1
    return published, allocated


def _started_report(sn: Any, started: dict[int, tuple[Any, list[NUMAReport], int]]) -> tuple[list[NUMAReport], int]:
    """:func:`numa_report` of ``kubelet_for(sn)`` (a copy of the started kubelet of the node's
    machine and configuration), worked out once per started kubelet and copied per node."""
    from .kubelets import template_for

    tmpl = template_for(sn.machine, sn.kubelet, sn.devices)
    hit = started.get(id(tmpl))
    if hit is None or hit[0] is not tmpl:
        hit = started[id(tmpl)] = (tmpl, *numa_report(tmpl.kubelet))
    return [dataclasses.replace(r) for r in hit[1]], hit[2]


def node_reports(sim: Any) -> list[NodeReport]:
    s = sim.cluster
    out = []
    started: dict[int, tuple[Any, list[NUMAReport], int]] = {}
    dra_published, dra_allocated = dra_devices_per_node(sim) if sim.dra_devices else ({}, {})
    # the columns as Python ints, row by row (one conversion, not one numpy read per figure)
    requested, allocatable = s.requested.tolist(), s.alloc.tolist()
    resources = list(enumerate(s.resources))
    for i, name in enumerate(s.names):
        sn = sim.sim_nodes[i]
        row = requested[i]
        req = {r: row[j] for j, r in resources if row[j] or r in ("cpu", "memory")}
        row = allocatable[i]
        alloc = {r: row[j] for j, r in resources if row[j]}
        rep = NodeReport(name, sn.group, int(s.npods[i]), req, alloc)
        if sim.pressure is not None:
            rep.conditions = list(sim.pressure.conditions_of(i))
            rep.evicted = sim.pressure.evicted_on(i)
        k = sim.kubelets[i]
        if k:
            rep.numa, rep.stranded_cpus = numa_report(k)
            rep.policies = {"cpuManager": k.cpu.policy_name, "memoryManager": k.memory.policy_name,
                            "topologyManager": k.topology.policy.name, "scope": k.topology.scope}
        elif sn.kubelet is not None and sn.machine is not None:
            # a node no pod reached: its kubelet as it starts (reserved CPUs, reservedMemory) — the
            # report of its group's started kubelet, which every such node's copy would give
            rep.numa, rep.stranded_cpus = _started_report(sn, started)
        rep.dra_devices = dra_published.get(name, {})
        rep.dra_allocated = dra_allocated.get(name, {})
        gpu = sim.gpu
        if gpu is not None and gpu.counts[i]:
            rep.gpus = [int(1000 - f) for f in gpu.free[i][: int(gpu.counts[i])]]
        out.append(rep)
    return out
