"""Per-node figures at the end of a run: requests, NUMA maps, stranded CPUs, GPU use.

"Stranded" CPUs are the free CPUs of NUMA nodes that already hold exclusive CPUs: a pod that needs
a whole NUMA node (single-numa-node) can no longer use them, though the node's totals say they are free.
"""

from __future__ import annotations

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
        out.append(NUMAReport(n.id, total, excl, free, n.memory, 0))
    return out, stranded


def node_reports(sim: Any) -> list[NodeReport]:
    s = sim.cluster
    out = []
    for i, name in enumerate(s.names):
        sn = sim.sim_nodes[i]
        req = {r: int(s.requested[i, j]) for j, r in enumerate(s.resources)
               if s.requested[i, j] or r in ("cpu", "memory")}
        alloc = {r: int(s.alloc[i, j]) for j, r in enumerate(s.resources) if s.alloc[i, j]}
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
            rep.numa = [NUMAReport(n.id, n.cpus.size(), 0, n.cpus.size(), n.memory) for n in sn.machine.nodes]
        gpu = sim.gpu
        if gpu is not None and gpu.counts[i]:
            rep.gpus = [int(1000 - f) for f in gpu.free[i][: int(gpu.counts[i])]]
        out.append(rep)
    return out
