"""The StatefulSet controller's decisions: which ordinals to create and which to delete, now.

Models Kubernetes v1.36 ``pkg/controller/statefulset`` (read, not copied):

* ``stateful_set_utils.go`` — ``getParentNameAndOrdinal`` (the name's ``(.*)-([0-9]+)$``, the
  ordinal an int32), ``getStartOrdinal``/``getEndOrdinal`` (``spec.ordinals.start``; the
  ``StatefulSetStartOrdinal`` gate is GA and locked on in every release kubetwin models),
  ``podInOrdinalRange``, ``newStatefulSetPod``/``initIdentity`` (name ``<set>-<ordinal>``, the
  labels ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` — the
  ``PodIndexLabel`` gate is GA — and ``controller-revision-hash``), ``allowsBurst``
  (``podManagementPolicy: Parallel``), ``isRunningAndReady``, ``isRunningAndAvailable``
  (``podutil.IsPodAvailable``: Ready for *more than* ``minReadySeconds``);
* ``stateful_set_control.go`` — ``updateStatefulSet``'s scaling part: the pods split into
  ``replicas`` (ordinals in range, a missing one is created) and ``condemned`` (out of range,
  highest ordinal first); ``processReplica`` over the replicas, then ``processCondemned``, each
  through ``runForAll``: in ``OrderedReady`` (monotonic) mode the first blocking step ends the
  sync — a pod is created only when every lower ordinal is Running, Ready and Available, and one
  pod is deleted per sync, the highest ordinal, only when all the others are (the first
  unavailable pod may go); in ``Parallel`` (burst) mode every missing pod is created and every
  condemned pod deleted at once;
* ``stateful_set.go`` — ``syncStatefulSet`` requeues the set ``minReadySeconds`` later while
  fewer pods are available than ``spec.replicas``.

What the simulation does not need: a failed or succeeded pod (evicted, OOM-killed, rejected by
its kubelet) has left the simulation's pod list when its owner syncs — the controller's delete
of it is that — so the next sync creates its ordinal again under the same name. Pods terminate
at once (no graceful deletion), so ``isTerminating`` never holds. Rolling updates
(``updateStrategy``) need a template change, which the simulation never makes (the VPA changes
pods, not the template); a set whose ``status`` shows an update under way is reported as not
modelled (:mod:`kubetwin.model.unmodelled`), as are ``volumeClaimTemplates`` and
``persistentVolumeClaimRetentionPolicy`` (no PersistentVolumeClaims are simulated).

Immutable data in (the set's spec, its pods as the controller sees them), a decision out.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
ORDERED_READY, PARALLEL = "OrderedReady", "Parallel"

_STATEFUL_POD = re.compile(r"(.*)-([0-9]+)$", re.DOTALL)
_INT32_MAX = 2**31 - 1
#: ``k8s.io/apimachinery/pkg/util/rand``'s SafeEncodeString alphabet (no vowels, no look-alikes)
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def parent_and_ordinal(pod_name: str) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: ("", -1) for a name without ``-<digits>`` at its end; the
    parent with -1 when the digits are no int32."""
    m = _STATEFUL_POD.match(pod_name)
    if m is None:
        return "", -1
    digits = m.group(2)
    ordinal = int(digits) if len(digits) <= 10 and int(digits) <= _INT32_MAX else -1
    return m.group(1), ordinal


def pod_name(set_name: str, ordinal: int) -> str:
    """``getPodName``."""
    return f"{set_name}-{ordinal}"


@dataclass(frozen=True)
class StatefulSetSpec:
    """What the controller reads of a checked ``apps/v1`` StatefulSet."""

    name: str
    namespace: str
    uid: str
    start: int = 0                     # spec.ordinals.start
    policy: str = ORDERED_READY        # spec.podManagementPolicy
    min_ready_seconds: float = 0.0     # spec.minReadySeconds
    service_name: str = ""
    revision: str = ""                 # the update revision's name: the pods' controller-revision-hash

    @property
    def monotonic(self) -> bool:
        """``!allowsBurst(set)``."""
        return self.policy != PARALLEL

    def in_range(self, ordinal: int, replicas: int) -> bool:
        """``podInOrdinalRange``."""
        return self.start <= ordinal < self.start + replicas

    def labels(self, ordinal: int) -> dict[str, str]:
        """The labels ``newVersionedStatefulSetPod`` adds to the template's."""
        return {POD_NAME_LABEL: pod_name(self.name, ordinal), POD_INDEX_LABEL: str(ordinal),
                REVISION_LABEL: self.revision}


def revision_name(set_name: str, template: Mapping[str, Any]) -> str:
    """The update revision's name, ``<set>-<hash>``. Upstream hashes the ControllerRevision's
    data with ``controller.ComputeHash`` (FNV-32a over Go's printing of the object), which only Go
    reproduces; kubetwin's stand-in hashes the template's JSON and encodes it with the same
    alphabet. The value is only a label: neither scheduler nor kubelet reads it. A snapshot's set
    keeps its ``status.updateRevision``."""
    import msgspec

    digest = hashlib.blake2s(msgspec.json.encode(dict(template), order="sorted"), digest_size=8).digest()
    n = int.from_bytes(digest, "big")
    out = []
    for _ in range(10):
        n, r = divmod(n, len(_SAFE))
        out.append(_SAFE[r])
    return f"{set_name}-{''.join(out)}"


