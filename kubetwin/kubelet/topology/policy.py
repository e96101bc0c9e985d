"""Topology Manager policies: the hint merge they share and their options
(``pkg/kubelet/cm/topologymanager/policy.go``, ``policy_options.go``).

Every policy except ``none`` merges the providers' hints the same way; they differ in which
hints they consider (``single-numa-node`` keeps single-node preferred ones), in how they treat
an all-nodes result, and in whether a non-preferred result is admitted — one class per policy,
each in its own file (``policy_none.py``, ``policy_best_effort.py``, ``policy_restricted.py``,
``policy_single_numa_node.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Callable, ClassVar, Mapping, Sequence

from ...errors import InputError
from ...model.features import FeatureGates
from ..memo import SharedMemo
from .hint import ANY_NOT_PREFERRED, ANY_PREFERRED, TopologyHint
from .numa_info import NUMAInfo

NONE, BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE = "none", "best-effort", "restricted", "single-numa-node"
POLICIES = (NONE, BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE)

PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8

#: option -> (maturity, gate that unlocks it before GA); both are GA in v1.36.
_OPTIONS: dict[str, tuple[str, str | None]] = {
    PREFER_CLOSEST_NUMA_NODES: ("GA", None),
    MAX_ALLOWABLE_NUMA_NODES: ("GA", None),
}

#: One provider's answer: resource name -> hints (``None`` = no preference, ``[]`` = impossible).
ProviderHints = Mapping[str, "list[TopologyHint] | None"]


@dataclass(frozen=True)
class TopologyManagerOptions:
    prefer_closest_numa: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


_TRUE = {"1", "t", "T", "true", "TRUE", "True"}
_FALSE = {"0", "f", "F", "false", "FALSE", "False"}


def parse_go_bool(value: str, name: str, path: str) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise InputError(f'bad value for option "{name}": strconv.ParseBool: parsing "{value}": invalid syntax', path=path)


def parse_options(raw: Mapping[str, str], gates: FeatureGates | None = None,
                  path: str = "topologyManagerPolicyOptions") -> TopologyManagerOptions:
    prefer, max_nodes = False, DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name, value in raw.items():
        p = f"{path}.{name}"
        if name not in _OPTIONS:
            raise InputError(f'unknown Topology Manager Policy option: "{name}"', path=p)
        if name == PREFER_CLOSEST_NUMA_NODES:
            prefer = parse_go_bool(str(value), name, p)
        else:
            try:
                max_nodes = int(str(value), 10)
            except ValueError:
                raise InputError(f'unable to convert policy option to integer "{name}": strconv.Atoi: parsing '
                                 f'"{value}": invalid syntax', path=p) from None
            if max_nodes < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                raise InputError(f"the minimum value of \"{name}\" should not be less than "
                                 f"{DEFAULT_MAX_ALLOWABLE_NUMA_NODES}, value: {max_nodes}", path=p)
    return TopologyManagerOptions(prefer, max_nodes)


def _flatten(providers: Sequence[ProviderHints | None]) -> list[list[TopologyHint]]:
    """``filterProvidersHints``: one hint list per resource; missing answers become 'any'."""
    out: list[list[TopologyHint]] = []
    for hints in providers:
        if not hints:
            out.append([ANY_PREFERRED])
            continue
        for resource in sorted(hints):
            lst = hints[resource]
            if lst is None:
                out.append([ANY_PREFERRED])
            elif not lst:
                out.append([ANY_NOT_PREFERRED])
            else:
                out.append(list(lst))
    return out


def _best_non_preferred_count(lists: list[list[TopologyHint]]) -> int:
    best = 0
    for lst in lists:
        narrowest: int | None = None
        for h in lst:
            if h.affinity is None:
                continue
            a = h.affinity
            if narrowest is None or (a.bit_count(), a) < (narrowest.bit_count(), narrowest):
                narrowest = a
        if narrowest is not None and narrowest.bit_count() > best:
            best = narrowest.bit_count()
    return best


def merge_hints(lists: list[list[TopologyHint]], numa: NUMAInfo,
                fitter: Callable[[int, int], int]) -> TopologyHint:
    """``HintMerger.Merge``: the best AND over every permutation of one hint per resource."""
    default = numa.default_affinity
    best_np = _best_non_preferred_count(lists)
    best: TopologyHint | None = None
    for perm in product(*lists):
        preferred = True
        merged = default
        first: int | None = None
        for h in perm:
            if h.affinity is not None:
                if first is None:
                    first = h.affinity
                elif h.affinity != first:
                    preferred = False
                merged &= h.affinity
            if not h.preferred:
                preferred = False
        best = _compare(best, TopologyHint(merged, preferred), best_np, fitter)
    if best is None:
        return TopologyHint(default, False)
    return best


def _fitter_hint(cur: TopologyHint, cand: TopologyHint, fitter: Callable[[int, int], int]) -> TopologyHint:
    if cand.affinity == cur.affinity:
        return cur
    assert cur.affinity is not None and cand.affinity is not None   # merged hints always have a mask
    return cur if fitter(cur.affinity, cand.affinity) == cur.affinity else cand


def _compare(cur: TopologyHint | None, cand: TopologyHint, best_np: int,
             fitter: Callable[[int, int], int]) -> TopologyHint | None:
    assert cand.affinity is not None   # merged hints always have a mask
    cc = cand.affinity.bit_count()
    if cc == 0:
        return cur
    if cur is None:
        return cand
    if cand.preferred != cur.preferred:
        return cand if cand.preferred else cur
    if cur.preferred:
        return _fitter_hint(cur, cand, fitter)
    # both non-preferred: get as close as possible to best_np from below
    assert cur.affinity is not None
    cu = cur.affinity.bit_count()
    if cu > best_np:
        return _fitter_hint(cur, cand, fitter)
    if cu == best_np:
        if cc != best_np:
            return cur
        return _fitter_hint(cur, cand, fitter)
    if cc > best_np:
        return cur
    if cc == best_np:
        return cand
    if cc > cu:
        return cand
    if cc < cu:
        return cur
    return _fitter_hint(cur, cand, fitter)


@dataclass(frozen=True)
class Policy:
    """A Topology Manager policy: the hint merge every policy but ``none`` shares
    (``HintMerger.Merge``); each policy (one class per file, ``policy_<name>.py``) says which hints
    it considers, which NUMA fitter breaks ties, and whether the merged hint is admitted."""

    name: ClassVar[str] = ""
    numa: NUMAInfo
    options: TopologyManagerOptions = TopologyManagerOptions()
    #: merged answers per providers' hints: a pure function of the hints and this policy
    memo: SharedMemo = field(default_factory=SharedMemo, compare=False, repr=False)

    def fitter(self) -> Callable[[int, int], int]:
        """``prefer-closest-numa-nodes`` picks the closest of equally narrow masks."""
        if self.options.prefer_closest_numa:
            return self.numa.closest
        return self.numa.narrowest

    def merge(self, providers: Sequence[ProviderHints | None]) -> tuple[TopologyHint, bool]:
        """The merged hint and whether the pod (or container) is admitted with it."""
        lists = _flatten(providers)
        key = tuple(map(tuple, lists))
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo.put(key, self._merge(lists))
        return hit

    def _merge(self, lists: list[list[TopologyHint]]) -> tuple[TopologyHint, bool]:
        best = merge_hints(self.considered(lists), self.numa, self.fitter())
        return self.admit(best)

    def considered(self, lists: list[list[TopologyHint]]) -> list[list[TopologyHint]]:
        """The hints this policy merges (all of them)."""
        return lists

    def admit(self, best: TopologyHint) -> tuple[TopologyHint, bool]:
        """The merged hint as stored, and whether it is admitted: only a preferred one."""
        return best, best.preferred


def new_policy(name: str, numa: NUMAInfo, options: TopologyManagerOptions = TopologyManagerOptions(),
               path: str = "topologyManagerPolicy") -> Policy:
    """The policy called ``name`` (``NewManager``'s switch), checked against the machine."""
    from .policy_best_effort import BestEffortPolicy
    from .policy_none import NonePolicy
    from .policy_restricted import RestrictedPolicy
    from .policy_single_numa_node import SingleNumaNodePolicy

    classes: dict[str, type[Policy]] = {c.name: c for c in (NonePolicy, BestEffortPolicy, RestrictedPolicy,
                                                            SingleNumaNodePolicy)}
    cls = classes.get(name)
    if cls is None:
        raise InputError(f'unknown policy: "{name}"', path=path, fix=f"use one of {', '.join(POLICIES)}")
    if name != NONE and len(numa.nodes) > options.max_allowable_numa_nodes:
        raise InputError(f"unsupported on machines with more than {options.max_allowable_numa_nodes} NUMA Nodes",
                         path=path, fix=f"set topologyManagerPolicyOptions.{MAX_ALLOWABLE_NUMA_NODES}")
    return cls(numa, options)
