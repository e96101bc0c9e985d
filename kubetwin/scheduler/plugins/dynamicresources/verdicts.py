"""DynamicResources Filter verdicts kept between scheduling cycles.

An allocation on one node reads only the claims' specs (and namespace), the device classes,
the node's labels and the pools usable from the node with their devices in use. Classes and
slices do not change while a scheduler runs, so a verdict for (claim specs, node) stays true
until a device of one of the node's pools is taken or freed — which a bind or a pod's end does
on one node at a time. Pods of one template share their claim specs: after the first pod, each
cycle re-runs the allocator only on the nodes whose devices changed since.

Positive outcomes are kept too (Score and Reserve read them); an outcome that drew a random
share ID (consumable capacity) is used for its own cycle only, since another pod would draw
another one.

Not an upstream module: a shortcut beside ``dynamicresources.go``'s Filter, which upstream runs every cycle."""

from __future__ import annotations

import json
import weakref
from typing import Any, Iterable, Sequence

import numpy as np


class ClaimVerdicts:
    """Verdicts for one claim-spec signature: per node, the node's device version they hold for."""

    __slots__ = ("seen", "fits", "outcomes", "lent", "read_to", "volatile")

    def __init__(self, n: int):
        self.seen = np.full(n, -1, dtype=np.int64)
        self.fits = np.zeros(n, dtype=bool)
        self.outcomes: list[Any] = [None] * n
        #: (epoch, position) in :attr:`VerdictCache.changes` this entry has caught up with
        #: (None: never, every node is read)
        self.read_to: tuple[int, int] | None = None
        #: some kept outcome is for its own cycle only (``seen`` -1): every node is read each time
        self.volatile = False
        #: the :class:`CycleResults` reading ``fits`` and ``outcomes`` in place, if it still exists
        self.lent: weakref.ref[CycleResults] | None = None

    def before_write(self) -> None:
        """``fits`` or ``outcomes`` are about to change: a cycle's results still reading them in
        place take their own copy first (a cycle's results never change under it)."""
        if self.lent is not None:
            results = self.lent()
            if results is not None:
                results.detach()
            self.lent = None


class VerdictCache:
    """Device versions per node (bumped when a device of a pool the node sees changes) and the
    verdicts per claim-spec signature, for a fixed list of nodes."""

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.version = np.zeros(len(self.names), dtype=np.int64)
        self.registered = np.zeros(len(self.names), dtype=bool)
        self._pool_nodes: dict[tuple[str, str], list[int]] = {}
        self._entries: dict[str, ClaimVerdicts] = {}
        #: the nodes whose version was bumped, in order (since :attr:`epoch` began)
        self.changes: list[int] = []
        self.epoch = 0

    def watch(self, i: int, pools: Iterable[Any]) -> None:
        """Node ``i`` allocates from ``pools`` (``Pool`` objects: driver and name)."""
        if self.registered[i]:
            return
        for p in pools:
            self._pool_nodes.setdefault((p.driver, p.name), []).append(i)
        self.registered[i] = True

    def devices_changed(self, devices: Iterable[Any]) -> None:
        """Devices (anything with ``driver`` and ``pool``) were taken or freed."""
        pools = {(d.driver, d.pool) for d in devices}
        version = self.version
        for pool in pools:
            nodes = self._pool_nodes.get(pool)
            if not nodes:
                continue
            if len(nodes) == 1:   # a node's own pool: no index array to build
                version[nodes[0]] += 1
            else:
                version[nodes] += 1
            self.changes.extend(nodes)

    def node_changed(self, name: str) -> None:
        """A node's labels changed: its pools are gathered again, its verdicts recomputed."""
        i = self.index.get(name)
        if i is None:
            return
        for nodes in self._pool_nodes.values():
            if i in nodes:
                nodes.remove(i)
        self.registered[i] = False
        self.version[i] += 1
        self.changes.append(i)

    def stale(self, entry: ClaimVerdicts) -> tuple[list[int], tuple[int, int]]:
        """The nodes whose verdict in ``entry`` is not for their current device version
        (``seen != version``), in node order, and the mark to store in ``entry.read_to`` once
        they are recomputed. Only the nodes bumped since the entry last caught up can be stale
        (unless it holds outcomes of one cycle, or never caught up): those are read, not all."""
        changes = self.changes
        if len(changes) > 4 * len(self.names) + 64:   # a new epoch: every entry reads all nodes once
            changes.clear()
            self.epoch += 1
        mark = (self.epoch, len(changes))
        got = entry.read_to
        if got is None or entry.volatile or got[0] != self.epoch or len(changes) - got[1] > len(self.names) // 8:
            return (entry.seen != self.version).nonzero()[0].tolist(), mark
        seen, version = entry.seen, self.version
        return sorted({i for i in changes[got[1]:] if seen[i] != version[i]}), mark

    def verdicts(self, signature: str) -> ClaimVerdicts:
        got = self._entries.get(signature)
        if got is None:
            if len(self._entries) > 1024:
                self._entries.clear()
            got = self._entries[signature] = ClaimVerdicts(len(self.names))
        return got


