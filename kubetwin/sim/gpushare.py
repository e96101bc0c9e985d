"""GPU sharing as the Alibaba GPU trace describes it: a pod asks for whole GPUs, or for a
fraction of one GPU in thousandths (``gpu-milli``), optionally restricted to GPU models.

Kubernetes has no built-in object for a GPU fraction (DRA consumable capacity is the modern
route); the trace's own scheduler is open-gpu-share, whose pod annotations we read:
``alibabacloud.com/gpu-count``, ``alibabacloud.com/gpu-milli``, ``alibabacloud.com/gpu-card-model``.
A fraction goes to the GPU with the least room that still fits it (best fit), whole GPUs to the
lowest-numbered free ones.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..model.pod import Pod

GPU_COUNT = "alibabacloud.com/gpu-count"
GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_MODEL = "alibabacloud.com/gpu-card-model"
FULL = 1000


def gpu_request(pod: Pod) -> tuple[int, int, frozenset[str]] | None:
    """(GPUs, milli per GPU, allowed models) from the pod's annotations; None when it asks for none."""
    ann = pod.metadata.annotations
    count = int(ann.get(GPU_COUNT, "0") or 0)
    if count <= 0:
        return None
    milli = int(ann.get(GPU_MILLI, str(FULL)) or FULL)
    models = frozenset(m for m in ann.get(GPU_MODEL, "").split("|") if m)
    return count, milli, models


class GPUShare:
    """Free thousandths of every GPU of every node (``-1`` pads nodes with fewer GPUs)."""

    reason = "Insufficient GPU"

    def __init__(self, counts: Sequence[int], models: Sequence[str]):
        width = max(counts, default=0) or 1
        self.free = np.full((len(counts), width), -1, dtype=np.int64)
        for i, c in enumerate(counts):
            self.free[i, :c] = FULL
        self.counts = np.array(counts, dtype=np.int64)
        self.models = list(models)

    def reorder(self, order: Sequence[int]) -> "GPUShare":
        out = GPUShare.__new__(GPUShare)
        out.free = self.free[list(order)].copy()
        out.counts = self.counts[list(order)]
        out.models = [self.models[i] for i in order]
        return out

    def model_mask(self, allowed: frozenset[str]) -> np.ndarray:
        if not allowed:
            return np.ones(len(self.models), dtype=bool)
        return np.array([m in allowed for m in self.models], dtype=bool)

    def fits(self, req: tuple[int, int, frozenset[str]]) -> np.ndarray:
        count, milli, _ = req
        if count == 1 and milli < FULL:
            return self.free.max(axis=1) >= milli
        return (self.free == FULL).sum(axis=1) >= count

    def allocate(self, i: int, req: tuple[int, int, frozenset[str]]) -> tuple[tuple[int, int], ...]:
        count, milli, _ = req
        row = self.free[i]
        if count == 1 and milli < FULL:
            ok = np.flatnonzero(row >= milli)
            g = int(ok[np.argmin(row[ok])])
            row[g] -= milli
            return ((g, milli),)
        ids = np.flatnonzero(row == FULL)[:count]
        row[ids] = 0
        return tuple((int(g), FULL) for g in ids)

    def release(self, i: int, taken: tuple[tuple[int, int], ...]) -> None:
        for g, m in taken:
            self.free[i, g] += m

    # --- figures ---------------------------------------------------------------------------------
    def allocated_milli(self) -> int:
        have = self.free >= 0
        return int((FULL - self.free)[have].sum())

    def capacity_milli(self) -> int:
        return int(self.counts.sum()) * FULL

    def fragmentation_milli(self, typical_milli: int = FULL) -> int:
        """Free GPU capacity that cannot serve a ``typical_milli`` request: free slivers smaller than it
        (the FGD paper's view of fragmentation for one typical task)."""
        have = self.free >= 0
        sliver = have & (self.free > 0) & (self.free < typical_milli)
        return int(self.free[sliver].sum())

    def partially_used_gpus(self) -> int:
        return int(((self.free > 0) & (self.free < FULL)).sum())
