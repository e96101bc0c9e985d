"""``PodTopologySpreadArgs`` (``kubescheduler.config.k8s.io/v1``), decoded strictly, defaulted
(``defaultingType`` System) and validated as kube-scheduler does (``ValidatePodTopologySpreadArgs``:
List defaulting for explicit constraints, each with a positive ``maxSkew``, a topology key, a
known ``whenUnsatisfiable``, no ``labelSelector``, no two alike)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ....errors import InputError
from ....model.meta import convert
from ....model.pod import TopologySpreadConstraint
from ....model.strict import STRING, Obj, list_of
from ...framework.args import args_spec, decode_args
from . import NAME

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
SYSTEM, LIST = "System", "List"

SYSTEM_DEFAULT_CONSTRAINTS = (
    TopologySpreadConstraint(max_skew=3, topology_key=HOSTNAME, when_unsatisfiable="ScheduleAnyway"),
    TopologySpreadConstraint(max_skew=5, topology_key=ZONE, when_unsatisfiable="ScheduleAnyway"),
)


@dataclass(frozen=True)
class PodTopologySpreadArgs:
    defaulting_type: str = SYSTEM
    default_constraints: tuple[TopologySpreadConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS


def _spec() -> Obj:
    from ....model.apischema import type_spec

    return args_spec(defaultingType=STRING,
                     defaultConstraints=list_of(type_spec("io.k8s.api.core.v1.TopologySpreadConstraint")))


def parse_pod_topology_spread_args(raw: Mapping[str, Any] | None, path: str = "",
                                   file: str | None = None) -> PodTopologySpreadArgs:
    # no args: nothing to check, and the API schema (about 7 ms to load) is not read for it
    args = {} if raw is None else decode_args(NAME, raw, _spec(), path, file)
    try:
        return _args(args, path + "." if path else "")
    except InputError as exc:
        raise exc.in_file(file) from None


def _args(raw: Mapping[str, Any], p: str) -> PodTopologySpreadArgs:
    dtype = raw.get("defaultingType") or SYSTEM
    if dtype not in (SYSTEM, LIST):
        raise InputError(f'Unsupported value: "{dtype}": supported values: "{LIST}", "{SYSTEM}"',
                         path=f"{p}defaultingType")
    items = raw.get("defaultConstraints") or []
    if dtype == SYSTEM:
        if items:
            raise InputError(f'Invalid value: "{SYSTEM}": when .defaultConstraints are not empty',
                             path=f"{p}defaultingType")
        return PodTopologySpreadArgs()
    cons: list[TopologySpreadConstraint] = []
    for i, c in enumerate(items):
        cp = f"{p}defaultConstraints[{i}]"
        tsc = convert(c, TopologySpreadConstraint, path=cp)
        if tsc.max_skew <= 0:
            raise InputError(f"Invalid value: {tsc.max_skew}: not in valid range (0, inf)", path=f"{cp}.maxSkew")
        if not tsc.topology_key:
            raise InputError("Required value: can not be empty", path=f"{cp}.topologyKey")
        if not tsc.when_unsatisfiable:
            raise InputError("Required value: can not be empty", path=f"{cp}.whenUnsatisfiable")
        if tsc.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            raise InputError(f'Unsupported value: "{tsc.when_unsatisfiable}": supported values: '
                             '"DoNotSchedule", "ScheduleAnyway"', path=f"{cp}.whenUnsatisfiable")
        if tsc.label_selector is not None:
            raise InputError("Forbidden: constraint must not define a selector, as they deduced for each pod",
                             path=f"{cp}.labelSelector")
        for other in cons:
            if other.topology_key == tsc.topology_key and other.when_unsatisfiable == tsc.when_unsatisfiable:
                raise InputError(f"Duplicate value: \"{{{tsc.topology_key}, {tsc.when_unsatisfiable}}}\"",
                                 path=f"{p}defaultConstraints[{i}]")
        cons.append(tsc)
    return PodTopologySpreadArgs(LIST, tuple(cons))
