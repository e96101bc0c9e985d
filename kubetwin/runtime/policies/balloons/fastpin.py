"""A fast path for the balloons policy's pinning: texts once per balloon, not per container.

Upstream's ``updatePinning`` pins every container of each balloon whose CPUs or shared idle CPUs
changed (``pinCpuMem``: ``SetCpusetCpus``, ``SetCPUShares``, then ``allocMem`` and
``SetCpusetMems``) — in ``simulate``'s workload about four containers per creation, most of
them in the shared balloons whose idle CPUs shrank. The plain code (:meth:`.policy.BalloonsPolicy._update_pinning`)
works each container out on its own; here, per balloon, the pinnable CPUs, their local memory
nodes and the cpuset text (and the one-thread-per-core text, when a container hides
hyperthreads) are made once, and each container still gets every call the plain code makes,
in the same order with the same values (upstream marks each one pending, changed or not):

* a pod without annotations takes the balloon type's hyperthread setting, memory not preserved
  and the balloon's memory types (what :meth:`.fast.FastBalloonsPolicy._pin_options` answers);
* a container whose memory is already allocated and whose zone holds the balloon's memory
  nodes (no memory types asked) keeps its zone: ``Realloc`` returns it at once and moves
  nothing, so it is read here without the call; any other case goes through the plain
  :meth:`~.policy.BalloonsPolicy._alloc_mem`;
* CPU shares by request, remembered (a pure function).

``ENABLED`` (False: the plain per-container loop) is for equivalence tests and A/B runs;
``tests/runtime/policies/balloons/test_fastpin.py`` holds the NRI events, containers, pools and
exports of random runs equal with it off.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/balloons/policy/balloons-policy.go`` (``updatePinning``, ``pinCpuMem``,
``allocMem``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....model.cpuset import CPUSet
from ...kubernetes import milli_cpu_to_shares
from .policy import _error

if TYPE_CHECKING:
    from .fast import FastBalloonsPolicy
    from .policy import Balloon

#: pin with this module (False: the plain per-container loop, for A/B runs and tests)
ENABLED = True

_SHARES: dict[int, int] = {}


def shares(milli: int) -> int:
    """``milli_cpu_to_shares(milli)``, remembered."""
    got = _SHARES.get(milli)
    if got is None:
        if len(_SHARES) > 4096:
            _SHARES.clear()
        got = _SHARES[milli] = milli_cpu_to_shares(milli)
    return got


def update_pinning(p: "FastBalloonsPolicy", blns: "list[Balloon]") -> None:
    """``p._update_pinning(blns)`` of the plain policy: the same calls on the same containers,
    in the same order, with the same values."""
    texts = p.machine_texts
    lookup = p.cache.containers.get
    pin_cpu = p.pin_cpu
    alloc = p.mem_allocator
    users, requests = alloc.users, alloc.requests
    for bln in blns:
        pinnable = CPUSet.from_mask(bln.cpus.mask | bln.shared_idle_cpus.mask)
        mems = bln.mems = p._closest_mems(pinnable)
        defn = bln.defn
        pin_mem = p.pin_memory if defn.pin_memory is None else defn.pin_memory
        hide = bool(defn.hide_hyperthreads)
        text = texts.text(pinnable) if pin_cpu else ""
        single_text = ""
        for ids in bln.pod_ids.values():
            for cid in ids:
                c = lookup(cid)
                if c is None:
                    continue
                if c.pod.annotations:
                    single, preserve, types = p._pin_options(c, bln)
                else:
                    single, preserve, types = hide, False, 0
                if pin_cpu:
                    if single:
                        if not single_text:
                            single_text = texts.text(p._single_threads(pinnable))
                        c.set_cpuset_cpus(single_text)
                    else:
                        c.set_cpuset_cpus(text)
                    req = c.resource_requirements().cpu_request
                    if req is not None:
                        c.set_cpu_shares(shares(req))
                if not pin_mem:
                    continue
                if preserve:
                    raise _error(f"{c.pretty_name()}: memory.preserve is not modelled by kubetwin's balloons policy")
                held = requests.get(cid) if types == 0 and users.get(cid) is not None else None
                if held is not None and (mems == 0 or held.zone & mems == mems
                                         or (held.affinity == mems and held.types == 0)):
                    zone = held.zone   # ``Realloc`` answers at once: nothing to widen
                else:
                    zone = p._alloc_mem(c, mems, types)
                c.set_cpuset_mems(texts.memset(zone))
