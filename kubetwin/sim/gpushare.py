"""GPU sharing as the Alibaba GPU trace describes it — the open-gpu-share model, as a scheduler plugin.

Kubernetes has no built-in object for a GPU fraction (DRA consumable capacity is the modern
route); the trace's own scheduler is open-gpu-share, whose names we read: a node advertises
``alibabacloud.com/gpu-count`` GPUs (its ``alibabacloud.com/gpu-card-model`` label says which), a pod
asks with the annotations ``alibabacloud.com/gpu-count``, ``alibabacloud.com/gpu-milli`` (thousandths
of one GPU, for a single shared GPU) and ``alibabacloud.com/gpu-card-model`` (``|``-separated models).
A fraction goes to the GPU with the least room that still fits it (best fit), whole GPUs to the
lowest-numbered free ones.

:class:`GPUShare` is a plugin of :mod:`kubetwin.scheduler` registered under the name ``GPUShare``:
Filter over all nodes at once (a vector filter), per node on a copied NodeInfo (preemption's dry
runs), Reserve/Unreserve keep the per-GPU free thousandths. It is not an upstream plugin, so the
simulation adds it to a profile only when some node has shared GPUs.

Not an upstream module of Kubernetes: it follows the open-gpu-share scheduler the Alibaba trace was
scheduled with.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model.pod import Pod
from ..scheduler.fastpath.vector import FilterVerdict
from ..scheduler.framework.interface import CycleState, Plugin, register
from ..scheduler.framework.status import SUCCESS, Code, Status
from ..scheduler.framework.types import NodeInfo

GPU_COUNT = "alibabacloud.com/gpu-count"
GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_MODEL = "alibabacloud.com/gpu-card-model"
FULL = 1000
NAME = "GPUShare"
INSUFFICIENT = "Insufficient GPU"
WRONG_MODEL = "node(s) didn't match the GPU model"

GPURequest = tuple[int, int, frozenset[str]]


_LAST_REQUEST: list[Any] = [None, None]   # (annotations, request) of the last pod asked about


def gpu_request(pod: Pod) -> GPURequest | None:
    """(GPUs, milli per GPU, allowed models) from the pod's annotations; None when it asks for none.
    The cycle's Filter, Reserve and the figures ask about the same pod in turn: the last answer is
    kept with the annotations it was read from."""
    ann = pod.metadata.annotations
    last = _LAST_REQUEST
    if last[0] is ann:
        return last[1]
    # pods of one shape have annotations of their own, alike: parsed once per spelling
    spelled = (ann.get(GPU_COUNT), ann.get(GPU_MILLI), ann.get(GPU_MODEL))
    try:
        req = _PARSED[spelled]
    except KeyError:
        req = _parse_request(ann)
        if len(_PARSED) >= 4096:
            _PARSED.clear()
        _PARSED[spelled] = req
    last[0], last[1] = ann, req
    return req


#: requests parsed, by the three annotations' values
_PARSED: dict[tuple[str | None, str | None, str | None], GPURequest | None] = {}


def _parse_request(ann: dict[str, str]) -> GPURequest | None:
    count = int(ann.get(GPU_COUNT, "0") or 0)
    if count <= 0:
        return None
    milli = int(ann.get(GPU_MILLI, str(FULL)) or FULL)
    models = frozenset(m for m in ann.get(GPU_MODEL, "").split("|") if m)
    return count, milli, models


def _fits_row(row: np.ndarray, req: GPURequest) -> bool:
    count, milli, _ = req
    if count == 1 and milli < FULL:
        return bool((row >= milli).any())
    return int((row == FULL).sum()) >= count


def _take(free: list[int], req: GPURequest) -> tuple[tuple[int, int], ...]:
    """The GPUs a pod gets from a node's free thousandths (``free``, updated): a fraction goes to
    the lowest-numbered of the GPUs with the least room that fits it, whole GPUs are the
    lowest-numbered free ones. A node has a handful of GPUs: plain lists beat numpy here."""
    count, milli, _ = req
    if count == 1 and milli < FULL:
        g = min((f, g) for g, f in enumerate(free) if f >= milli)[1]
        free[g] -= milli
        return ((g, milli),)
    ids = [g for g, f in enumerate(free) if f == FULL][:count]
    for g in ids:
        free[g] = 0
    return tuple((g, FULL) for g in ids)


@register
class GPUShare(Plugin):
    """Free thousandths of every GPU of every node (``-1`` pads nodes with fewer GPUs), in the
    scheduler's node order."""

    name = NAME
    #: Filter reads only the node's own GPUs (a kept failed cycle is brought up to date node by node)
    node_local = True

    def __init__(self, args: Any, handle: Any):
        super().__init__(args, handle)
        cs = handle.cache
        self.cluster = cs
        counts = [int(ni.allocatable.get(GPU_COUNT, 0)) for ni in cs.infos]
        width = max(counts, default=0) or 1
        self.free = np.full((cs.n, width), -1, dtype=np.int64)
        for i, c in enumerate(counts):
            self.free[i, :c] = FULL
        self.counts = np.array(counts, dtype=np.int64)
        self._capacity = sum(counts) * FULL   # every sample reads it; ``counts`` is set here only
        #: per node, kept in step with ``free``: the roomiest GPU's free thousandths, whole free GPUs
        self.max_free = np.where(self.counts > 0, FULL, -1).astype(np.int64)
        self.whole_free = self.counts.copy()
        #: thousandths held by pods, and free slivers (free but less than a whole GPU) per node
        #: and in all: the sampled figures, kept up to date by Reserve/Unreserve
        self._allocated = 0
        self._slivers = [0] * cs.n
        self._sliver_total = 0
        models = [ni.labels.get(GPU_MODEL, "") for ni in cs.infos]
        self._model_ids = {m: k for k, m in enumerate(dict.fromkeys(models))}
        self.model_of = np.array([self._model_ids[m] for m in models], dtype=np.int32)
        #: pod uid -> (node index, ((gpu, milli), ...))
        self.assigned: dict[str, tuple[int, tuple[tuple[int, int], ...]]] = {}
        self._model_masks: dict[frozenset[str], np.ndarray] = {}
        self._wrong_masks: dict[frozenset[str], np.ndarray] = {}
        self.resolvable = np.full(cs.n, np.int8(Code.Unschedulable), dtype=np.int8)
        self.resolvable.flags.writeable = False

    # --- Filter -----------------------------------------------------------------------------------
    def model_mask(self, allowed: frozenset[str]) -> np.ndarray:
        hit = self._model_masks.get(allowed)
        if hit is None:
            table = np.array([m in allowed for m in self._model_ids], dtype=bool)
            hit = self._model_masks[allowed] = table[self.model_of]
        return hit

    def wrong_model(self, allowed: frozenset[str]) -> np.ndarray:
        """Nodes whose GPU model is not among ``allowed`` (read-only, kept per model set)."""
        hit = self._wrong_masks.get(allowed)
        if hit is None:
            hit = self._wrong_masks[allowed] = ~self.model_mask(allowed)
            hit.flags.writeable = False
        return hit

    def fits(self, req: GPURequest) -> np.ndarray:
        return ~self.short(req)

    def short(self, req: GPURequest) -> np.ndarray:
        """Nodes without room for the request: no GPU with enough milli left for a share, too
        few whole GPUs free otherwise."""
        count, milli, _ = req
        if count == 1 and milli < FULL:
            return self.max_free < milli
        return self.whole_free < count

    def fused_filter(self, pod: Pod) -> tuple[tuple[tuple[int, np.ndarray], ...], tuple[np.ndarray, ...]]:
        """The vector Filter's rejections as the fused cycle (:mod:`kubetwin.scheduler.fastpath.fused`)
        reads them, without arrays of this cycle's own: (amount, column) pairs — a node whose
        column is below the amount is short — and masks of rejected nodes. A share needs a GPU
        with ``milli`` free (``max_free``), whole GPUs ``count`` free ones (``whole_free``);
        the wrong model rejects (a mask kept per model set)."""
        req = gpu_request(pod)
        if req is None:
            return (), ()
        count, milli, models = req
        short = (milli, self.max_free) if count == 1 and milli < FULL else (count, self.whole_free)
        return (short,), ((self.wrong_model(models),) if models else ())

    def _changed(self, i: int, free: list[int]) -> None:
        """Node ``i``'s GPUs now have ``free`` thousandths: its row and the figures kept from it."""
        self.free[i] = free
        self.max_free[i] = max(free)
        self.whole_free[i] = free.count(FULL)
        sliver = sum(f for f in free if 0 < f < FULL)
        self._sliver_total += sliver - self._slivers[i]
        self._slivers[i] = sliver

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status:
        """One node. The cluster's own NodeInfo holds exactly the pods Reserve counted on its row
        (the scheduler reserves what it binds and unreserves what it removes), so it is read from
        the per-node figures the vector Filter reads; a copy (preemption's dry runs) from the GPUs
        the pods on it hold."""
        req = gpu_request(pod)
        if req is None:
            return SUCCESS
        i = self.cluster.index[node.name]
        if req[2] and not self.model_mask(req[2])[i]:
            return Status(Code.UnschedulableAndUnresolvable, (WRONG_MODEL,))
        if node is self.cluster.infos[i]:
            count, milli, _ = req
            fits = bool(self.max_free[i] >= milli if count == 1 and milli < FULL else self.whole_free[i] >= count)
        else:
            row = np.where(self.free[i] >= 0, FULL, -1)
            for pi in node.pods:
                got = self.assigned.get(pi.pod.uid)
                if got is not None:
                    for g, m in got[1]:
                        row[g] -= m
            fits = _fits_row(row, req)
        return SUCCESS if fits else Status(Code.Unschedulable, (INSUFFICIENT,))

    # --- Reserve ----------------------------------------------------------------------------------
    def reserve(self, pod: Pod, node: str) -> None:
        req = gpu_request(pod)
        if req is None:
            return
        i = self.cluster.index[node]
        free = self.free[i].tolist()
        taken = _take(free, req)
        self.assigned[pod.uid] = (i, taken)
        self._allocated += sum(m for _, m in taken)
        self._changed(i, free)

    def unreserve(self, pod: Pod) -> None:
        got = self.assigned.pop(pod.uid, None)
        if got is not None:
            i, taken = got
            free = self.free[i].tolist()
            for g, m in taken:
                free[g] += m
            self._allocated -= sum(m for _, m in taken)
            self._changed(i, free)

    def gpus_of(self, pod: Pod) -> tuple[tuple[int, int], ...] | None:
        got = self.assigned.get(pod.uid)
        return got[1] if got is not None else None

    # --- figures ---------------------------------------------------------------------------------
    def allocated_milli(self) -> int:
        """Thousandths of GPU held by pods (every GPU starts wholly free: what is not free is held)."""
        return self._allocated

    def capacity_milli(self) -> int:
        return self._capacity

    def fragmentation_milli(self, typical_milli: int = FULL) -> int:
        """Free GPU capacity that cannot serve a ``typical_milli`` request: free slivers smaller than it
        (the FGD paper's view of fragmentation for one typical task)."""
        if typical_milli == FULL:
            return self._sliver_total
        sliver = (self.free > 0) & (self.free < typical_milli)
        return int(self.free[sliver].sum())

    def partially_used_gpus(self) -> int:
        return int(((self.free > 0) & (self.free < FULL)).sum())


