"""A long-running scheduler over one cluster: ``schedule(pod)``, ``bind``, ``remove``, ``run``
(``pkg/scheduler/scheduler.go``, ``schedule_one.go``'s ``scheduleOne`` and ``schedulingCycle``).

This is kube-scheduler's loop for simulations: the cache (:class:`.backend.cache.ClusterState`)
is kept between cycles and updated on bind/remove; a cycle is :mod:`.schedule_one`'s
``schedulePod`` — run vectorised over the cache's columns (:mod:`.fastpath.cycle`) or, with
``vectorised=False``, node by node through the framework runtime (the reference the fast path
is tested against); a failed cycle runs PostFilter (preemption) and may be kept and
answered again (:mod:`.fastpath.verdicts`). Sampling and its rotation (``nextStartNodeIndex``),
the nominated-node shortcut and the FitError message follow upstream; the tie-break among top
scores uses one seeded RNG for the scheduler's lifetime.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import msgspec

from .. import tracing as _tracing
from ..model.features import FeatureGates
from ..model.meta import enc_hook
from ..model.node import Node
from ..model.pod import Pod
from .backend.cache import ClusterState
from .fastpath import fused as _fused
from .fastpath.cycle import VectorCycle, select_host_vector
from .fastpath.verdicts import KeptVerdicts, Preemptor, Verdict
from .framework.diagnosis import Diagnosis, fit_error_message
from .framework.interface import CycleState, Plugin
from .framework.runtime import Framework
from .framework.status import SUCCESS, Code
from .profile import Profile
from .schedule_one import NO_NODES, ScheduleResult, find_nodes_that_fit_pod, prioritize_nodes, select_host, totals_of

if TYPE_CHECKING:
    from .backend.queue import SchedulingQueue
    from .plugins.defaultpreemption.pdb import PodDisruptionBudget

__all__ = ["Scheduler", "ScheduleResult", "NO_NODES"]

_SIG_ENCODER = msgspec.msgpack.Encoder(enc_hook=enc_hook)


class Scheduler:
    """One scheduler profile over a fixed set of nodes, with the cluster kept between cycles.

    ``vectorised=False`` runs every plugin node by node (the reference the fast path is
    tested against).
    """

    def __init__(self, profile: Profile | None, nodes: Iterable[Node], gates: FeatureGates, seed: int = 0, *,
                 pods: Iterable[Pod] = (), objects: Mapping[str, list[Any]] | None = None,
                 namespaces: Mapping[str, Mapping[str, str]] | None = None, pdbs: Iterable[PodDisruptionBudget] = (),
                 vectorised: bool = True, reuse_verdicts: bool = True):
        self.profile = profile or Profile()
        #: the traced cycle's recorder (:mod:`kubetwin.tracing.scheduler`); None when not tracing
        self._recorder: Any = None
        self._open_cycle: Any = None
        self.gates = gates
        self.cluster = ClusterState(nodes, gates, pods=pods, namespaces=namespaces, objects=objects)
        self.handle = self.cluster.handle
        self.handle.seed = seed
        self.handle.pdbs = tuple(pdbs)
        self.framework = Framework(self.profile, self.handle)
        self.plugins: list[tuple[Plugin, int]] = self.framework.plugins
        #: Permit and Bind have something to do (a Bind plugin other than one whose binding is
        #: the cache's assumed pod, as the default binder's is)
        self._permit_or_bind = bool(self.framework.permit_plugins) or any(
            not p.binds_through_cache for p in self.framework.bind_plugins)
        self.vectorised = vectorised
        self.fast = VectorCycle(self.framework, self.cluster)
        #: one routine per cycle for the pods of a node-local profile (None: the profile is not one)
        self.fused = _fused.for_cycle(self.fast) if vectorised else None
        self.rng = random.Random(seed)
        self.next_start = 0
        preemptor = next((p for p in self.framework.post_filter_plugins if isinstance(p, Preemptor)), None)
        self._preemptor_name = preemptor.name if preemptor is not None else None
        self.kept = KeptVerdicts(self.fast, preemptor, vectorised)
        #: a failed cycle's answer per pod uid, reused while nothing it read has changed
        self.reuse_verdicts = reuse_verdicts
        self._verdicts: dict[str, Verdict] = {}
        self._shapes: dict[bytes, Verdict] = {}
        self._signatures: dict[str, tuple[Pod, bytes]] = {}
        self._failure: tuple | None = None   # the last failed cycle's diagnosis (see verdicts)
        #: cycles answered from a kept verdict instead of being run again (as is / node by node)
        self.reused_cycles = 0
        self.patched_cycles = 0

    @property
    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return self.handle.pdbs

    # --- cluster events ------------------------------------------------------------------------

    def bind(self, pod: Pod, node: str) -> None:
        """The pod now runs on ``node``: Reserve, Permit, the cache's ``AssumePod`` and Bind
        (the default binder: the cache's own); its nomination ends."""
        if _tracing.ACTIVE is not None:
            from ..tracing.scheduler import traced_bind

            return traced_bind(self, pod, node, self._bind)
        self._bind(pod, node)

    def _bind(self, pod: Pod, node: str) -> None:
        fwk = self.framework
        fwk.run_reserve_plugins_reserve(pod, node)
        self.clear_nomination(pod)
        self.cluster.bind(pod, node)
        if self._permit_or_bind:
            state = CycleState()
            fwk.run_permit_plugins(state, pod, node)
            fwk.run_bind_plugins(state, pod, node)
        if self._verdicts or self._signatures:
            uid = pod.uid
            self._verdicts.pop(uid, None)
            self._signatures.pop(uid, None)

    def remove(self, pod: Pod) -> str | None:
        """A bound pod is gone (deleted, finished, preempted); returns its node."""
        self.clear_nomination(pod)
        node = self.cluster.remove(pod)
        if node is not None:
            self.framework.run_reserve_plugins_unreserve(pod)
        return node

    def take_claim_changes(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """The ResourceClaims deallocated since last asked, (before, after) as JSON: ``ResourceClaim``
        update events for the scheduling queue."""
        out: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for plugin in self.framework.claim_changes_sources:
            got = plugin.claim_changes
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
            for listener in self.framework.node_labels_listeners:
                listener.node_changed(node.metadata.name)
        return changed

    def nominate(self, pod: Pod, node: str) -> None:
        """``status.nominatedNodeName``: the pod's resources are held on ``node`` for others."""
        self.clear_nomination(pod)
        self.cluster.nominated.setdefault(node, []).append(pod)
        self.cluster.touch(-1)

    def clear_nomination(self, pod: Pod) -> None:
        if not self.cluster.nominated:
            return
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

    def apply_preemption(self, result: ScheduleResult) -> None:
        """What upstream does after PostFilter nominated a node: evict the victims, nominate the pod."""
        if result.nominated_node is None:
            return
        for v in result.victims:
            self.remove(v)
        self.nominate(result.pod, result.nominated_node)

    def run(self, queue: SchedulingQueue, *, max_cycles: int | None = None, now: float | None = None) -> list[ScheduleResult]:
        """Schedule what ``queue`` (a :class:`~.backend.queue.SchedulingQueue`) holds until it has
        nothing ready: bind what fits, preempt where PostFilter nominates, park the rest
        until an event their rejecting plugins registered for (binds and evictions are such events)."""
        from .framework.events import ASSIGNED_POD_ADD, ASSIGNED_POD_DELETE, RESOURCE_CLAIM_UPDATE

        if queue.plugins is None:
            queue.plugins = {p.name: p for p, _ in self.plugins}
            queue.gates = self.gates
            self.framework.configure_queue(queue)
        results: list[ScheduleResult] = []
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
        """One scheduling cycle (``schedulePod`` then PostFilter on failure). Does not bind.

        A pod that failed its last cycle and comes back while the cluster is at the same
        generation (nothing bound, removed, nominated or updated since) gets that cycle's answer
        again without the work: every input of the cycle is unchanged, PostFilter's random
        offset is drawn from the generation, and the sampling rotation moves on as the cycle
        would have moved it (by every node examined).
        """
        if _tracing.ACTIVE is not None:
            from ..tracing.scheduler import traced_schedule

            return traced_schedule(self, pod, self._schedule)
        return self._schedule(pod)

    def _schedule(self, pod: Pod) -> ScheduleResult:
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

    def kept_answers(self, pods: Sequence[Pod], times: Sequence[int] | None = None,
                     advances: list[int] | None = None) -> list[ScheduleResult] | None:
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
        shape's is always 0). ``advances``, when given, receives each answer's ``advance``, for
        :meth:`kept_again`."""
        if not self.reuse_verdicts:
            return None
        cs = self.cluster
        gen = cs.generation
        verdicts, shapes, signatures = self._verdicts, self._shapes, self._signatures
        out: list[ScheduleResult] = []
        advance = 0
        for i, pod in enumerate(pods):
            uid = pod.metadata.uid or pod.uid   # (``Pod.uid``, its property call saved when the uid is set)
            kept = verdicts.get(uid)
            if kept is not None and kept.pod is pod and kept.generation == gen:
                out.append(kept.result)
                if kept.advance:
                    advance += (1 if times is None else times[i]) * kept.advance
                if advances is not None:
                    advances.append(kept.advance)
                continue
            if not shapes:
                return None
            got = signatures.get(uid)   # :meth:`signature`'s kept answer, looked up inline
            sig = got[1] if got is not None and got[0] is pod else self.signature(pod, uid)
            shared = shapes.get(sig)
            if shared is None:
                return None
            if shared.generation != gen and self._patch_shape(sig, shared) is None:
                return None
            out.append(shared.result)
            if advances is not None:
                advances.append(0)
        if advance and cs.n:
            self.next_start = (self.next_start + advance) % cs.n
        self.reused_cycles += len(out) if times is None else sum(times)
        if _tracing.ACTIVE is not None:
            from ..tracing.scheduler import traced_kept_answers

            traced_kept_answers(self, pods, out, times)
        return out

    def kept_again(self, cycles: int, advance: int) -> None:
        """``cycles`` more cycles answered again, at the generation of the :meth:`kept_answers`
        call that answered their pods first (nothing changed since: the caller vouches for it),
        moving the sampling rotation by ``advance`` in all — what ``kept_answers(pods, times)``
        of those pods would count, without looking each one up again. Not for traced runs
        (``kept_answers`` gives each such cycle its span)."""
        cs = self.cluster
        if advance and cs.n:
            self.next_start = (self.next_start + advance) % cs.n
        self.reused_cycles += cycles

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
        sig = self.signature(pod, uid)
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
        """A shape's kept failure brought up to the current generation (:meth:`.KeptVerdicts.patch`),
        or None — the shape forgotten — when the real cycle must run."""
        cs = self.cluster
        nodes = cs.changed_since(shared.generation)
        r = self.kept.patch(shared, nodes) if nodes is not None else None
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
            local = self.kept.local_failure(pod, diag, kind, others)
            if local is not None:
                self._verdicts.pop(pod.uid, None)
                self._shapes[self.signature(pod)] = Verdict(pod, cs.generation, r, 0, local)
                return
        self._verdicts[pod.uid] = Verdict(pod, cs.generation, r, advance)

    def signature(self, pod: Pod, uid: str | None = None) -> bytes:
        """Everything of the pod a node-local cycle can read: all but its name and identity
        (pods of one shape share a kept verdict). ``uid``: the pod's, when the caller has it."""
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
        gated = self.framework.run_pre_enqueue_plugins(pod)
        if gated is not SUCCESS:   # PreEnqueue keeps the pod out of the queue: it has no cycle
            return ScheduleResult(pod, None, Code.Pending, gated.message)
        if cs.n == 0:
            return ScheduleResult(pod, None, Code.UnschedulableAndUnresolvable, NO_NODES)
        fused = self.fused
        if fused is not None and _fused.ENABLED and self._recorder is None:
            got = fused.cycle(pod, self.next_start, self.rng)
            if got is not None:
                best, feasible_count, processed = got
                self.next_start = (self.next_start + processed) % cs.n
                return ScheduleResult.placed(pod, cs.names[best], feasible_count, processed)
        state = CycleState()
        if self.vectorised:
            found = self.fast.find_nodes_that_fit_pod(state, pod, self.next_start, self._recorder)
        else:
            found = find_nodes_that_fit_pod(self.framework, state, pod, cs.infos, start=self.next_start,
                                            recorder=self._recorder)
        diag = found.diagnosis
        if diag.all_nodes is not None:
            return self._unschedulable(pod, state, diag, pre_filter_msg=diag.all_nodes.message)
        if found.nominated:
            return ScheduleResult(pod, cs.names[found.nodes[0]], feasible=1, evaluated=1)
        self.next_start = (self.next_start + found.processed) % cs.n
        feasible = found.nodes
        if len(feasible) == 0:
            return self._unschedulable(pod, state, diag, evaluated=found.processed)
        if len(feasible) == 1:
            return ScheduleResult.placed(pod, cs.names[int(feasible[0])], 1, found.processed)
        if self.vectorised:
            # the vectorised Filter's feasible nodes are an int64 array already
            best = select_host_vector(self.fast.prioritize_nodes(state, pod, feasible, self._recorder),  # type: ignore[arg-type]
                                      self.rng)
        else:
            infos = [cs.infos[i] for i in feasible]
            scores = prioritize_nodes(self.framework, state, pod, infos)
            if self._recorder is not None:
                self._recorder.scores(scores)
            best = select_host(totals_of(infos, scores), self.rng)
        return ScheduleResult.placed(pod, cs.names[int(feasible[best])], len(feasible), found.processed)

    # --- failure -------------------------------------------------------------------------------

    def _unschedulable(self, pod: Pod, state: CycleState, diag: Diagnosis, *, pre_filter_msg: str = "",
                       evaluated: int = 0) -> ScheduleResult:
        """The FitError, after PostFilter: its message, or the node it nominated with the victims."""
        cs = self.cluster
        hist = diag.histogram() if not pre_filter_msg else Counter()
        result, st, gave = self.framework.run_post_filter_plugins(state, pod, diag)
        if self._recorder is not None:
            self._recorder.post_filter(result, st, gave, 0)
        nominated: str | None = None
        victims: tuple[Pod, ...] = ()
        post_msg = ""
        others = any(name != self._preemptor_name for name in gave)
        if result is not None and st.is_success:
            nominated, victims = result.nominated_node, result.victims
        else:
            post_msg = st.message
        code = Code.Unschedulable
        if diag.all_nodes is not None:
            code = diag.all_nodes.code
        msg = fit_error_message(cs.n, hist, pre_filter_msg, post_msg)
        if self.reuse_verdicts and not pre_filter_msg and nominated is None:
            self._failure = (diag, self.kept.preemption_kind(pod, diag), others)
        return ScheduleResult(pod, None, code, msg, 0, evaluated, diag.plugins(), nominated, victims)
