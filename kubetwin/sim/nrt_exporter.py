"""Live NodeResourceTopology in a simulation: each node's topology agent and the scheduler's
NRT cache over simulated time.

Scenario field (strict)::

    spec:
      nodeResourceTopology:
        exporter: nfd-topology-updater   # the only agent modelled (NFD v0.19.0)
        updateInterval: 60s              # -sleep-interval (0: no periodic updates)
        watchKubeletState: true          # -kubelet-state-dir set: update when a checkpoint changes
        podsFingerprint: true            # -pods-fingerprint: the nodeTopologyPodsFingerprint attribute

Each node with a machine and a kubelet gets an agent (:mod:`kubetwin.kubelet.topology_updater`
over :mod:`kubetwin.kubelet.podresources`). The objects exist when the scheduler starts (each agent
publishes its idle node at time 0, as in a running cluster); after that an agent publishes when
the kubelet's checkpoints change (``watchKubeletState``: at once, kubetwin's kubelets write them
at admission and removal) and at every ``updateInterval`` tick counted from time 0 if its node
changed since. The NodeResourceTopologyMatch plugin (when the profile enables it) reads them
through the cache its args choose (:mod:`kubetwin.scheduler.plugins.noderesourcetopology.cache`);
an OverReserve cache resyncs at every ``cacheResyncPeriodSeconds`` tick after a Filter marked a
node, and each flush is an event of the run (``NodeResourceTopologyResync``). Pods bound on stale
data and refused by their kubelet show as ``rejectedByKubelet`` (``TopologyAffinityError``).

kubetwin's own glue (no upstream file): the clock, and which object the plugin sees when. The
kubelets of a simulation know only the pods they admitted (a rejected pod leaves at once), so
List shows active pods whatever ``KubeletPodResourcesListUseActivePods`` says. The agent's own
DaemonSet pod (``node-feature-discovery/nfd-topology-updater-<node>``, no resources) runs on
every node: it is in the pod-set fingerprint on both sides, so an OverReserve cache can resync an
otherwise empty node (upstream skips a node without pods).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import InputError

EXPORTERS = ("nfd-topology-updater",)
#: the agent's own DaemonSet pod on each node (it is in the kubelet's List and in the scheduler's view)
AGENT_NAMESPACE = "node-feature-discovery"
#: the loop's event kind for this module's ticks (negative: a live event, it can change the cluster)
NRT_EVENT = -3  # beside the resize events (-2, -1: :mod:`.resize`)
_PUBLISH, _RESYNC, _WAKE = "publish", "resync", "wake"


@dataclass(frozen=True)
class ExporterSettings:
    exporter: str = "nfd-topology-updater"
    update_interval: float = 60.0
    watch_kubelet_state: bool = True
    pods_fingerprint: bool = True


def parse_settings(raw: Any, path: str = "spec.nodeResourceTopology") -> ExporterSettings:
    """The scenario's ``nodeResourceTopology`` (fields already checked by the strict walker)."""
    from ..model.strict import unknown_key_error
    from .workload import seconds

    if not isinstance(raw, Mapping):
        raise InputError("must be an object", path=path)
    exporter = raw.get("exporter") or "nfd-topology-updater"
    if exporter not in EXPORTERS:
        raise unknown_key_error(str(exporter), EXPORTERS, path=f"{path}.exporter", what="exporter")
    interval = 60.0 if raw.get("updateInterval") is None else seconds(raw["updateInterval"], f"{path}.updateInterval")
    watch = raw.get("watchKubeletState", True)
    fingerprint = raw.get("podsFingerprint", True)
    for key, value in (("watchKubeletState", watch), ("podsFingerprint", fingerprint)):
        if not isinstance(value, bool):
            raise InputError("must be true or false", path=f"{path}.{key}")
    if interval == 0 and not watch:
        raise InputError("the agent would never update its objects after time 0", path=path,
                         fix="set updateInterval above 0 or watchKubeletState: true")
    return ExporterSettings(str(exporter), interval, bool(watch), bool(fingerprint))