def _vector_filter(cs: Any, pod: Pod, plugin: GPUShare, state: CycleState) -> Any:
    """Filter over every node at once: the model first (unresolvable), then room (resolvable)."""
    req = gpu_request(pod)
    if req is None:
        return FilterVerdict(NAME, cs.no_fail, plugin.resolvable, None, _REASONS.__getitem__)
    short = plugin.short(req)
    if not req[2]:
        return FilterVerdict(NAME, short, plugin.resolvable, None, _INSUFFICIENT.__getitem__)
    wrong = plugin.wrong_model(req[2])
    # codes and reasons only when the cycle fails (``short`` is this cycle's own array)
    return FilterVerdict(NAME, short | wrong, explain=lambda: _model_reasons(short, wrong))


def _model_reasons(short: np.ndarray, wrong: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
    """Code and reason key per node: the wrong model (unresolvable) before too little room."""
    key = short.astype(np.int64)
    key[wrong] = 2
    code = np.where(wrong, np.int8(Code.UnschedulableAndUnresolvable), np.int8(Code.Unschedulable)).astype(np.int8)
    return code, key, _REASONS.__getitem__


_REASONS = {0: (), 1: (INSUFFICIENT,), 2: (WRONG_MODEL,)}
_INSUFFICIENT = {0: (INSUFFICIENT,)}


def _register() -> None:
    """The plugin's vector Filter and the cluster events that may help a pod it rejected."""
    from ..scheduler import register_plugin_events, register_vector_filter
    from ..scheduler.framework.events import ASSIGNED_POD_DELETE, NODE_ADD, NODE_UPDATE

    register_vector_filter(NAME, _vector_filter)
    register_plugin_events(NAME, (ASSIGNED_POD_DELETE, NODE_ADD, NODE_UPDATE))


_register()