_POLICIES = (ORDERED_READY, PARALLEL)
_UPDATE_STRATEGIES = ("RollingUpdate", "OnDelete")


def check_statefulset(obj: Mapping[str, Any]) -> None:
    """The values ``ValidateStatefulSetSpec`` refuses that strict decoding lets through (the
    policies' names, negative counts), in the API server's words."""
    from ..errors import InputError

    spec = obj.get("spec") or {}
    policy = spec.get("podManagementPolicy")
    if policy is not None and policy not in _POLICIES:
        raise InputError(f'Unsupported value: "{policy}": supported values: "OrderedReady", "Parallel"',
                         path="spec.podManagementPolicy")
    kind = (spec.get("updateStrategy") or {}).get("type")
    if kind is not None and kind not in _UPDATE_STRATEGIES:
        raise InputError(f'Unsupported value: "{kind}": supported values: "OnDelete", "RollingUpdate"',
                         path="spec.updateStrategy.type")
    for path, value in (("spec.minReadySeconds", spec.get("minReadySeconds")),
                        ("spec.ordinals.start", (spec.get("ordinals") or {}).get("start"))):
        if value is not None and value < 0:
            raise InputError(f"Invalid value: {value}: must be greater than or equal to 0", path=path)


def statefulset_spec(obj: Mapping[str, Any]) -> StatefulSetSpec:
    """The spec of a StatefulSet the API server accepted (strictly decoded and
    :func:`check_statefulset` before)."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    name = str(meta.get("name", ""))
    ns = str(meta.get("namespace") or "default")
    revision = status.get("updateRevision") or revision_name(name, spec.get("template") or {})
    return StatefulSetSpec(name, ns, str(meta.get("uid") or f"StatefulSet/{ns}/{name}"),
                           int((spec.get("ordinals") or {}).get("start") or 0),
                           str(spec.get("podManagementPolicy") or ORDERED_READY),
                           float(spec.get("minReadySeconds") or 0), str(spec.get("serviceName") or ""),
                           str(revision))


class Member(NamedTuple):
    """One live pod of the set as the controller sees it (a tuple: one is built per pod per sync)."""

    ordinal: int
    running: bool = False     # phase Running, and so Ready: no readiness probes are simulated
    ready_since: float = 0.0  # the Ready condition's lastTransitionTime


def available(m: Member | None, min_ready_seconds: float, now: float) -> bool:
    """``isRunningAndAvailable``: Running and Ready, for more than ``minReadySeconds``."""
    if m is None or not m.running:
        return False
    return min_ready_seconds == 0 or m.ready_since + min_ready_seconds < now


@dataclass(frozen=True)
class Sync:
    """One ``updateStatefulSet``'s actions, in the order the controller takes them."""

    create: tuple[int, ...] = ()
    delete: tuple[int, ...] = ()
    #: ``enqueueSSAfter(set, minReadySeconds)``: when to sync again, None: only on a pod's change
    requeue_at: float | None = None


def sync(spec: StatefulSetSpec, replicas: int, members: Mapping[int, Member], now: float) -> Sync:
    """What ``updateStatefulSet`` does to a set of ``replicas`` whose live pods are ``members``
    (by ordinal; pods whose name gives no ordinal are ignored, as upstream ignores them)."""
    ready_gap = spec.min_ready_seconds
    monotonic = spec.monotonic
    create: list[int] = []
    delete: list[int] = []
    blocked = False
    start, end = spec.start, spec.start + replicas
    get = members.get
    # processReplica over [start, end), ascending; a missing pod is created
    for ordinal in range(start, end):
        m = get(ordinal)
        if m is None:
            create.append(ordinal)
            if monotonic:   # "if the set does not allow bursting, return immediately"
                blocked = True
                break
            continue
        # not Running and Ready, or not Available (isRunningAndAvailable, inlined: the hot loop)
        if monotonic and not (m.running and (ready_gap == 0 or m.ready_since + ready_gap < now)):
            blocked = True
            break
    if not blocked:
        condemned = sorted((o for o in members if o >= 0 and (o < start or o >= end)), reverse=True)
        # the first unavailable pod: replicas ascending, then condemned from the lowest ordinal;
        # only monotonic mode reads it, and there every replica is available once we are here
        first_unavailable = None
        if monotonic:
            first_unavailable = next((o for o in reversed(condemned)
                                      if not available(members[o], ready_gap, now)), None)
        for ordinal in condemned:   # processCondemned, highest ordinal first
            if monotonic and not available(members[ordinal], ready_gap, now) and ordinal != first_unavailable:
                break
            delete.append(ordinal)
            if monotonic:   # one deletion per sync
                break
    requeue = None
    if ready_gap > 0:
        after = {o: m for o, m in members.items() if o not in delete}
        avail = sum(1 for o in range(spec.start, spec.start + replicas) if available(after.get(o), ready_gap, now))
        # upstream requeues while availableReplicas != replicas; only a Running pod that is not yet
        # available can change by the clock alone (any other change is a pod event of its own)
        if avail != replicas and any(m.running and not available(m, ready_gap, now) for m in after.values()):
            requeue = now + ready_gap
    return Sync(tuple(create), tuple(delete), requeue)
