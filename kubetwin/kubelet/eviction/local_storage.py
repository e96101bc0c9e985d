"""Local ephemeral storage limits (``localStorageEviction``): a pod over an emptyDir sizeLimit,
over its containers' total ephemeral-storage limit, or with a container over its own limit is
evicted at once — whatever the thresholds say, and before threshold eviction in the same run.

Upstream: ``localStorageEviction`` and its helpers in ``pkg/kubelet/eviction/eviction_manager.go``."""

from __future__ import annotations

from ...model.pod import Pod
from ...model.quantity import BINARY_SI, Quantity
from ...model.resources import pod_limits
from ...model.summary import PodStats
from .messages import CONTAINER_EPHEMERAL_FMT, EMPTY_DIR_FMT, POD_EPHEMERAL_FMT, go_quote

EPHEMERAL_STORAGE = "ephemeral-storage"


def empty_dir_violation(pod: Pod, stats: PodStats) -> str | None:
    """An emptyDir (any medium) using more than a positive ``sizeLimit``."""
    used = {v.name: v.used_bytes for v in stats.volume_stats if v.used_bytes is not None}
    for v in pod.spec.volumes:
        if v.empty_dir is None or v.empty_dir.size_limit is None:
            continue
        size = v.empty_dir.size_limit
        u = used.get(v.name)
        if u is not None and size.sign() > 0 and Quantity(u, 0, BINARY_SI).cmp(size) > 0:
            return EMPTY_DIR_FMT.format(go_quote(v.name), go_quote(str(size)))
    return None


def pod_ephemeral_storage_violation(pod: Pod, stats: PodStats) -> str | None:
    """The pod's measured ephemeral storage above ``PodLimits`` (only when some container has a limit)."""
    limit = pod_limits(pod).get(EPHEMERAL_STORAGE)
    if limit is None:
        return None
    es = stats.ephemeral_storage
    used = es.used_bytes if es is not None and es.used_bytes is not None else 0
    if Quantity(used, 0, BINARY_SI).cmp(limit) > 0:
        return POD_EPHEMERAL_FMT.format(limit)
    return None


def container_ephemeral_storage_violation(pod: Pod, stats: PodStats, dedicated_image_fs: bool) -> str | None:
    """An app container's logs (plus its writable layer, unless that lives on a dedicated
    imagefs) above its non-zero ephemeral-storage limit."""
    limits = {c.name: q for c in pod.spec.containers
              if (q := c.resources.limits.get(EPHEMERAL_STORAGE)) is not None and q.value() != 0}
    for cs in stats.containers:
        used = (cs.logs.used_bytes or 0) if cs.logs is not None else 0
        if not dedicated_image_fs and cs.rootfs is not None:
            used += cs.rootfs.used_bytes or 0
        limit = limits.get(cs.name)
        if limit is not None and limit.cmp(Quantity(used, 0, BINARY_SI)) < 0:
            return CONTAINER_EPHEMERAL_FMT.format(cs.name, go_quote(str(limit)))
    return None


def local_storage_violation(pod: Pod, stats: PodStats, dedicated_image_fs: bool) -> str | None:
    """The first limit the pod breaks, in the kubelet's order, as the eviction message."""
    return (empty_dir_violation(pod, stats) or pod_ephemeral_storage_violation(pod, stats)
            or container_ephemeral_storage_violation(pod, stats, dedicated_image_fs))
