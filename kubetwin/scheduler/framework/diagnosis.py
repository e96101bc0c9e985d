"""Why a pod fits no node: ``framework.Diagnosis`` and the ``FitError`` message
(``pkg/scheduler/framework/types.go``: ``Diagnosis``, ``FitError.Error``).

A :class:`Diagnosis` holds each node's first rejection, a PreFilter rejection that stands for
every node, the nodes a ``PreFilterResult`` left out, and the plugins whose PreFilter said
``Skip``. Nodes are numbered by their position in the cycle's node list (the cache's node-tree
order). The vectorised cycle (:mod:`..fastpath.cycle`) keeps whole-cluster verdicts in a
subclass with the same questions. :func:`fit_error_message` is the one place the message is
written.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping

from .status import Code, Status


def fit_error_message(num_nodes: int, histogram: Mapping[str, int], pre_filter_msg: str = "",
                      post_filter_msg: str = "") -> str:
    """``FitError.Error()``: ``0/N nodes are available:`` then PreFilter's message, or the
    reason histogram as ``"<count> <reason>"`` strings sorted as strings; then PostFilter's
    message (it brings its own full stop)."""
    text = f"0/{num_nodes} nodes are available:"
    if pre_filter_msg:
        text += f" {pre_filter_msg}."
    else:
        text += " " + ", ".join(sorted(f"{c} {r}" for r, c in histogram.items())) + "."
    if post_filter_msg:
        text += f" {post_filter_msg}"
    return text


def histogram_of(statuses: Iterable[Status]) -> Counter[str]:
    """Reason -> number of nodes that gave it."""
    hist: Counter[str] = Counter()
    for st in statuses:
        for r in st.reasons:
            hist[r] += 1
    return hist


class Diagnosis:
    """Which node failed which filter, with which status (``framework.Diagnosis``)."""

    def __init__(self, n: int):
        self.n = n
        #: node index -> its first rejection (``NodeToStatus``)
        self.node_to_status: dict[int, Status] = {}
        #: a PreFilter rejection: every node has it
        self.all_nodes: Status | None = None
        #: the status of nodes a PreFilterResult left out, and which those are
        self.absent: Status | None = None
        self.absent_nodes: frozenset[int] = frozenset()
        #: plugins whose PreFilter said Skip (their Filter does not run)
        self.skipped: set[str] = set()

    def status(self, i: int) -> Status | None:
        if self.all_nodes is not None:
            return self.all_nodes
        st = self.node_to_status.get(i)
        if st is not None:
            return st
        if i in self.absent_nodes:
            return self.absent
        return None

    def nodes_with_code(self, code: Code) -> list[int]:
        """``NodesForStatusCode``: the nodes rejected with ``code``, in node order."""
        out = []
        for i in range(self.n):
            st = self.status(i)
            if st is not None and st.code == code:
                out.append(i)
        return out

    def histogram(self) -> Counter[str]:
        if self.all_nodes is not None:
            return Counter({r: self.n for r in self.all_nodes.reasons})
        hist = histogram_of(self.node_to_status.values())
        if self.absent is not None and self.absent_nodes:
            for r in self.absent.reasons:
                hist[r] += len(self.absent_nodes)
        return hist

    def plugins(self) -> frozenset[str]:
        """The plugins that rejected the pod somewhere (``UnschedulablePlugins``)."""
        if self.all_nodes is not None:
            return frozenset({self.all_nodes.plugin})
        return frozenset(p for p in (st.plugin for st in self.node_to_status.values()) if p)
