"""What the eviction manager does with parsed thresholds: derive the containerfs copies once the
disk layout is known, decide which are met (with or without minimum reclaim), merge, order.

Parsing (``ParseThresholdConfig``, defaults, the allocatable copy) belongs to the configuration:
:meth:`kubetwin.model.kubelet_config.KubeletConfiguration.eviction_thresholds`.

Upstream: ``thresholdsMet``, ``mergeThresholds`` and friends in ``pkg/kubelet/eviction/helpers.go``.
"""

from __future__ import annotations

from typing import Any, Final, Iterable

import msgspec

from ...model.kubelet_config import Threshold, ThresholdValue
from ...model.quantity import Quantity
from .signals import (
    CONTAINERFS_AVAILABLE,
    CONTAINERFS_INODES_FREE,
    IMAGEFS_AVAILABLE,
    IMAGEFS_INODES_FREE,
    MEMORY_SIGNALS,
    NODEFS_AVAILABLE,
    NODEFS_INODES_FREE,
    SIGNAL_TO_RESOURCE,
    Observations,
)

__all__ = ["Threshold", "ThresholdValue", "update_containerfs_thresholds", "thresholds_met", "merge_thresholds",
           "by_eviction_priority", "threshold_quantity", "threshold_to_dict", "same_threshold"]

_CONTAINERFS_COPY: Final = {NODEFS_AVAILABLE: CONTAINERFS_AVAILABLE, NODEFS_INODES_FREE: CONTAINERFS_INODES_FREE,
                            IMAGEFS_AVAILABLE: CONTAINERFS_AVAILABLE, IMAGEFS_INODES_FREE: CONTAINERFS_INODES_FREE}


def update_containerfs_thresholds(thresholds: Iterable[Threshold], *, dedicated_image_fs: bool,
                                  split_container_fs: bool) -> list[Threshold]:
    """``UpdateContainerFsThresholds``: containerfs thresholds cannot be configured (any given are
    dropped); they copy — value, grace period, minimum reclaim — those of the filesystem that
    holds the writable layers: nodefs on a single filesystem or when the layers are split away
    from a dedicated imagefs, imagefs when it is dedicated and holds them."""
    kept = [t for t in thresholds if t.signal not in (CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE)]
    if dedicated_image_fs == split_container_fs:
        source = "nodefs."
    elif dedicated_image_fs:
        source = "imagefs."
    else:  # writable layers split but no dedicated imagefs: the kubelet derives nothing
        return kept
    return kept + [msgspec.structs.replace(t, signal=_CONTAINERFS_COPY[t.signal])
                   for t in kept if t.signal.startswith(source)]


def threshold_quantity(value: ThresholdValue, capacity: Quantity | None) -> Quantity:
    """``GetThresholdQuantity`` for an observation's capacity."""
    return value.amount(capacity if capacity is not None else Quantity.from_int(0))


def thresholds_met(thresholds: Iterable[Threshold], observations: Observations,
                   enforce_min_reclaim: bool) -> list[Threshold]:
    """``thresholdsMet``: the threshold quantity (plus minimum reclaim, when enforced) is strictly
    above what is available. A signal without an observation never meets a threshold."""
    out = []
    for t in thresholds:
        obs = observations.get(t.signal)
        if obs is None:
            continue
        quantity = threshold_quantity(t.value, obs.capacity)
        if enforce_min_reclaim and t.min_reclaim is not None:
            quantity = quantity + threshold_quantity(t.min_reclaim, obs.capacity)
        if quantity.cmp(obs.available) > 0:
            out.append(t)
    return out


def same_threshold(a: Threshold, b: Threshold) -> bool:
    """``hasThreshold``'s equality: signal, operator, grace period and value (not min reclaim)."""
    if a.signal != b.signal or a.operator != b.operator or a.grace_period != b.grace_period:
        return False
    va, vb = a.value, b.value
    if va.quantity is not None and vb.quantity is not None:
        return va.quantity.cmp(vb.quantity) == 0
    if va.quantity is None and vb.quantity is None:
        return va.percentage == vb.percentage
    return False


def merge_thresholds(a: Iterable[Threshold], b: Iterable[Threshold]) -> list[Threshold]:
    out = list(a)
    for t in b:
        if not any(same_threshold(t, have) for have in out):
            out.append(t)
    return out


def by_eviction_priority(thresholds: Iterable[Threshold]) -> list[Threshold]:
    """``byEvictionPriority``: memory signals first, then those with a resource to reclaim."""
    def rank(t: Threshold) -> int:
        if t.signal in MEMORY_SIGNALS:
            return 0
        return 1 if t.signal in SIGNAL_TO_RESOURCE else 2

    return sorted(thresholds, key=rank)


def threshold_to_dict(t: Threshold) -> dict[str, Any]:
    return {"signal": t.signal, "operator": t.operator, "value": str(t.value), "gracePeriod": str(t.grace_period),
            "minReclaim": None if t.min_reclaim is None else str(t.min_reclaim)}
