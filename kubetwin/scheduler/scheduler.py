"""A long-running scheduler over one cluster: ``schedule(pod)``, ``bind``, ``remove``.

This is kube-scheduler's ``SchedulePod`` for simulations: the snapshot is kept between
cycles (:class:`ClusterState`, updated on bind/remove), the node-local default plugins are
evaluated over all nodes at once (:mod:`.vector`), and only plugins that look at other pods
(PodTopologySpread, InterPodAffinity, NodeResourceTopologyMatch, ...) run node by node —
for the nodes the sampling actually visits. Sampling and its rotation (``nextStartNodeIndex``),
the nominated-node shortcut, the FitError message and DefaultPreemption follow upstream; the
tie-break among top scores uses one seeded RNG for the scheduler's lifetime.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import msgspec
import numpy as np

from ..errors import KubetwinError
from ..model.meta import _enc_hook
from ..model.node import Node
from ..model.pod import Pod
from .cycle import Framework, num_feasible_nodes_to_find
from .framework.interface import CycleState, Plugin
from .framework.status import Code, Status
from .framework.types import NodeInfo, PodInfo
from .profile import Profile
from .state import ClusterState
from .verdicts import PREEMPT_NEVER, PREEMPT_NO_DRY_RUN, PREEMPT_OFF, Verdict, local_failure, patch
from .vector import (IPA_STATE, SKIPPED, SPREAD_STATE, VECTOR_FILTERS, VECTOR_SCORES, FilterVerdict,
                     inter_pod_affinity_state, score_resources_together, spread_constraints)

NO_NODES = "no nodes available to schedule pods"
_SIG_ENCODER = msgspec.msgpack.Encoder(enc_hook=_enc_hook)


@dataclass(frozen=True)
class ScheduleResult:
    """One cycle's answer. ``node`` is None when the pod is unschedulable (``message`` says why)."""

    pod: Pod
    node: str | None
    code: Code = Code.Success
    message: str = ""
    #: feasible nodes found / nodes whose filters ran (sampling)
    feasible: int = 0
    evaluated: int = 0
    #: plugins that rejected the pod on some node (what queueing hints key on)
    unschedulable_plugins: frozenset[str] = frozenset()
    #: DefaultPreemption's answer: the node nominated for the pod and the pods to evict there
    nominated_node: str | None = None
    victims: tuple[Pod, ...] = ()

    @property
    def scheduled(self) -> bool:
        return self.node is not None

    def for_pod(self, pod: Pod) -> "ScheduleResult":
        """The same answer for another pod of the same shape: a kept verdict handed out to
        thousands of pods, so copied without ``dataclasses.replace``'s field-by-field rebuild."""
        out = object.__new__(ScheduleResult)
        d = out.__dict__
        d.update(self.__dict__)
        d["pod"] = pod
        return out


class Diagnosis:
    """Which node failed which filter, with which status (``framework.Diagnosis``)."""

    def __init__(self, n: int):
        self.n = n
        self.per_node: dict[int, Status] = {}
        self.vector: list[tuple[FilterVerdict, np.ndarray]] = []  # (verdict, nodes it decided)
        self.all_nodes: Status | None = None  # a PreFilter rejection: every node has it
        self.absent: Status | None = None     # nodes a PreFilterResult left out
        self.absent_mask: np.ndarray | None = None
        self.skipped: set[str] = set()  # plugins whose PreFilter said Skip

    def status(self, i: int) -> Status | None:
        if self.all_nodes is not None:
            return self.all_nodes
        st = self.per_node.get(i)
        if st is not None:
            return st
        for verdict, mask in self.vector:
            if mask[i]:
                return verdict.status(i)
        if self.absent_mask is not None and self.absent_mask[i]:
            return self.absent
        return None

    def codes(self) -> np.ndarray:
        """Code per node (0 where no status)."""
        out = np.zeros(self.n, dtype=np.int8)
        if self.all_nodes is not None:
            out[:] = int(self.all_nodes.code)
            return out
        if self.absent_mask is not None:
            out[self.absent_mask] = int(self.absent.code)  # type: ignore[union-attr]
        for verdict, mask in self.vector:
            out[mask] = verdict.code[mask]
        for i, st in self.per_node.items():
            out[i] = int(st.code)
        return out

    def histogram(self) -> Counter[str]:
        hist: Counter[str] = Counter()
        if self.all_nodes is not None:
            for r in self.all_nodes.reasons:
                hist[r] += self.n
            return hist
        if self.absent_mask is not None:
            cnt = int(self.absent_mask.sum())
            for r in self.absent.reasons:  # type: ignore[union-attr]
                hist[r] += cnt
        for verdict, mask in self.vector:
            if not mask.any():
                continue
            if verdict.key is None:
                keys, counts = np.array([0]), np.array([int(mask.sum())])
            else:
                keys, counts = np.unique(verdict.key[mask], return_counts=True)
            for k, c in zip(keys.tolist(), counts.tolist()):
                for r in verdict.reasons_of(k):
                    hist[r] += c
        for st in self.per_node.values():
            for r in st.reasons:
                hist[r] += 1
        return hist

    def plugins(self) -> frozenset[str]:
        if self.all_nodes is not None:
            return frozenset({self.all_nodes.plugin})
        out = {v.plugin for v, m in self.vector if m.any()}
        out |= {st.plugin for st in self.per_node.values()}
        return frozenset(p for p in out if p)


