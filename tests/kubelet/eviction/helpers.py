"""Small builders: pods and Summary readings as the kubelet would see them."""

from __future__ import annotations

from typing import Any

from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import Pod, pod_from_dict
from kubetwin.model.summary import Summary, summary_from_dict

Mi = 2**20
Gi = 2**30


def pod(name: str, *, requests: dict | None = None, limits: dict | None = None, priority: int | None = None,
        annotations: dict | None = None, volumes: list | None = None, init: list | None = None,
        spec: dict | None = None, tolerations: list | None = None, containers: list | None = None) -> Pod:
    res: dict[str, Any] = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    s: dict[str, Any] = {"containers": containers or [{"name": name, "resources": res}]}
    if priority is not None:
        s["priority"] = priority
    if volumes:
        s["volumes"] = volumes
    if init:
        s["initContainers"] = init
    if tolerations:
        s["tolerations"] = tolerations
    s.update(spec or {})
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": name}
    if annotations:
        meta["annotations"] = annotations
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": s})


def pod_stats(name: str, *, memory: int | None = None, rootfs: int | None = None, logs: int | None = None,
              volumes: dict | None = None, ephemeral: int | None = None, processes: int | None = None,
              rootfs_inodes: int | None = None) -> dict:
    c: dict[str, Any] = {"name": name}
    if memory is not None:
        c["memory"] = {"workingSetBytes": memory}
    if rootfs is not None or rootfs_inodes is not None:
        c["rootfs"] = {k: v for k, v in (("usedBytes", rootfs), ("inodesUsed", rootfs_inodes)) if v is not None}
    if logs is not None:
        c["logs"] = {"usedBytes": logs}
    out: dict[str, Any] = {"podRef": {"name": name, "namespace": "default", "uid": name}, "containers": [c]}
    if memory is not None:
        out["memory"] = {"workingSetBytes": memory}
    if volumes:
        out["volume"] = [{"name": k, "usedBytes": v} for k, v in volumes.items()]
    if ephemeral is not None:
        out["ephemeral-storage"] = {"usedBytes": ephemeral}
    if processes is not None:
        out["process_stats"] = {"process_count": processes}
    return out


def summary(*pods: dict, memory_available: int | None = None, memory_working_set: int = 0,
            nodefs: tuple[int, int] | None = None, imagefs: tuple[int, int] | None = None,
            pids: tuple[int, int] | None = None, time: str | None = None) -> Summary:
    node: dict[str, Any] = {}
    if memory_available is not None:
        node["memory"] = {"availableBytes": memory_available, "workingSetBytes": memory_working_set}
        if time:
            node["memory"]["time"] = time
    if nodefs is not None:
        node["fs"] = {"availableBytes": nodefs[0], "capacityBytes": nodefs[1]}
    if imagefs is not None:
        node["runtime"] = {"imageFs": {"availableBytes": imagefs[0], "capacityBytes": imagefs[1]}}
    if pids is not None:
        node["rlimit"] = {"maxpid": pids[1], "curproc": pids[1] - pids[0]}
    return summary_from_dict({"node": node, "pods": list(pods)})


def config(**fields: Any) -> KubeletConfiguration:
    base = {"enforceNodeAllocatable": [], "localStorageCapacityIsolation": False}
    base.update(fields)
    return KubeletConfiguration.from_dict(base)
