"""``NodeResourceTopologyMatchArgs`` (scheduler-plugins ``apis/config/v1``), decoded strictly.

The scoring strategy and its resource weights are modelled. The overreserve cache
(``cacheResyncPeriodSeconds``, ``cache``) and ``discardReservedNodes`` concern pods reserved but
not yet reported by the node agent, which a snapshot does not have: setting them is reported as
not modelled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ....diagnostics import not_modelled
from ....errors import InputError
from ....model.strict import BOOLEAN, INTEGER, STRING, list_of, obj
from ...framework.args import args_spec, decode_args
from . import NAME

STRATEGIES = ("MostAllocated", "LeastAllocated", "BalancedAllocation", "LeastNUMANodes")
SPEC = args_spec(
    scoringStrategy=obj(type=STRING, resources=list_of(obj(name=STRING, weight=INTEGER))),
    cacheResyncPeriodSeconds=INTEGER, discardReservedNodes=BOOLEAN,
    cache=obj(foreignPodsDetect=STRING, resyncMethod=STRING, informerMode=STRING, resyncScope=STRING))


@dataclass(frozen=True)
class NodeResourceTopologyMatchArgs:
    strategy: str = "LeastAllocated"
    weights: tuple[tuple[str, int], ...] = ()

    def weight(self, name: str) -> int:
        for n, w in self.weights:
            if n == name:
                return w if w >= 1 else 1
        return 1


def parse_node_resource_topology_match_args(raw: Mapping[str, Any] | None, path: str = "",
                                            file: str | None = None) -> NodeResourceTopologyMatchArgs:
    args = decode_args(NAME, raw, SPEC, path, file)
    p = path + "." if path else ""
    strategy = args.get("scoringStrategy") or {}
    stype = strategy.get("type") or "LeastAllocated"
    if stype not in STRATEGIES:
        raise InputError(f'Unsupported value: "{stype}": supported values: {", ".join(STRATEGIES)}',
                         path=f"{p}scoringStrategy.type", file=file)
    weights = []
    for i, r in enumerate(strategy.get("resources") or []):
        if not r.get("name"):
            raise InputError("Required value: name", path=f"{p}scoringStrategy.resources[{i}].name", file=file)
        weights.append((str(r["name"]), int(r.get("weight") or 1)))
    if args.get("cacheResyncPeriodSeconds"):
        not_modelled(f"{p}cacheResyncPeriodSeconds", file=file, why="no overreserve cache: NRT objects are read as given")
    if args.get("discardReservedNodes"):
        not_modelled(f"{p}discardReservedNodes", file=file, why="no pods are reserved but unreported")
    if args.get("cache"):
        not_modelled(f"{p}cache", file=file, why="no overreserve cache: NRT objects are read as given")
    return NodeResourceTopologyMatchArgs(stype, tuple(weights))
