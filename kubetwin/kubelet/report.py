"""The kubelet's admission as plain data: each pod's verdict with its containers' CRI resources
and devices, the topology hints of ``--explain``, and who holds what on each NUMA node (CPUs,
memory blocks, devices) — read by ``kubetwin admit`` and ``kubetwin serve``.

Not an upstream module: a view over the managers' state (``pkg/kubelet/cm/cpumanager/state``,
``memorymanager/state``, ``devicemanager``), shaped like their checkpoints.
"""

from __future__ import annotations

from typing import Any


def explain_record(r: Any) -> dict[str, Any]:
    return {"container": r.container,
            "providers": {name: (None if h is None else {res: (None if lst is None else [x.to_dict() for x in lst])
                                                        for res, lst in h.items()})
                          for name, h in r.providers},
            "merged": r.merged.to_dict(), "admit": r.admit}


def pod_report(node: Any, d: Any) -> dict[str, Any]:
    from .admission import container_resources_for

    pod = d.pod
    out: dict[str, Any] = {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid, "admitted": d.admitted,
                           "reason": d.reason, "message": d.message, "containers": []}
    if d.hang:
        out["hang"] = True
    if d.upstream_bugs:
        out["knownUpstreamBugs"] = list(d.upstream_bugs)
    if d.explanation:
        out["explanation"] = d.explanation
    for c, init in pod.all_containers():
        entry: dict[str, Any] = {"name": c.name,
                                 "type": ("sidecar" if c.restart_policy == "Always" else "init") if init else "app"}
        if d.admitted:
            res, qos = container_resources_for(node, pod, c)
            entry["qosClass"] = qos
            entry["resources"] = res
            entry["devices"] = [{"resourceName": r, "deviceIds": ids}
                                for r, ids in node.device_manager.devices_for(pod.uid, c.name)]
        out["containers"].append(entry)
    return out


def numa_map(node: Any) -> dict[str, Any]:
    cpu = node.cpu
    out: dict[str, Any] = {"cpuManagerPolicy": cpu.policy_name, "memoryManagerPolicy": node.memory.policy_name,
                           "topologyManagerPolicy": node.topology.policy.name,
                           "topologyManagerScope": node.topology.scope}
    if cpu.static is not None:
        out["reservedCpus"] = str(cpu.reserved)
        out["sharedPool"] = str(cpu.state.default_cpuset)
        owners: dict[str, str] = {}
        for uid, conts in cpu.state.entries.items():
            for name, cs in conts.items():
                owners[f"{uid}/{name}"] = str(cs)
        out["exclusive"] = owners
        out["podBubbles"] = {uid: str(cs) for uid, cs in cpu.state.pod_entries.items()}
    if node.memory.static is not None:
        out["memory"] = node.memory.static.machine_state_json()
    devices = node.device_manager.numa_map()
    if devices:
        out["devices"] = devices
    out["numaNodes"] = _per_numa(node, devices)
    return out


def _per_numa(node: Any, devices: dict) -> list[dict[str, Any]]:
    """Who holds what on each NUMA node: CPUs (reserved, shared pool, exclusive), memory, devices."""
    from ..model.cpuset import CPUSet

    names = {p.uid: f"{p.namespace}/{p.name}" for p in node.admitted}
    # Containers of a pod-level pod that run in the pod's shared pool (not Guaranteed-integer):
    # their cpuset is the rest of the pod's bubble, not CPUs of their own.
    from .podlevel import guaranteed_cpus

    shared_by_pod = {p.uid: {c.name for c, _ in p.all_containers() if guaranteed_cpus(p, c, node.cpu.gates) == 0}
                     for p in node.admitted if p.uid in node.cpu.state.pod_entries}
    rows = []
    mem_state = node.memory.static.state if node.memory.static is not None else None
    for n in node.machine.nodes:
        cpus = n.cpus
        row: dict[str, Any] = {"id": n.id, "cpus": str(cpus)}
        if node.cpu.static is not None:
            row["reserved"] = str(CPUSet.from_mask(node.cpu.reserved.mask & cpus.mask))
            row["sharedPool"] = str(CPUSet.from_mask(node.cpu.state.default_cpuset.mask & cpus.mask))
            excl: dict[str, str] = {}
            pod_pool: dict[str, str] = {}
            for uid, conts in node.cpu.state.entries.items():
                in_pool = shared_by_pod.get(uid, set())
                for cname, cs in conts.items():
                    m = cs.mask & cpus.mask
                    if m:
                        (pod_pool if cname in in_pool else excl)[f"{names.get(uid, uid)}/{cname}"] = \
                            str(CPUSet.from_mask(m))
            row["exclusive"] = excl
            if pod_pool:
                row["podSharedPool"] = pod_pool
        if mem_state is not None and n.id in mem_state.machine_state:
            ns = mem_state.machine_state[n.id]
            row["memory"] = {r: {"allocatable": t.allocatable, "reserved": t.reserved, "free": t.free}
                             for r, t in ns.memory_map.items()}
            owners: dict[str, int] = {}
            for uid, conts in mem_state.entries.items():
                budget = "" in conts
                for cname, blocks in conts.items():
                    if budget and cname != "":
                        continue
                    for b in blocks:
                        if n.id in b.numa_affinity:
                            key = f"{names.get(uid, uid)}/{cname or '(pod budget)'} {b.type}"
                            owners[key] = owners.get(key, 0) + b.size
            row["memoryOwners"] = owners
        row["devices"] = [{"resource": r, "id": d, "owner": info["owner"], "health": info["health"]}
                          for r, devs in devices.items() for d, info in devs.items() if n.id in info["numaNodes"]]
        rows.append(row)
    return rows
