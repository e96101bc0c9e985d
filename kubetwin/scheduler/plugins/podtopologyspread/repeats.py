"""Repeated topology spread constraints held once, with their multiplicity where Score needs it.

Upstream walks a pod's constraints as written (``podtopologyspread/filtering.go`` ``Filter``,
``scoring.go`` ``Score``). The API server refuses a repeated (topologyKey, whenUnsatisfiable)
pair (``ValidateSpreadConstraintNotRepeat`` in ``pkg/apis/core/validation/validation.go``), but
the scheduler validates nothing, and kubetwin keeps pods the scheduler's own tests schedule (two
constraints on one key) — so a pod with 100,000 copies of one constraint reaches the plugin, and
cost 100,000 countings per node per cycle. Held once, the answers are unchanged:

- **Filter** (``DoNotSchedule``): each constraint is checked on its own against its own domain
  counts and the first one that fails gives the status; a copy has the same counts and verdict
  as its first occurrence, which is checked before it — so the first failing constraint, its
  reason and its code are the same with the copies dropped. PreFilter counts per constraint.
- **Score** (``ScheduleAnyway``): each constraint *adds* ``cnt * weight + maxSkew - 1`` to the
  node's float score, so copies are not dropped: the term is computed once per distinct
  constraint, then added in the order written (:func:`sequential_sum`), the same float
  additions in the same order as upstream's loop.

Identical means equal as encoded (a selector written in another key order is a distinct
constraint: a finer split, the same answers). ``ENABLED = False`` walks every copy (the plain
form, for tests).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import msgspec

from ....model.pod import TopologySpreadConstraint

if TYPE_CHECKING:   # numpy imported only where the sums run: the plain schedule path stays without it
    import numpy as np

#: hold identical constraints once (False: every copy, as written)
ENABLED = True

_ENCODE = msgspec.json.Encoder().encode
#: lists at least this long have their answer kept by identity (a pod is met again every cycle)
_CACHED_FROM = 64
_LONG: dict[tuple[int, str], tuple[Sequence[TopologySpreadConstraint],
                                   tuple[list[TopologySpreadConstraint], tuple[int, ...] | None]]] = {}


def held_once(written: Sequence[TopologySpreadConstraint],
              action: str) -> tuple[list[TopologySpreadConstraint], tuple[int, ...] | None]:
    """The constraints whose ``whenUnsatisfiable`` is ``action``, first occurrences in the order
    written, and — when some repeat — for each such constraint as written, the index of its
    first occurrence among them (None: none repeats, each is held once in order)."""
    if not ENABLED:
        return [c for c in written if c.when_unsatisfiable == action], None
    if len(written) < _CACHED_FROM:
        return _held_once(written, action)
    hit = _LONG.get((id(written), action))
    if hit is None or hit[0] is not written:
        if len(_LONG) >= 64:
            _LONG.clear()
        hit = _LONG[(id(written), action)] = (written, _held_once(written, action))   # the list held: its id kept
    distinct, order = hit[1]
    return list(distinct), order


def _held_once(written: Sequence[TopologySpreadConstraint],
               action: str) -> tuple[list[TopologySpreadConstraint], tuple[int, ...] | None]:
    index: dict[bytes, int] = {}
    distinct: list[TopologySpreadConstraint] = []
    order: list[int] = []
    for c in written:
        if c.when_unsatisfiable != action:
            continue
        k = _ENCODE(c)
        i = index.get(k)
        if i is None:
            i = index[k] = len(distinct)
            distinct.append(c)
        order.append(i)
    return distinct, (tuple(order) if len(order) != len(distinct) else None)


def sequential_sum(terms: Sequence[float | None], order: Sequence[int]) -> float:
    """``terms[j]`` for each ``j`` of ``order`` added left to right from 0.0, as upstream's
    ``score += scoreForCount(...)`` adds one constraint at a time (None: the node lacks the
    constraint's key, nothing added). ``cumsum`` adds sequentially (unlike ``sum``, which pairs);
    a None is added as 0.0, which leaves every sum here unchanged (no term is -0.0 or NaN)."""
    if not order:
        return 0.0
    import numpy as np

    values = np.array([0.0 if t is None else t for t in terms], dtype=np.float64)
    return float(np.cumsum(values[np.asarray(order, dtype=np.intp)])[-1])


#: rows added per step of :func:`sequential_sums` (bounds its temporary at rows x nodes)
_CHUNK_CELLS = 1 << 20


def sequential_sums(terms: Sequence[np.ndarray], order: Sequence[int]) -> np.ndarray:
    """:func:`sequential_sum` per node: ``terms[j]`` (one float per node, 0.0 where nothing is
    added) for each ``j`` of ``order``, added left to right from 0.0, node by node."""
    import numpy as np

    m = len(terms[0]) if terms else 0
    total = np.zeros(m, dtype=np.float64)
    if not order or not m:
        return total
    table = np.stack(terms)
    idx = np.asarray(order, dtype=np.intp)
    step = max(1, _CHUNK_CELLS // m)
    for lo in range(0, len(idx), step):
        rows = np.concatenate((total[None, :], table[idx[lo:lo + step]]))
        total = np.add.accumulate(rows, axis=0)[-1]
    return total
