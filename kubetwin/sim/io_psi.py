"""I/O stalls on a simulated node: containers contending for the node's disk.

A node group's ``disk.ioBandwidth`` is the bytes per second its disk serves; a pod's ``io`` curve
(:mod:`.usage`) the bytes per second a container wants to read and write. At each sample the
disk is split among the containers that want it as the kernel's I/O controller splits a
saturated device by ``io.weight`` (the same water-filling as CFS, :func:`kubetwin.sim.cfs.fair_share`):
each gets at most ``bandwidth × weight / Σ weight`` of the still hungry, what one does not want
goes to the others. Every container has the cgroup v2 default ``io.weight`` of 100: the kubelet
writes none, and the runtime writes one (or ``io.max``) only for a goresctrl Block I/O class
(:mod:`kubetwin.runtime.blockio`) — so the split is even, unless the node group has a Block I/O
configuration: then :mod:`.blockio` splits the disk by each container's class (weights, ``io.max``).

Pressure (``kernel/sched/psi.c``: a task waiting for I/O is in ``TSK_IOWAIT``, ``PSI_IO_SOME`` /
``PSI_IO_FULL``):

* a container's ``some`` = the share of the I/O it wanted and did not get (its tasks wait for the
  device that long);
* its ``full`` = ``some``: the model has no tasks, so the tasks doing I/O are taken to be all of
  the container's — an upper bound (a container that also computes while it waits has less);
* a pod reports its worst container, the node its worst pod for ``some``; the node's ``full`` is
  the share in which every running container of the node waits: the smallest share when all of
  them want I/O, else 0.

Approximations, stated: one device per node (a dedicated imagefs is not a second I/O device
here), bytes only (no IOPS, no request sizes, no read/write asymmetry, no page cache absorbing
writes), and a steady rate between samples as for CPU.

Not an upstream module: kubetwin's own contention model feeding the kernel's averages
(:mod:`.psi`, :mod:`.stall_psi`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cfs import fair_share
from .stall_psi import Stall

if TYPE_CHECKING:
    from .loop import SimPod

#: cgroup v2 ``io.weight`` default (``CGROUP_WEIGHT_DFL``)
IO_WEIGHT_DEFAULT = 100


def io_wants(rows: list["SimPod"], t: float) -> list[tuple["SimPod", str, float]]:
    """(pod, container, bytes/s wanted) of every running container with an ``io`` curve, and
    ``0`` for the others (they run, so they count against the node's ``full``)."""
    from .usage import _pick, curve_containers

    out = []
    for sp in rows:
        u = sp.usage
        for c, lead in curve_containers(sp.pod):
            curve = _pick(u.io, c.name, lead) if u is not None and u.io else None
            out.append((sp, c.name, float(curve.at(t - sp.origin)) if curve is not None else 0.0))
    return out


def io_stalls(bandwidth: int, wants: list[tuple["SimPod", str, float]]) -> tuple[list[Stall], float]:
    """Every stalled container of one node and the node-wide full share."""
    amounts = [w for _, _, w in wants]
    if sum(amounts) <= bandwidth:
        return [], 0.0
    got = fair_share(float(bandwidth), amounts, [float(IO_WEIGHT_DEFAULT)] * len(amounts))
    out: list[Stall] = []
    shares = []
    for (sp, name, want), g in zip(wants, got):
        share = max(0.0, min(1.0, 1.0 - g / want)) if want > 0 else 0.0
        shares.append(share if want > 0 else 0.0)
        if share > 0:
            out.append(Stall(sp.pod.key, sp.pod.uid, name, share, share,
                             f"disk of {bandwidth} B/s contended: wanted {want:.0f} B/s, got {g:.0f}"))
    full = min(shares) if shares and all(w > 0 for w in amounts) else 0.0
    return out, full