class TopologyExporters:
    """The agents of every simulated node, the objects they published, the plugin's cache ticks."""

    def __init__(self, sim: Any, settings: ExporterSettings):
        from ..scheduler.framework.events import UPDATE, ClusterEvent
        from ..scheduler.plugins.noderesourcetopology import NAME

        if sim.sc.objects.get("NodeResourceTopology"):
            where = (sim.sc.origins.get("NodeResourceTopology") or [None])[0]
            raise InputError("NodeResourceTopology objects are given and spec.nodeResourceTopology publishes them "
                             "too", path="spec.nodeResourceTopology", file=where,
                             fix="drop the objects or spec.nodeResourceTopology")
        self.sim = sim
        self.settings = settings
        self.names: list[str] = list(sim.cluster.names)
        #: the API server's objects, by node name
        self.published: dict[str, Any] = {}
        self.dirty: set[int] = set()
        self.planned: set[tuple[float, str]] = set()
        self.publishes = 0
        #: objects published per node, and each desynced node's (serial, pods) at the last resync try
        self.serial: dict[str, int] = {}
        #: each agent's resource aggregator, made when it starts (``NewResourcesAggregator``)
        self.aggregators: dict[int, Any] = {}
        self.tried: dict[str, tuple[int, tuple[int, ...]]] = {}
        self.event = ClusterEvent("NodeResourceTopology", UPDATE, "NodeResourceTopologyUpdate")
        for i in range(len(self.names)):
            self._publish(i)
        self.plugin = sim.sched.framework.plugin(NAME)
        self.cache = None
        if self.plugin is not None:
            self.plugin.use_source(self.published.get, sorted(self.published))
            self.cache = self.plugin.cache
            if hasattr(self.cache, "pods_on_node"):
                self.cache.pods_on_node = self._pods_on_node

    # --- the agents ------------------------------------------------------------------------------
    def _publish(self, i: int) -> bool:
        """One update of node ``i``'s agent; True when the object changed."""
        from ..kubelet.podresources import KnownPod, PodResourcesServer
        from ..kubelet.topology_updater import export
        from ..scheduler.plugins.noderesourcetopology.nrt import nrt_from_dict

        kubelet = self.sim._kubelet(i)
        if kubelet is None:
            return False
        pods = {(p.namespace, p.name): p for p in kubelet.admitted}
        server = PodResourcesServer(kubelet, [KnownPod(p, True) for p in kubelet.admitted])
        listed = server.list_pod_resources()
        agent = {"name": self._agent(i), "namespace": AGENT_NAMESPACE, "containers": [{"name": "nfd-topology-updater"}]}
        listed = {"podResources": [*listed.get("podResources", ()), agent]}
        aggregator = self.aggregators.get(i)
        if aggregator is None:   # the agent starts: GetAllocatableResources once
            from ..kubelet.topology_updater import Aggregator

            aggregator = self.aggregators[i] = Aggregator(kubelet.machine, server.get_allocatable_resources())
        doc = export(kubelet, listed, aggregator.allocatable_response, self.names[i],
                     lambda ns, name: pods.get((ns, name)), fingerprint=self.settings.pods_fingerprint,
                     aggregator=aggregator)
        new = nrt_from_dict(doc)
        old = self.published.get(self.names[i])
        self.published[self.names[i]] = new
        self.publishes += 1
        if old != new:
            self.serial[self.names[i]] = self.serial.get(self.names[i], 0) + 1
        return old != new

    def state_changed(self, i: int) -> None:
        """Node ``i``'s kubelet admitted or released a pod (its checkpoints were written)."""
        if self.settings.watch_kubelet_state:
            if self._publish(i):
                self._seen([i])
            return
        self.dirty.add(i)
        if self.settings.update_interval > 0:
            self._plan(_next_tick(self.sim.now, self.settings.update_interval), _PUBLISH)

    def _seen(self, nodes: list[int]) -> None:
        """Objects of ``nodes`` changed: what the plugin reads through a pass-through cache changed,
        and pods it rejected may fit now."""
        cs = self.sim.cluster
        for i in nodes:
            cs.touch(i)
        self.sim.queue.on_event(self.event, self.sim.now)
        self._plan_resync()

    def _agent(self, i: int) -> str:
        return f"nfd-topology-updater-{self.names[i]}"

    # --- the cache -------------------------------------------------------------------------------
    def _pods_on_node(self, node: str) -> list[tuple[str, str, bool]]:
        """The pods the scheduler's informer sees on ``node``: bound and running (kubetwin starts a
        bound pod at once; pods that ended are deleted at once)."""
        from ..kubelet.qos import get_pod_qos
        from ..scheduler.plugins.noderesourcetopology.cache import are_exclusive_for_pod

        i = self.sim.cluster.index[node]
        out = [(AGENT_NAMESPACE, self._agent(i), False)]
        for sp in self.sim.residents[i].values():
            pod = sp.pod
            out.append((pod.namespace, pod.name, are_exclusive_for_pod(pod, get_pod_qos(pod, self.sim.gates))))
        return out

    def _resync_key(self, node: str) -> tuple[int, tuple[int, ...]]:
        """What a resync of ``node`` depends on: its agent's last object and the pods on it."""
        i = self.sim.cluster.index[node]
        return self.serial.get(node, 0), tuple(sorted(self.sim.residents[i]))

    def _plan_resync(self) -> None:
        """A resync tick, when one can flush a node it could not flush before (a node newly
        marked, or whose object or pods changed since the last try): upstream resyncs every
        period, kubetwin puts only the ticks that can change something on the clock."""
        cache = self.cache
        if cache is None or not getattr(cache, "desynced", None):
            return
        if all(self.tried.get(n) == self._resync_key(n) for n in cache.desynced):
            return
        period = self.plugin.args.cache_resync_period_seconds
        self._plan(_next_tick(self.sim.now, float(period)), _RESYNC)

    def after_scheduling(self) -> None:
        """The queue drained: a Filter may have marked nodes maybe-over-reserved."""
        self._plan_resync()

    # --- the clock ---------------------------------------------------------------------------------
    def _plan(self, t: float, what: str) -> None:
        if (t, what) in self.planned:
            return
        self.planned.add((t, what))
        self.sim.push(t, NRT_EVENT, what)

    def tick(self, t: float, what: str) -> None:
        self.planned.discard((t, what))
        if what == _PUBLISH:
            changed = [i for i in sorted(self.dirty) if self._publish(i)]
            self.dirty.clear()
            if changed:
                self._seen(changed)
            return
        cache = self.cache
        if cache is None or what == _WAKE:
            return   # a wake only keeps the clock going to a leftover flush
        for node in cache.desynced:
            self.tried[node] = self._resync_key(node)
        flushed = cache.resync()
        if flushed:
            # the plugin reads other data on these nodes now; no informer event: parked pods wait
            # for their next retry
            self.sim.events.append({"time": t, "type": "NodeResourceTopologyResync", "nodes": flushed})
            cs = self.sim.cluster
            for node in flushed:
                cs.touch(cs.index[node])
            # parked pods may fit now: keep the clock going to their next leftover flush
            oldest = self.sim.queue.oldest_unschedulable()
            if oldest is not None:
                self._plan(self.sim.flush_due(oldest), _WAKE)


def _next_tick(now: float, every: float) -> float:
    """The first tick of a ticker started at time 0 strictly after ``now``."""
    return (math.floor(now / every) + 1) * every