def fit_error(num_nodes: int, hist: Counter[str], pre_filter_msg: str = "", post_filter_msg: str = "") -> str:
    """``FitError.Error()``: the reason histogram sorted as strings, then PostFilter's message."""
    text = f"0/{num_nodes} nodes are available:"
    if pre_filter_msg:
        text += f" {pre_filter_msg}."
    else:
        text += " " + ", ".join(sorted(f"{c} {r}" for r, c in hist.items())) + "."
    if post_filter_msg:
        text += f" {post_filter_msg}"  # PostFilter's message brings its own full stop
    return text


def pod_priority(pod: Pod) -> int:
    """``corev1helpers.PodPriority``: unset priority counts as 0."""
    return pod.spec.priority or 0


class Scheduler:
    """One scheduler profile over a fixed set of nodes, with the cluster kept between cycles.

    ``vectorised=False`` runs every plugin node by node (the reference the fast path is
    tested against).
    """

    def __init__(self, profile: Profile | None, nodes: Iterable[Node], gates: Any, seed: int = 0, *,
                 pods: Iterable[Pod] = (), objects: Mapping[str, list[Any]] | None = None,
                 namespaces: Mapping[str, Mapping[str, str]] | None = None, pdbs: Iterable[Any] = (),
                 vectorised: bool = True, reuse_verdicts: bool = True):
        self.profile = profile or Profile()
        self.gates = gates
        self.cluster = ClusterState(nodes, gates, pods=pods, namespaces=namespaces, objects=objects)
        self.handle = self.cluster.handle
        self.handle.seed = seed
        self.framework = Framework(self.profile, self.handle)
        self.plugins: list[tuple[Plugin, int]] = self.framework.plugins
        self.pre_filters = [p for p, _ in self.plugins if hasattr(p, "pre_filter")]
        self._pre_filter_by_name = {p.name: p for p in reversed(self.pre_filters)}   # the first of a name
        self.filters = [p for p, _ in self.plugins if hasattr(p, "filter")]
        self.scorers = [(p, w) for p, w in self.plugins if hasattr(p, "score") and w > 0]
        #: the default profile's two resource scorers, scored together when both are on
        by_name = {p.name: (p, w) for p, w in self.scorers}
        self._resource_scorers = (by_name.get("NodeResourcesFit"), by_name.get("NodeResourcesBalancedAllocation"))
        self.has_score = bool(self.scorers)
        self.reservers = [p for p, _ in self.plugins if hasattr(p, "reserve")]
        self.vectorised = vectorised
        self.rng = random.Random(seed)
        self.next_start = 0
        self.preemption = "DefaultPreemption" in {n for n, _ in self.profile.plugins}
        self.pdbs: list[Any] = list(pdbs)
        #: a failed cycle's answer per pod uid, reused while nothing it read has changed
        self.reuse_verdicts = reuse_verdicts
        self._verdicts: dict[str, Verdict] = {}
        self._shapes: dict[bytes, Verdict] = {}
        self._signatures: dict[str, tuple[Pod, bytes]] = {}
        self._failure: tuple | None = None   # the last failed cycle's diagnosis (see verdicts)
        #: cycles answered from a kept verdict instead of being run again (as is / node by node)
        self.reused_cycles = 0
        self.patched_cycles = 0

    def pre_filter_named(self, name: str) -> Plugin | None:
        return self._pre_filter_by_name.get(name)

    # --- cluster events ------------------------------------------------------------------------

    def bind(self, pod: Pod, node: str) -> None:
        """The pod now runs on ``node`` (Reserve, cache ``AssumePod``, binding); its nomination ends."""
        for plugin in self.reservers:
            plugin.reserve(pod, node)
        self.clear_nomination(pod)
        self.cluster.bind(pod, node)
        self._verdicts.pop(pod.uid, None)
        self._signatures.pop(pod.uid, None)

    def remove(self, pod: Pod) -> str | None:
        """A bound pod is gone (deleted, finished, preempted); returns its node."""
        self.clear_nomination(pod)
        node = self.cluster.remove(pod)
        if node is not None:
            for plugin in self.reservers:
                plugin.unreserve(pod)
        return node

    def take_claim_changes(self) -> list[tuple[Any, Any]]:
        """The ResourceClaims deallocated since last asked, (before, after): ``ResourceClaim``
        update events for the scheduling queue."""
        out: list[tuple[Any, Any]] = []
        for plugin in self.reservers:
            got = getattr(plugin, "claim_changes", None)
            if got:
                out.extend(got)
                got.clear()
        return out

    def update_node(self, node: Node) -> list[str]:
        """A node object changed (taints, ``unschedulable``, labels, allocatable), as the node
        lifecycle controller's condition taints or a relabelling do; the next cycle sees it.
        Returns what changed. The caller tells its queue (``NodeUpdate``) when pods may care."""
        changed = self.cluster.update_node(node)
        if "labels" in changed:
            for plugin, _ in self.plugins:
                hook = getattr(plugin, "node_changed", None)
                if hook is not None:
                    hook(node.metadata.name)
        return changed

    def nominate(self, pod: Pod, node: str) -> None:
        """``status.nominatedNodeName``: the pod's resources are held on ``node`` for others."""
        self.clear_nomination(pod)
        self.cluster.nominated.setdefault(node, []).append(pod)
        self.cluster.touch(-1)

    def clear_nomination(self, pod: Pod) -> None:
        uid = pod.uid
        for node, pods in list(self.cluster.nominated.items()):
            kept = [p for p in pods if p.uid != uid]
            if len(kept) != len(pods):
                self.cluster.touch(-1)
                if kept:
                    self.cluster.nominated[node] = kept
                else:
                    del self.cluster.nominated[node]

    def nominated_node_of(self, pod: Pod) -> str | None:
        for node, pods in self.cluster.nominated.items():
            if any(p.uid == pod.uid for p in pods):
                return node
        return pod.status.nominated_node_name or None

    def apply_preemption(self, result: "ScheduleResult") -> None:
        """What upstream does after PostFilter nominated a node: evict the victims, nominate the pod."""
        if result.nominated_node is None:
            return
        for v in result.victims:
            self.remove(v)
        self.nominate(result.pod, result.nominated_node)

    def run(self, queue: Any, *, max_cycles: int | None = None, now: float | None = None) -> list["ScheduleResult"]:
        """Schedule what ``queue`` (a :class:`~.queue.SchedulingQueue`) holds until it has nothing
        ready: bind what fits, preempt where DefaultPreemption nominates, park the rest until an
        event their rejecting plugins registered for (binds and evictions are such events)."""
        from .queue import ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, RESOURCE_CLAIM_UPDATE

        if getattr(queue, "plugins", None) is None:
            queue.plugins = {p.name: p for p, _ in self.plugins}
            queue.gates = self.gates
        results = []
        while max_cycles is None or len(results) < max_cycles:
            pod = queue.pop(now)
            if pod is None:
                break
            r = self.schedule(pod)
            results.append(r)
            if r.node is not None:
                self.bind(pod, r.node)
                queue.on_event(ASSIGNED_POD_ADD, now or 0.0, pod,
                               self.cluster.snapshot.namespace_labels(pod.metadata.namespace))
                continue
            if r.nominated_node is not None:
                self.apply_preemption(r)
                for v in r.victims:
                    queue.on_event(ASSIGNED_POD_DELETE, now or 0.0, old=v)
                for before, after in self.take_claim_changes():
                    queue.on_event(RESOURCE_CLAIM_UPDATE, now or 0.0, old=before, new=after)
                queue.add(msgspec.structs.replace(pod, status=msgspec.structs.replace(
                    pod.status, nominated_node_name=r.nominated_node)), now)
                continue
            queue.requeue_unschedulable(pod, r.unschedulable_plugins, now or 0.0)
        return results

    # --- the cycle -----------------------------------------------------------------------------

    def schedule(self, pod: Pod) -> ScheduleResult:
        """One scheduling cycle (``SchedulePod`` then PostFilter on failure). Does not bind.

        A pod that failed its last cycle and comes back while the cluster is at the same
        generation (nothing bound, removed, nominated or updated since) gets that cycle's answer
        again without the work: every input of the cycle is unchanged, PostFilter's random
        offset is drawn from the generation, and the sampling rotation moves on as the cycle
        would have moved it (by every node examined).
        """
        if self.reuse_verdicts:
            r = self._reuse(pod)
            if r is not None:
                return r
        start = self.next_start
        self._failure = None
        r = self._cycle(pod)
        if self.reuse_verdicts and r.node is None and r.nominated_node is None and r.code != Code.Pending:
            self._keep(pod, r, start)
        return r

    def kept_answers(self, pods: Sequence[Pod], times: Sequence[int] | None = None) -> list[ScheduleResult] | None:
        """The answers of cycles for ``pods`` in this order, all from kept failures — what
        :meth:`schedule` would answer for each — or None when any one of them would need a real
        cycle. Lets a caller retry a batch of parked pods in one step while nothing in the cluster
        changes. Shape verdicts behind the current generation are patched on the way, as
        :meth:`_reuse` patches them; when the batch ends in None, those patches stand and the
        pods' one-by-one cycles find them done (the cluster has not moved in between).

        A pod answered from its shape gets the shape's result itself (its ``pod`` may be another
        pod of the shape: the answer — code, message, plugins — is what is shared); no copy is
        kept for it, which :meth:`_reuse` keeps only to skip the shape lookup next time.

        ``times``: how many cycles in a row each pod goes through (at least one; once each by
        default). At one generation a pod's later cycles get the same answer, each moving the
        sampling rotation as :meth:`_reuse` would: by its own kept verdict's ``advance`` (a
        shape's is always 0)."""
        if not self.reuse_verdicts:
            return None
        cs = self.cluster
        gen = cs.generation
        verdicts, shapes = self._verdicts, self._shapes
        out: list[ScheduleResult] = []
        advance = 0
        for i, pod in enumerate(pods):
            uid = pod.uid
            kept = verdicts.get(uid)
            if kept is not None and kept.pod is pod and kept.generation == gen:
                out.append(kept.result)
                if kept.advance:
                    advance += (1 if times is None else times[i]) * kept.advance
                continue
            if not shapes:
                return None
            sig = self._signature(pod, uid)
            shared = shapes.get(sig)
            if shared is None:
                return None
            if shared.generation != gen and self._patch_shape(sig, shared) is None:
                return None
            out.append(shared.result)
        if advance and cs.n:
            self.next_start = (self.next_start + advance) % cs.n
        self.reused_cycles += len(out) if times is None else sum(times)
        return out

    def _reuse(self, pod: Pod) -> ScheduleResult | None:
        """A kept failed cycle brought up to date, or None when the real cycle must run.

        Failures that read only each node's own state are kept per pod *shape* (the pod without
        its name): pods of one template, rejected alike, share one verdict."""
        cs = self.cluster
        uid = pod.uid
        kept = self._verdicts.get(uid)
        if kept is not None and kept.pod is pod and kept.generation == cs.generation:
            if kept.advance:
                self.next_start = (self.next_start + kept.advance) % cs.n
            self.reused_cycles += 1
            return kept.result
        if not self._shapes:
            return None
        sig = self._signature(pod, uid)
        shared = self._shapes.get(sig)
        if shared is None:
            return None
        if shared.generation != cs.generation:
            if self._patch_shape(sig, shared) is None:
                return None
        else:
            self.reused_cycles += 1
        r = shared.result
        if r.pod is not pod:
            r = r.for_pod(pod)
            self._verdicts[uid] = Verdict(pod, cs.generation, r, 0)   # its own copy, for same-generation retries
        return r

    def _patch_shape(self, sig: bytes, shared: Verdict) -> ScheduleResult | None:
        """A shape's kept failure brought up to the current generation (:func:`.verdicts.patch`),
        or None — the shape forgotten — when the real cycle must run."""
        cs = self.cluster
        nodes = cs.changed_since(shared.generation)
        r = patch(self, shared, nodes) if nodes is not None else None
        if r is None:
            del self._shapes[sig]
            return None
        shared.generation, shared.result = cs.generation, r
        self.patched_cycles += 1
        return r

    def _keep(self, pod: Pod, r: ScheduleResult, start: int) -> None:
        cs = self.cluster
        advance = (self.next_start - start) % cs.n if cs.n else 0
        if self._failure is not None and not advance:
            diag, kind, others = self._failure
            local = local_failure(self, pod, diag, kind, others)
            if local is not None:
                self._verdicts.pop(pod.uid, None)
                self._shapes[self._signature(pod)] = Verdict(pod, cs.generation, r, 0, local)
                return
        self._verdicts[pod.uid] = Verdict(pod, cs.generation, r, advance)

    def _signature(self, pod: Pod, uid: str | None = None) -> bytes:
        """Everything of the pod a node-local cycle can read: all but its name and identity.
        ``uid``: the pod's, when the caller has it already."""
        if uid is None:
            uid = pod.uid
        got = self._signatures.get(uid)
        if got is not None and got[0] is pod:
            return got[1]
        m = pod.metadata
        sig = _SIG_ENCODER.encode((m.namespace, m.labels, m.annotations, pod.spec, pod.status))
        self._signatures[uid] = (pod, sig)
        return sig

    def _cycle(self, pod: Pod) -> ScheduleResult:
        cs = self.cluster
        if pod.spec.scheduling_gates:
            return ScheduleResult(pod, None, Code.Pending, "pod has scheduling gates: "
                                  + ", ".join(g.name for g in pod.spec.scheduling_gates))
        if cs.n == 0:
            return ScheduleResult(pod, None, Code.UnschedulableAndUnresolvable, NO_NODES)
        state = CycleState()
        diag = Diagnosis(cs.n)

        # PreFilter
        skipped: set[str] = diag.skipped
        allowed: set[str] | None = None
        restricting: list[str] = []
        for plugin in self.pre_filters:
            if self._pre_filter_is_skip(plugin, pod):
                skipped.add(plugin.name)
                continue
            if plugin.name == "NodeResourcesFit" and self.vectorised:
                state[plugin.name] = cs.amounts(pod).requests
                continue
            if plugin.name == "InterPodAffinity" and self.vectorised:
                ipa_state = inter_pod_affinity_state(cs, pod)
                if ipa_state is None:
                    skipped.add(plugin.name)
                else:
                    state[IPA_STATE] = ipa_state
                continue
            if plugin.name == "PodTopologySpread" and self.vectorised:
                cons = spread_constraints(cs, pod, plugin)
                if cons is not None:
                    if not cons:
                        skipped.add(plugin.name)
                    else:
                        state[SPREAD_STATE] = cons
                    continue
            names, st = plugin.pre_filter(state, pod, cs.infos)
            if st.is_skip:
                skipped.add(plugin.name)
                continue
            if st.code != Code.Success:
                diag.all_nodes = st.with_plugin(plugin.name)
                return self._unschedulable(pod, state, diag, pre_filter_msg=st.message)
            if names is not None:
                restricting.append(plugin.name)
                allowed = set(names) if allowed is None else allowed & set(names)

        # a nominated node that still passes the filters is taken as is
        nnn = pod.status.nominated_node_name
        if nnn and nnn in cs.index:
            i = cs.index[nnn]
            if self._node_status(state, pod, i, skipped) is None:
                return ScheduleResult(pod, nnn, feasible=1, evaluated=1)

        candidates = cs.all_nodes
        if allowed is not None:
            plist = "[" + " ".join(sorted(restricting)) + "]"
            if not allowed:
                diag.all_nodes = Status(Code.UnschedulableAndUnresolvable,
                                        (f"node(s) didn't satisfy plugin(s) {plist} simultaneously",))
                return self._unschedulable(pod, state, diag,
                                           pre_filter_msg=f"node(s) didn't satisfy plugin(s) {plist} simultaneously")
            inside = np.zeros(cs.n, dtype=bool)
            for name in allowed:
                i = cs.index.get(name)
                if i is not None:
                    inside[i] = True
            candidates = np.flatnonzero(inside)
            diag.absent = Status(Code.UnschedulableAndUnresolvable, (f"node(s) didn't satisfy plugin(s) {plist}",))
            diag.absent_mask = ~inside

        feasible, processed = self._find_feasible(state, pod, skipped, candidates, diag)
        if len(candidates):
            self.next_start = (self.next_start + processed) % cs.n
        if len(feasible) == 0:
            return self._unschedulable(pod, state, diag, evaluated=processed)
        if len(feasible) == 1:
            return ScheduleResult(pod, cs.names[int(feasible[0])], feasible=1, evaluated=processed)
        totals = self._score(state, pod, feasible)
        best = self._select_host(totals)
        return ScheduleResult(pod, cs.names[int(feasible[best])], feasible=len(feasible), evaluated=processed)

    def _spread_is_skip(self, pod: Pod) -> bool:
        """PodTopologySpread has nothing to do: no constraints, and no objects a default one needs."""
        if pod.spec.topology_spread_constraints:
            return False
        objs = self.handle.objects
        return not (objs.get("Service") or objs.get("ReplicationController") or objs.get("ReplicaSet")
                    or objs.get("StatefulSet"))

    def _pre_filter_is_skip(self, plugin: Plugin, pod: Pod) -> bool:
        """PreFilters known to Skip without looking (they would walk every node to find out)."""
        if plugin.name == "PodTopologySpread":
            return self._spread_is_skip(pod)
        if plugin.name == "InterPodAffinity":
            aff = pod.spec.affinity
            has = aff is not None and (
                (aff.pod_affinity is not None and aff.pod_affinity.required_during_scheduling_ignored_during_execution)
                or (aff.pod_anti_affinity is not None
                    and aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution))
            return not has and self.cluster.pods_with_required_anti_affinity == 0
        return False

    # --- Filter ----------------------------------------------------------------------------------

    def _stages(self, state: CycleState, pod: Pod, skipped: set[str]) -> list[tuple[Plugin, FilterVerdict | None]]:
        stages = []
        for plugin in self.filters:
            if plugin.name in skipped:
                continue
            verdict = None
            if self.vectorised:
                fn = VECTOR_FILTERS.get(plugin.name)
                if fn is not None:
                    verdict = fn(self.cluster, pod, plugin, state)
            stages.append((plugin, verdict))
        return stages

    def _nominated_here(self, pod: Pod) -> dict[int, list[Pod]]:
        """Nodes with pods nominated there of priority ≥ the pod's (other than the pod)."""
        out: dict[int, list[Pod]] = {}
        if not self.cluster.nominated:
            return out
        prio = pod_priority(pod)
        for node, pods in self.cluster.nominated.items():
            keep = [p for p in pods if p.uid != pod.uid and pod_priority(p) >= prio]
            if keep and node in self.cluster.index:
                out[self.cluster.index[node]] = keep
        return out

    def _chain(self, state: CycleState, pod: Pod, ni: NodeInfo, skipped: set[str]) -> Status | None:
        for plugin in self.filters:
            if plugin.name in skipped:
                continue
            st = plugin.filter(state, pod, ni)
            if not st.is_success:
                return st.with_plugin(plugin.name)
        return None

    def _node_status(self, state: CycleState, pod: Pod, i: int, skipped: set[str],
                     stages: list | None = None) -> Status | None:
        """``RunFilterPluginsWithNominatedPods`` on one node: must pass with and without them."""
        ni = self.cluster.infos[i]
        nominated = self._nominated_here(pod).get(i)
        if nominated:
            clone = ni.clone()
            for p in nominated:
                clone.add_pod(PodInfo(p))
            st = self._chain(state, pod, clone, skipped)
            if st is not None:
                return st
        if stages is None:
            return self._chain(state, pod, ni, skipped)
        for plugin, verdict in stages:
            if verdict is not None:
                if verdict.fail[i]:
                    return verdict.status(i)
                continue
            st = plugin.filter(state, pod, ni)
            if not st.is_success:
                return st.with_plugin(plugin.name)
        return None

    def _find_feasible(self, state: CycleState, pod: Pod, skipped: set[str], candidates: np.ndarray,
                       diag: Diagnosis) -> tuple[np.ndarray, int]:
        cs = self.cluster
        m = len(candidates)
        if m == 0:
            return candidates, 0
        to_find = num_feasible_nodes_to_find(self.profile.percentage_of_nodes_to_score, m) if self.has_score else 1
        start = self.next_start % m
        stages = self._stages(state, pod, skipped)
        nominated = self._nominated_here(pod)
        per_node = [k for k, (_, v) in enumerate(stages) if v is None]
        if not per_node and not nominated:
            fails = [v.fail for _, v in stages if v.fail is not cs.no_fail]  # type: ignore[union-attr]
            fail = fails[0] if fails else cs.no_fail
            if len(fails) > 1:
                fail = fail | fails[1]
                for f in fails[2:]:
                    fail |= f
            if m == cs.n:
                quick = self._first_feasible(fail, start, to_find, m)
                if quick is not None:
                    return quick
            rot = np.concatenate((candidates[start:], candidates[:start])) if start else candidates
            ok = ~fail[rot]
            pos = np.flatnonzero(ok)
            if len(pos) >= to_find:
                processed = int(pos[to_find - 1]) + 1
                pos = pos[:to_find]
            else:
                processed = m
            seen = rot[:processed]
            feasible = rot[pos]
            if len(feasible) == 0:
                self._record_vector(diag, stages, seen)
            return feasible, processed
        # node by node where some plugin needs it; vector stages before the first such plugin
        # settle most nodes in bulk
        rot = np.concatenate((candidates[start:], candidates[:start])) if start else candidates
        first = per_node[0] if per_node else len(stages)
        prefix_fail = np.zeros(cs.n, dtype=bool)
        for _, v in stages[:first]:
            prefix_fail |= v.fail  # type: ignore[union-attr]
        for i in nominated:
            prefix_fail[i] = False
        found: list[int] = []
        processed = m
        statuses: dict[int, Status] = {}
        open_pos = np.flatnonzero(~prefix_fail[rot])
        for pos in open_pos.tolist():
            i = int(rot[pos])
            st = self._node_status(state, pod, i, skipped, stages)
            if st is None:
                found.append(i)
                if len(found) >= to_find:
                    processed = pos + 1
                    break
            else:
                statuses[i] = st
        feasible = np.array(found, dtype=np.int64)
        if len(feasible) == 0:
            seen = rot[:processed]
            prefix_seen = np.zeros(cs.n, dtype=bool)
            prefix_seen[seen] = prefix_fail[seen]
            self._record_vector(diag, stages[:first], np.flatnonzero(prefix_seen))
            diag.per_node.update(statuses)
        return feasible, processed

    @staticmethod
    def _first_feasible(fail: np.ndarray, start: int, to_find: int, m: int) -> tuple[np.ndarray, int] | None:
        """Sampling over all nodes without rotating them: the feasible nodes from ``start`` on,
        then those before it, cut at ``to_find``, and how many nodes that examined (None when no
        node is feasible: the caller records why, node by node in rotation order)."""
        ok = (~fail).nonzero()[0]
        if len(ok) == 0:
            return None
        if start:
            k = int(ok.searchsorted(start))
            if k:
                ok = np.concatenate((ok[k:], ok[:k]))
        if len(ok) >= to_find:
            ok = ok[:to_find]
            return ok, (int(ok[-1]) - start) % m + 1
        return ok, m

    @staticmethod
    def _record_vector(diag: Diagnosis, stages: list, seen: np.ndarray) -> None:
        undecided = np.zeros(diag.n, dtype=bool)
        undecided[seen] = True
        for _, v in stages:
            mask = undecided & v.fail
            if mask.any():
                diag.vector.append((v.settle(), mask))
                undecided &= ~mask

    # --- Score -----------------------------------------------------------------------------------

    def _score(self, state: CycleState, pod: Pod, feasible: np.ndarray) -> np.ndarray:
        """Weighted sum of the normalised scores, only as far as ``selectHost`` reads it (the
        highest total and the ties at it): a plugin whose score is the same on every node —
        TaintToleration with no PreferNoSchedule taint anywhere, InterPodAffinity and
        PodTopologySpread with nothing to count — moves every total alike and is left out."""
        cs = self.cluster
        totals: np.ndarray | None = None
        infos: list[NodeInfo] | None = None
        together = None
        fit, balanced = self._resource_scorers
        if self.vectorised and fit is not None and balanced is not None:
            together = score_resources_together(cs, pod, fit[0], fit[1], balanced[0], balanced[1], feasible)
            totals = together
        for plugin, weight in self.scorers:
            name = plugin.name
            if together is not None and (name == "NodeResourcesFit" or name == "NodeResourcesBalancedAllocation"):
                continue
            if name == "InterPodAffinity" and self._ipa_score_is_skip(pod):
                continue
            if name == "PodTopologySpread" and self._spread_is_skip(pod):
                continue
            if name == "TaintToleration" and not cs.any_prefer_no_schedule:
                continue
            if self.vectorised:
                fn = VECTOR_SCORES.get(name)
                if fn is not None:
                    sv = fn(cs, pod, plugin, feasible)
                    if sv is SKIPPED:
                        continue
                    if sv is not None:
                        part = sv.normalized * weight if weight != 1 else sv.normalized
                        if totals is None:
                            totals = part.astype(np.int64, copy=True)
                        else:
                            totals += part
                        continue
            if infos is None:
                infos = cs.infos_array[feasible].tolist()
            if hasattr(plugin, "pre_score"):
                st = plugin.pre_score(state, pod, infos)
                if st.is_skip:
                    continue
                if not st.is_success:
                    raise KubetwinError(f"{plugin.name} PreScore: {st.message}")
            scores: dict[str, int] = {}
            for ni in infos:
                s, st = plugin.score(state, pod, ni)
                if not st.is_success:
                    raise KubetwinError(f"{plugin.name} Score on {ni.name}: {st.message}")
                scores[ni.name] = s
            if hasattr(plugin, "normalize_score"):
                plugin.normalize_score(state, pod, scores)
            part = np.array([scores[ni.name] for ni in infos], dtype=np.int64) * weight
            if totals is None:
                totals = part
            else:
                totals += part
        return totals if totals is not None else np.zeros(len(feasible), dtype=np.int64)

    def _ipa_score_is_skip(self, pod: Pod) -> bool:
        aff = pod.spec.affinity
        has_pref = aff is not None and (
            (aff.pod_affinity is not None and aff.pod_affinity.preferred_during_scheduling_ignored_during_execution)
            or (aff.pod_anti_affinity is not None
                and aff.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution))
        return not has_pref and self.cluster.pods_with_affinity == 0

    def _select_host(self, totals: np.ndarray) -> int:
        """``selectHost``: the highest total; among equal ones a uniformly random one (seeded)."""
        top = (totals == np.maximum.reduce(totals)).nonzero()[0]   # ufunc calls: no Python wrappers
        if len(top) == 1:
            return int(top[0])
        return int(top[self.rng.randrange(len(top))])

    # --- failure -------------------------------------------------------------------------------

    def _unschedulable(self, pod: Pod, state: CycleState, diag: Diagnosis, *, pre_filter_msg: str = "",
                       evaluated: int = 0) -> ScheduleResult:
        cs = self.cluster
        hist = diag.histogram() if not pre_filter_msg else Counter()
        messages = []
        nominated: str | None = None
        victims: tuple[Pod, ...] = ()
        for plugin, _ in self.plugins:  # PostFilter plugins before DefaultPreemption (DynamicResources)
            if hasattr(plugin, "post_filter_message") and plugin.name not in diag.skipped:
                m = plugin.post_filter_message(state)
                if m:
                    messages.append(m)
        others = bool(messages)
        if self.preemption:
            from .preemption import preempt

            outcome = preempt(self, pod, state, diag)
            if outcome.message:
                messages.append(outcome.message)
            if outcome.node is not None:
                nominated, victims = outcome.node, outcome.victims
                messages = []  # PostFilter succeeded: the first success ends PostFilter
        post_msg = ", ".join(messages)
        code = Code.Unschedulable
        if diag.all_nodes is not None:
            code = diag.all_nodes.code
        msg = fit_error(cs.n, hist, pre_filter_msg, post_msg)
        if self.reuse_verdicts and not pre_filter_msg and nominated is None:
            self._failure = (diag, self._preemption_kind(pod, diag), others)
        return ScheduleResult(pod, None, code, msg, 0, evaluated, diag.plugins(), nominated, victims)

    def _preemption_kind(self, pod: Pod, diag: Diagnosis) -> int | None:
        """How DefaultPreemption answered without a dry run, or None if it may have run one."""
        if not self.preemption:
            return PREEMPT_OFF
        if pod.spec.preemption_policy == "Never":
            return PREEMPT_NEVER
        if pod.status.nominated_node_name:
            return None
        if not self.cluster.any_priority_below(pod_priority(pod)):
            return PREEMPT_NO_DRY_RUN
        if not (diag.codes() == int(Code.Unschedulable)).any():
            return PREEMPT_NO_DRY_RUN
        return None
