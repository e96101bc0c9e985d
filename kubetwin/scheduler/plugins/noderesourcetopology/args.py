"""``NodeResourceTopologyMatchArgs`` (scheduler-plugins v0.34.7 ``apis/config/v1``), decoded strictly.

The scoring strategy and its resource weights; the NRT cache (:mod:`.cache`):
``discardReservedNodes``, ``cacheResyncPeriodSeconds`` and ``cache`` (``resyncMethod``,
``informerMode``, ``foreignPodsDetect``, ``resyncScope``, defaulted as ``SetDefaults`` does).
Upstream takes any string for the ``cache`` enums; kubetwin refuses a value outside them (a
misspelt mode would otherwise act as another one). ``foreignPodsDetect`` and ``resyncScope``
are accepted: kubetwin's cluster has one scheduler and NRT attributes that never change, so
neither has anything to act on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ....errors import InputError
from ....model.strict import BOOLEAN, INTEGER, STRING, list_of, obj, unknown_key_error
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
    cache_resync_period_seconds: int = 0
    discard_reserved_nodes: bool = False
    resync_method: str = "Autodetect"
    informer_mode: str = "Dedicated"
    foreign_pods_detect: str = "All"
    resync_scope: str = "All"

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
    from .cache import FOREIGN_PODS_DETECT, INFORMER_MODES, RESYNC_METHODS, RESYNC_SCOPES

    cache = args.get("cache") or {}
    modes = {}
    for key, valid, default in (("resyncMethod", RESYNC_METHODS, "Autodetect"),
                                ("informerMode", INFORMER_MODES, "Dedicated"),
                                ("foreignPodsDetect", FOREIGN_PODS_DETECT, "All"),
                                ("resyncScope", RESYNC_SCOPES, "All")):
        value = cache.get(key) or default
        if value not in valid:
            raise unknown_key_error(str(value), valid, path=f"{p}cache.{key}", file=file, what=f"cache {key}")
        modes[key] = value
    return NodeResourceTopologyMatchArgs(
        stype, tuple(weights), int(args.get("cacheResyncPeriodSeconds") or 0), bool(args.get("discardReservedNodes")),
        modes["resyncMethod"], modes["informerMode"], modes["foreignPodsDetect"], modes["resyncScope"])
