"""Node pressure over time: the kernel's OOM killer and the kubelet's eviction manager on every node
whose pods have usage curves (:mod:`.usage`).

At each sampling time, per such node: the working set of every container is read off its curve
(pods without a curve use their memory request), then

1. the kernel acts first — a container at its cgroup's ``memory.max`` is OOM-killed
   (:func:`kubetwin.kubelet.eviction.oom_kill.oom_report`), and a node whose pods together exceed
   its memory loses containers in the kernel's badness order; a killed container restarts (its curve
   starts over) when its restart policy says so, else the pod fails with ``OOMKilled``;
2. the eviction manager runs one ``synchronize`` on the Summary built from those figures
   (:class:`kubetwin.kubelet.eviction.EvictionManager`): thresholds, grace periods, node conditions
   with their transition period, at most one eviction with the kubelet's message;
3. node conditions become the node lifecycle controller's NoSchedule taints
   (``node.kubernetes.io/memory-pressure``), which the scheduler sees, and the eviction manager's
   admit handler turns pods away while they last.

The node's own working set is its pods' (system daemons are taken to stay within the reserved
amounts). A node without a KubeletConfiguration runs the kubelet's defaults.

Not an upstream module: kubetwin's own simulation, driving ``pkg/kubelet/eviction`` and the kernel's
OOM killer over time.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from ..model.node import Taint
from ..model.pod import Pod
from ..model.summary import ContainerStats, MemoryStats, NodeStats, PodReference, PodStats, Summary

if TYPE_CHECKING:
    from .loop import SimPod, Simulator

NS = 1_000_000_000


class _Node:
    """One node's kubelet-side pressure state."""

    __slots__ = ("manager", "config", "capacity", "pods", "conditions", "evicted", "disk")

    def __init__(self, manager: Any, config: Any, capacity: int, disk: Any = None):
        self.manager = manager
        self.config = config
        self.capacity = capacity
        self.pods: dict[int, SimPod] = {}     # running pods with a usage curve
        self.conditions: tuple[str, ...] = ()
        self.evicted = 0
        self.disk = disk                      # kubetwin.sim.disk.NodeDisk, with the group's disk figures


