"""What a plugin's vectorised twins return, and where the fast path finds them.

A plugin folder's ``vector`` module computes, with numpy over the cache's node columns
(:class:`~kubetwin.scheduler.backend.cache.ClusterState`), exactly what the plain plugin computes
node by node — the property tests compare both on random clusters — and declares it as one
:class:`Vectorised`: a Filter over all nodes (a :class:`FilterVerdict`), a Score over the scored
nodes (a :class:`ScoreVector`, or :data:`SKIPPED` where PreScore would say Skip), a PreFilter
that keeps its state in the arrays' terms, a known Skip, a one-node Filter read from the columns
(for kept verdicts), and a partner scored together with it. A function returns ``None`` when the
pod needs something the arrays do not model: the plugin then runs node by node.

Amounts are int64; ratios are formed in float64 in the same order of operations as the plugins,
so results are identical for amounts below 2**53. Not an upstream module: upstream has no fast
path (``pkg/scheduler/framework/plugins/*`` are the plain twins).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..framework.interface import MAX_NODE_SCORE, CycleState
from ..framework.status import Code, Status

if TYPE_CHECKING:
    from ...model.pod import Pod
    from ..backend.cache import ClusterState

U = np.int8(Code.Unschedulable)
UU = np.int8(Code.UnschedulableAndUnresolvable)


class FilterVerdict:
    """One plugin's Filter over all nodes: who fails, with which code and reasons.

    A successful cycle reads only ``fail``; codes and reasons matter only once no node fits.
    A plugin may therefore hand in ``explain`` instead of them: it computes
    ``(code, key, reasons_of)`` from the cluster as it is, so it must be called before the
    cluster changes — :meth:`settle` does that when a failure is recorded."""

    __slots__ = ("plugin", "fail", "_code", "_key", "_reasons_of", "_explain", "on_rejected")

    def __init__(self, plugin: str, fail: np.ndarray, code: np.ndarray | None = None, key: np.ndarray | None = None,
                 reasons_of: Callable[[int], tuple[str, ...]] | None = None, *,
                 explain: Callable[[], tuple[np.ndarray, np.ndarray | None, Callable[[int], tuple[str, ...]]]]
                 | None = None, on_rejected: Callable[[np.ndarray], None] | None = None):
        self.plugin = plugin
        self.fail = fail                  # bool[n]
        self._code = code                 # int8[n] (meaningful where fail)
        self._key = key                   # int64[n] reason key (None: one reason set for all)
        self._reasons_of = reasons_of
        self._explain = explain
        #: told the nodes (bool[n]) this Filter rejected among those the cycle filtered, for a
        #: plugin whose Filter leaves a trace (NodeResourceTopologyMatch marks its cache)
        self.on_rejected = on_rejected

    def settle(self) -> "FilterVerdict":
        """Codes and reasons computed now (from an ``explain``), while the cluster is as filtered."""
        if self._explain is not None:
            self._code, self._key, self._reasons_of = self._explain()
            self._explain = None
        return self

    @property
    def code(self) -> np.ndarray:
        code = self.settle()._code
        assert code is not None
        return code

    @property
    def key(self) -> np.ndarray | None:
        return self.settle()._key

    @property
    def reasons_of(self) -> Callable[[int], tuple[str, ...]]:
        reasons_of = self.settle()._reasons_of
        assert reasons_of is not None
        return reasons_of

    def status(self, i: int) -> Status:
        key = self.key
        k = 0 if key is None else int(key[i])
        return Status(Code(int(self.code[i])), self.reasons_of(k), self.plugin)


_CODE_ARRAYS: dict[tuple[int, int], np.ndarray] = {}


def codes(n: int, code: np.int8) -> np.ndarray:
    """A shared read-only array of one code (verdicts never write to it)."""
    arr = _CODE_ARRAYS.get((n, int(code)))
    if arr is None:
        arr = np.full(n, code, dtype=np.int8)
        arr.flags.writeable = False
        _CODE_ARRAYS[(n, int(code))] = arr
    return arr


_ONE_REASON: dict[str, Callable[[int], tuple[str, ...]]] = {}
#: verdicts that reject no node, shared (nothing changes a verdict once made): (plugin, code, reason) ->
#: the verdict over the shared all-False array it was made with
_NO_FAIL: dict[tuple[str, int, str], FilterVerdict] = {}


def single_reason(plugin: str, fail: np.ndarray, code: np.int8, reason: str) -> FilterVerdict:
    """A verdict whose failing nodes all share one code and one reason. One that rejects no
    node (``fail`` the cache's shared ``no_fail``, read-only) is made once and handed out again."""
    if not fail.flags.writeable:
        got = _NO_FAIL.get((plugin, int(code), reason))
        if got is not None and got.fail is fail:
            return got
    reasons_of = _ONE_REASON.get(reason)
    if reasons_of is None:
        reasons = (reason,)
        reasons_of = _ONE_REASON[reason] = lambda _k: reasons
    verdict = FilterVerdict(plugin, fail, codes(len(fail), code), None, reasons_of)
    if not fail.flags.writeable:
        if len(_NO_FAIL) > 64:
            _NO_FAIL.clear()
        _NO_FAIL[(plugin, int(code), reason)] = verdict
    return verdict


@dataclass
class ScoreVector:
    raw: np.ndarray
    normalized: np.ndarray


#: A vector score's answer when the plugin's PreScore would return Skip (or its score is the
#: same on every node, which moves every total alike and so changes no pick).
SKIPPED = ScoreVector(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def default_normalize(scores: np.ndarray, reverse: bool) -> np.ndarray:
    """``helper.DefaultNormalizeScore`` over the scored nodes."""
    mx = int(scores.max()) if len(scores) else 0
    if mx == 0:
        return np.full(len(scores), MAX_NODE_SCORE, dtype=np.int64) if reverse else scores.copy()
    s = MAX_NODE_SCORE * scores // mx
    return MAX_NODE_SCORE - s if reverse else s


FilterFn = Callable[["ClusterState", "Pod", Any, CycleState], "FilterVerdict | None"]
#: the nodes ``lo`` to ``hi`` (exclusive) a Filter rejects: a new boolean array of ``hi - lo`` (the caller may change it)
WindowFn = Callable[[int, int], np.ndarray]
#: a windowed Filter: ``(cluster, pod, plugin, state) -> WindowFn`` (None: use the whole-cluster Filter)
FilterWindowFn = Callable[["ClusterState", "Pod", Any, CycleState], "WindowFn | None"]
ScoreFn = Callable[["ClusterState", "Pod", Any, np.ndarray], "ScoreVector | None"]
#: together with a partner: (cluster, pod, (plugin, weight), (partner, weight), scored nodes) -> weighted totals
JointScoreFn = Callable[["ClusterState", "Pod", tuple[Any, int], tuple[Any, int], np.ndarray], "np.ndarray | None"]


@dataclass(frozen=True)
class Vectorised:
    """A plugin's vectorised twins; each answers exactly as the plugin does node by node."""

    #: Filter over every node (None from the function: run the plugin's Filter node by node)
    filter: FilterFn | None = None
    #: the same Filter over a window of nodes, for Filters that cost O(nodes) per cycle: the
    #: cycle then reads only as many nodes as it takes to find enough that fit. Its failures
    #: are exactly ``filter``'s on the window; where it answers None, ``filter`` is used
    filter_window: FilterWindowFn | None = None
    #: Score (after NormalizeScore) over the scored nodes; :data:`SKIPPED` for PreScore's Skip
    score: ScoreFn | None = None
    #: PreFilter in the arrays' terms: writes its state and returns its status, or None (run the plugin's)
    pre_filter: Callable[["ClusterState", "Pod", Any, CycleState], "Status | None"] | None = None
    #: PreFilter would Skip, known without running it (cheap; also re-checked by kept verdicts)
    pre_filter_is_skip: Callable[["ClusterState", "Pod", Any], bool] | None = None
    #: Filter on one node, read from the columns: ``(cluster, pod, plugin, state) -> (node -> status or None)``
    node_filter: Callable[["ClusterState", "Pod", Any, CycleState], Callable[[int], "Status | None"]] | None = None
    #: a plugin scored together with this one from one gather of the columns, and how
    score_with: tuple[str, JointScoreFn] | None = None


_OUT_OF_TREE: dict[str, Vectorised] = {}
_RESOLVED: dict[str, Vectorised | None] = {}


def register_vector_filter(plugin: str, fn: FilterFn) -> None:
    """An out-of-tree plugin's Filter over every node at once (it must answer exactly as the
    plugin's own ``filter`` node by node; None sends the pod through the per-node Filter)."""
    _OUT_OF_TREE[plugin] = Vectorised(filter=fn)
    _RESOLVED.pop(plugin, None)


def vectorised(name: str) -> Vectorised | None:
    """The twins of the plugin called ``name`` (in-tree from its folder, or registered)."""
    try:
        return _RESOLVED[name]
    except KeyError:
        pass
    got = _OUT_OF_TREE.get(name)
    if got is None:
        from ..plugins.registry import vectorised as in_tree

        got = in_tree(name)
    _RESOLVED[name] = got
    return got