def claims_signature(namespace: str, claims: Sequence[Any]) -> str:
    """What an allocation reads from the claims: their namespace and specs (not their names).

    Claims from one template share one spec object, which nothing writes to: the text is kept
    per (namespace, spec objects), so it is written once per template, not once per pod."""
    specs = [(c.raw.get("spec") if isinstance(c.raw, dict) else None) for c in claims]
    key = (namespace, *map(id, specs))
    hit = _SIGNATURES.get(key)
    if hit is not None:
        for a, b in zip(hit[0], specs):
            if a is not b:
                break
        else:
            return hit[1]
    text = json.dumps([namespace, specs], sort_keys=True, default=str)
    if len(_SIGNATURES) > 4096:
        _SIGNATURES.clear()
    _SIGNATURES[key] = (specs, text)   # the specs kept alive: their ids stay theirs
    return text


_SIGNATURES: dict[tuple, tuple[list, str]] = {}


def reusable(outcome: Any) -> bool:
    """An outcome another pod with the same specs would get as well (no random share IDs)."""
    for res in outcome.results:
        for r in res.results:
            if r.share_id is not None:
                return False
    return True


class CycleResults:
    """This cycle's per-node Filter results, read from the verdict cache on demand (a dict of the
    nodes set explicitly, e.g. by preemption's dry runs, takes precedence).

    The verdicts are read in place, not copied: a copy of a list with one outcome per node
    touches every node's outcome twice per cycle (made, then freed). The entry hands its
    arrays over until it changes (:meth:`ClaimVerdicts.before_write`), when results still in
    use take their own copy."""

    __slots__ = ("pod_claims", "fits", "outcomes", "index", "make", "extra", "__weakref__")

    def __init__(self, pod_claims: Any, entry: ClaimVerdicts, index: dict[str, int], make: Any):
        entry.before_write()   # an earlier cycle's results on the same entry keep what they read
        self.pod_claims = pod_claims
        self.fits = entry.fits
        self.outcomes = entry.outcomes
        self.index = index
        self.make = make
        self.extra: dict[str, Any] = {}
        entry.lent = weakref.ref(self)

    def detach(self) -> None:
        """Keep a copy of the verdicts read so far (the entry is about to change)."""
        self.fits = self.fits.copy()
        self.outcomes = list(self.outcomes)

    def get(self, name: str, default: Any = None) -> Any:
        got = self.extra.get(name)
        if got is not None:
            return got
        i = self.index.get(name)
        if i is None or not self.fits[i]:
            return default
        return self.make(self.pod_claims, self.outcomes[i])

    def __setitem__(self, name: str, value: Any) -> None:
        self.extra[name] = value

    def __bool__(self) -> bool:
        return bool(self.extra) or bool(self.fits.any())