class NodePressure:
    def __init__(self, sim: "Simulator"):
        self.sim = sim
        self.nodes: dict[int, _Node] = {}
        self._default_config: Any = None
        from .stall_psi import NodeStalls

        #: memory pressure (PSI) per container, pod and node (:mod:`.memory_psi`)
        self.memory_psi = NodeStalls("memory", sim.sc.settings.sample_interval)
        #: I/O pressure on nodes whose disk has an ioBandwidth (:mod:`.io_psi`)
        self.io_psi = NodeStalls("io", sim.sc.settings.sample_interval)
        self._highs: dict[int, Any] = {}

    # --- bookkeeping ----------------------------------------------------------------------------
    def _node(self, i: int) -> _Node:
        n = self.nodes.get(i)
        if n is None:
            from ..kubelet.eviction import EvictionManager
            from ..model.kubelet_config import KubeletConfiguration

            sn = self.sim.sim_nodes[i]
            cfg = sn.kubelet
            if cfg is None:
                if self._default_config is None:
                    self._default_config = KubeletConfiguration.from_dict(None, self.sim.sc.settings.kubernetes_version)
                cfg = self._default_config
            if sn.machine is not None:
                capacity = int(sn.machine.memory_capacity)
            else:
                q = sn.node.status.capacity.get("memory")
                capacity = q.value() if q is not None else 0
            disk = None
            if sn.disk is not None:
                from .disk import NodeDisk

                disk = NodeDisk(sn.disk, cfg)
            manager = EvictionManager(cfg, sn.disk.layout) if sn.disk is not None else EvictionManager(cfg)
            n = self.nodes[i] = _Node(manager, cfg, capacity, disk)
        return n

    def started(self, i: int, sp: "SimPod") -> None:
        if _memory(sp) is not None or (sp.usage is not None and (sp.usage.disk or sp.usage.io)):
            self._node(i).pods[sp.i] = sp
        elif self.sim.sim_nodes[i].disk is not None:
            self._node(i)

    def forget(self, i: int, sp: "SimPod") -> None:
        n = self.nodes.get(i)
        if n is not None:
            n.pods.pop(sp.i, None)
            for stalls in self.stall_trackers():
                stalls.forget(self.sim.cluster.names[i], sp.pod.uid)
            highs = self._highs.get(i)
            if highs is not None:
                highs.forget(sp.pod.uid)

    # --- kubelet admission ------------------------------------------------------------------------
    def admit(self, i: int, pod: Pod) -> tuple[str, str] | None:
        """The eviction manager's admit handler (the kubelet's first)."""
        n = self.nodes.get(i)
        if n is None or not n.manager.node_conditions:
            return None
        r = n.manager.admit(pod)
        return None if r.admitted else (r.reason, r.message)

    # --- the loop ---------------------------------------------------------------------------------
    def busy(self, now: float) -> bool:
        """Whether a later sample could still change something: a curve still moving, a
        condition still reported, or a threshold met."""
        for n in self.nodes.values():
            if n.conditions or n.manager.tracking_thresholds:
                return True
            for sp in n.pods.values():
                if sp.phase == "Running" and now - sp.origin < sp.usage.pressure_settles_at:
                    return True
        return False

    def synchronize(self, t: float) -> None:
        for i in list(self.nodes):
            n = self.nodes[i]
            if not n.pods and not n.conditions and n.disk is None:
                continue
            self._kernel(i, n, t)
            self._kubelet(i, n, t)
        for stalls in self.stall_trackers():
            stalls.end_sample(t)

    def _working_sets(self, i: int, n: _Node, t: float) -> tuple[list[tuple["SimPod", dict[str, int]]], int]:
        """Per running pod on node ``i``: container -> working set; and the node's total."""
        out = []
        total = 0
        for sp in self.sim.residents[i].values():
            ws: dict[str, int] = {}
            first = True
            usage = _memory(sp)
            for c, init in sp.pod.all_containers():
                from ..model.pod import is_sidecar

                if init and not is_sidecar(c):
                    continue
                curve = usage.of(c.name, first and not init) if usage is not None else None
                if not init:
                    first = False
                if curve is not None:
                    ws[c.name] = curve.at(t - sp.origin)
                elif usage is None:
                    q = c.resources.requests.get("memory")
                    ws[c.name] = q.value() if q is not None else 0
                else:
                    ws[c.name] = 0
            if usage is None and not any(ws.values()) and sp.pod.spec.resources is not None:
                q = sp.pod.spec.resources.requests.get("memory")
                if q is not None and ws:
                    ws[next(iter(ws))] = q.value()
            total += sum(ws.values())
            out.append((sp, ws))
        return out, total

    def _summary(self, n: _Node, t: float, rows: list[tuple["SimPod", dict[str, int]]], total: int,
                 name: str = "") -> Summary:
        from .loop import EPOCH

        stamp = (EPOCH + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        pods = []
        for sp, ws in rows:
            p = sp.pod
            pods.append(PodStats(
                pod_ref=PodReference(name=p.metadata.name, namespace=p.metadata.namespace, uid=p.uid),
                containers=[ContainerStats(name=c, memory=MemoryStats(time=stamp, working_set_bytes=v,
                                                                      usage_bytes=v))
                            for c, v in ws.items()],
                memory=MemoryStats(time=stamp, working_set_bytes=sum(ws.values()), usage_bytes=sum(ws.values()))))
        node = NodeStats(node_name=name, memory=MemoryStats(
            time=stamp, available_bytes=max(n.capacity - total, 0), working_set_bytes=total, usage_bytes=total))
        return Summary(node=node, pods=pods)

    def _kernel(self, i: int, n: _Node, t: float) -> None:
        """OOM kills: containers at their limit, then the whole node if it ran out."""
        rows, total = self._working_sets(i, n, t)
        candidates = [(sp, ws) for sp, ws in rows if _memory(sp) is not None and _may_hit_limit(sp.pod, ws)]
        if not candidates and total <= n.capacity:
            return
        from ..kubelet.eviction.oom_kill import oom_report

        summary = self._summary(n, t, rows, total, self.sim.cluster.names[i])
        report = oom_report([sp.pod for sp, _ in rows], summary, n.config)
        by_uid = {sp.pod.uid: sp for sp, _ in rows}
        killed: set[str] = set()
        for k in report.container_kills:
            sp = by_uid[k.pod.uid]
            if _memory(sp) is None:
                continue   # no curve: it uses its request, which a limit at the request does not kill
            if sp.pod.uid not in killed:
                killed.add(sp.pod.uid)
                self._oom(sp, k.container, k.restarts, "container", t)
        over = total - n.capacity
        if over > 0:
            for row in report.node_order:
                if over <= 0:
                    break
                sp = by_uid[row.pod.uid]
                if sp.pod.uid in killed:
                    continue
                killed.add(sp.pod.uid)
                over -= row.working_set
                from ..kubelet.eviction.oom_kill import restarts_after_oom_kill

                c = next(c for c, _ in sp.pod.all_containers() if c.name == row.container)
                init = any(c2.name == row.container for c2 in sp.pod.spec.init_containers)
                self._oom(sp, row.container, restarts_after_oom_kill(sp.pod, c, init), "node", t)

    def _oom(self, sp: "SimPod", container: str, restarts: bool, scope: str, t: float) -> None:
        sim = self.sim
        sim.counters.oom_killed += 1
        node = sim.cluster.names[sp.node]
        where = "its memory limit" if scope == "container" else f"node {node} ran out of memory"
        sim.events.append({"time": t, "type": "OOMKilled", "pod": sp.pod.key, "node": node, "container": container,
                           "scope": scope, "restarts": restarts,
                           "message": f"container {container} was OOM-killed: {where}"})
        if restarts:
            sp.restarts += 1
            sp.origin = t    # the container starts again: its curve starts over
            if sim.cpu is not None:
                sim.cpu.restarted(sp)
            return
        sim._finish(sp, "Failed", "OOMKilled", f"container {container} was OOM-killed ({where})")

    def _kubelet(self, i: int, n: _Node, t: float) -> None:
        rows, total = self._working_sets(i, n, t)
        self._memory_pressure(i, n, t, rows, total)
        if n.disk is not None and n.disk.spec.io_bandwidth is not None:
            bio = getattr(self.sim, "blockio", None)
            if bio is not None and bio.node(i) is not None:   # Block I/O classes (:mod:`.blockio`)
                stalls, node_full = bio.stalls(i, [sp for sp, _ in rows], t, n.disk.spec.io_bandwidth)
            else:
                from .io_psi import io_stalls, io_wants

                stalls, node_full = io_stalls(n.disk.spec.io_bandwidth, io_wants([sp for sp, _ in rows], t))
            self.io_psi.step(self.sim.cluster.names[i], t, stalls, node_full)
        summary = self._summary(n, t, rows, total, self.sim.cluster.names[i])
        active = [sp.pod for sp, _ in rows]
        reclaim = None
        if n.disk is not None:
            from .disk import disk_summary

            summary, reclaim = disk_summary(self.sim, i, n.disk, n.config, rows, summary, t)
        result = n.manager.synchronize(int(t * NS), summary, active, reclaim=reclaim)
        for ev in result.evicted:
            sp = self.sim.by_uid.get(ev.pod.uid)
            if sp is not None and sp.phase == "Running":
                n.evicted += 1
                self.sim.evict(sp, ev.message, ev.cause)
        if result.conditions != n.conditions:
            self._set_conditions(i, n, result.conditions)

    def _memory_pressure(self, i: int, n: _Node, t: float, rows: list[tuple["SimPod", dict[str, int]]],
                         total: int) -> None:
        """The interval's memory stalls on node ``i`` into its PSI averages (:mod:`.memory_psi`)."""
        from .memory_psi import MemoryHigh, memory_stalls

        highs = self._highs.get(i)
        if highs is None:
            highs = self._highs[i] = MemoryHigh(n.config, n.capacity, self.sim.gates)
        stalls, node_full = memory_stalls(highs, rows, t, n.capacity, total)
        self.memory_psi.step(self.sim.cluster.names[i], t, stalls, node_full)

    def psi_summary(self, i: int, summary: Summary) -> Summary:
        """``summary`` with ``memory.psi`` and ``io.psi`` on the node, its pods and containers, as
        the kubelet reports them while ``KubeletPSI`` is on (zeros for groups that never stalled;
        :mod:`.stall_psi`); unchanged while it is off."""
        from ..kubelet.oom import gate
        from ..model.summary import IOStats
        from .stall_psi import psi_stats

        if not gate(self.sim.gates, "KubeletPSI"):
            return summary
        mem_psi, io_psi = self.memory_psi, self.io_psi
        name = self.sim.cluster.names[i]
        stamp = (summary.node.memory.time if summary.node.memory is not None else None)

        def mem(m: Any, lines: Any) -> Any:
            return msgspec.structs.replace(m or MemoryStats(time=stamp), psi=psi_stats(lines))

        def io(lines: Any) -> IOStats:
            return IOStats(time=stamp, psi=psi_stats(lines))

        pods = [msgspec.structs.replace(
            p, memory=mem(p.memory, mem_psi.lines(name, p.pod_ref.uid)), io=io(io_psi.lines(name, p.pod_ref.uid)),
            containers=[msgspec.structs.replace(c, memory=mem(c.memory, mem_psi.lines(name, p.pod_ref.uid, c.name)),
                                                io=io(io_psi.lines(name, p.pod_ref.uid, c.name)))
                        for c in p.containers]) for p in summary.pods]
        node = msgspec.structs.replace(summary.node, memory=mem(summary.node.memory, mem_psi.node_lines(name)),
                                       io=io(io_psi.node_lines(name)))
        return Summary(node=node, pods=pods)

    def summary(self, i: int, t: float) -> Summary:
        """Node ``i``'s memory Summary at ``t`` (working sets, ``memory.psi``) — what the eviction
        manager reads, with the pressure figures the Summary API adds."""
        n = self._node(i)
        rows, total = self._working_sets(i, n, t)
        return self.psi_summary(i, self._summary(n, t, rows, total, self.sim.cluster.names[i]))

    def psi_result(self) -> dict[str, Any] | None:
        """Memory (and I/O) pressure over time, per resource
        (:meth:`kubetwin.sim.stall_psi.NodeStalls.result`); None when no node ever stalled."""
        out = {s.resource: s.result() for s in self.stall_trackers() if s.nodes}
        return out or None

    def stall_trackers(self) -> list[Any]:
        return [self.memory_psi, self.io_psi]

    def _set_conditions(self, i: int, n: _Node, conditions: tuple[str, ...]) -> None:
        """The node lifecycle controller's NoSchedule taints follow the conditions (TaintNodesByCondition)."""
        from ..kubelet.eviction.signals import CONDITION_TO_TAINT
        from ..scheduler.framework.events import NODE_UPDATE_EVENTS, UPDATE_NODE_CONDITION, node_update_events

        sim = self.sim
        n.conditions = conditions
        sim.events.append({"time": sim.now, "type": "NodeConditions", "node": sim.cluster.names[i],
                           "conditions": list(conditions)})
        node = sim.cluster.infos[i].node
        ours = {CONDITION_TO_TAINT[c] for c in CONDITION_TO_TAINT}
        taints = [tt for tt in node.spec.taints if tt.key not in ours]
        taints += [Taint(key=CONDITION_TO_TAINT[c], effect="NoSchedule") for c in conditions if c in CONDITION_TO_TAINT]
        # the kubelet's condition update, then the node lifecycle controller's taints: node
        # update events whose queueing hints decide which parked pods they move
        sim.queue.on_event(NODE_UPDATE_EVENTS[UPDATE_NODE_CONDITION], sim.now, old=node, new=node)
        new = msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, taints=taints))
        for event in node_update_events(sim.sched.update_node(new), new):
            sim.queue.on_event(event, sim.now, old=node, new=new)

    # --- figures ---------------------------------------------------------------------------------
    def nodes_under_pressure(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for n in self.nodes.values():
            for c in n.conditions:
                out[c] = out.get(c, 0) + 1
        return out

    def conditions_of(self, i: int) -> tuple[str, ...]:
        n = self.nodes.get(i)
        return n.conditions if n is not None else ()

    def disk_result(self) -> dict[str, Any] | None:
        """Per node with disk figures: filesystems and processes over time, per pod too
        (:meth:`kubetwin.sim.disk.NodeDisk.result`); None when no node has them."""
        out = {self.sim.cluster.names[i]: n.disk.result() for i, n in sorted(self.nodes.items()) if n.disk is not None}
        return out or None

    def evicted_on(self, i: int) -> int:
        n = self.nodes.get(i)
        return n.evicted if n is not None else 0


def _memory(sp: "SimPod") -> Any:
    """The pod's usage if it has memory curves (a CPU-only usage leaves memory at the requests)."""
    u = sp.usage
    return u if u is not None and u.memory else None


def _may_hit_limit(pod: Pod, ws: dict[str, int]) -> bool:
    """A cheap pre-check before the exact kernel model: some container at or above a memory limit."""
    pod_limit = pod.spec.resources.limits.get("memory") if pod.spec.resources is not None else None
    if pod_limit is not None and sum(ws.values()) >= pod_limit.value():
        return True
    for c, _ in pod.all_containers():
        q = c.resources.limits.get("memory")
        if q is not None and ws.get(c.name, 0) >= q.value():
            return True
    return False
