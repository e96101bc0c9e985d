"""Static policy options, their maturity and their incompatibilities (``policy_options.go``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ...errors import InputError
from ...model.features import FeatureGates
from ..topology.policy import parse_go_bool

FULL_PCPUS_ONLY = "full-pcpus-only"
DISTRIBUTE_CPUS_ACROSS_NUMA = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET = "align-by-socket"
DISTRIBUTE_CPUS_ACROSS_CORES = "distribute-cpus-across-cores"
STRICT_CPU_RESERVATION = "strict-cpu-reservation"
PREFER_ALIGN_BY_UNCORECACHE = "prefer-align-cpus-by-uncorecache"

#: option -> maturity in Kubernetes v1.36.
MATURITY: dict[str, str] = {
    FULL_PCPUS_ONLY: "GA",
    DISTRIBUTE_CPUS_ACROSS_NUMA: "BETA",
    ALIGN_BY_SOCKET: "ALPHA",
    DISTRIBUTE_CPUS_ACROSS_CORES: "ALPHA",
    STRICT_CPU_RESERVATION: "BETA",
    PREFER_ALIGN_BY_UNCORECACHE: "BETA",
}

_INCOMPATIBLE = (
    (FULL_PCPUS_ONLY, DISTRIBUTE_CPUS_ACROSS_CORES),
    (DISTRIBUTE_CPUS_ACROSS_NUMA, DISTRIBUTE_CPUS_ACROSS_CORES),
    (PREFER_ALIGN_BY_UNCORECACHE, DISTRIBUTE_CPUS_ACROSS_CORES),
    (PREFER_ALIGN_BY_UNCORECACHE, DISTRIBUTE_CPUS_ACROSS_NUMA),
)


@dataclass(frozen=True)
class StaticPolicyOptions:
    full_physical_cpus_only: bool = False
    distribute_cpus_across_numa: bool = False
    align_by_socket: bool = False
    distribute_cpus_across_cores: bool = False
    strict_cpu_reservation: bool = False
    prefer_align_by_uncore_cache: bool = False


_FIELD = {
    FULL_PCPUS_ONLY: "full_physical_cpus_only",
    DISTRIBUTE_CPUS_ACROSS_NUMA: "distribute_cpus_across_numa",
    ALIGN_BY_SOCKET: "align_by_socket",
    DISTRIBUTE_CPUS_ACROSS_CORES: "distribute_cpus_across_cores",
    STRICT_CPU_RESERVATION: "strict_cpu_reservation",
    PREFER_ALIGN_BY_UNCORECACHE: "prefer_align_by_uncore_cache",
}


def parse_static_policy_options(raw: Mapping[str, str], gates: FeatureGates,
                                path: str = "cpuManagerPolicyOptions") -> StaticPolicyOptions:
    """``NewStaticPolicyOptions``: a bad option fails kubelet start-up (exit 1), never a pod."""
    values: dict[str, bool] = {}
    for name in raw:
        p = f"{path}.{name}"
        maturity = MATURITY.get(name)
        if maturity is None:
            raise InputError(f'unknown CPU Manager Policy option: "{name}"', path=p,
                             fix=f"known options: {', '.join(MATURITY)}")
        if maturity == "ALPHA" and not gates.enabled("CPUManagerPolicyAlphaOptions"):
            raise InputError(f'CPU Manager Policy Alpha-level Options not enabled, but option "{name}" provided',
                             path=p, fix="set featureGates.CPUManagerPolicyAlphaOptions: true")
        if maturity == "BETA" and not gates.enabled("CPUManagerPolicyBetaOptions"):
            raise InputError(f'CPU Manager Policy Beta-level Options not enabled, but option "{name}" provided',
                             path=p, fix="set featureGates.CPUManagerPolicyBetaOptions: true")
        values[_FIELD[name]] = parse_go_bool(str(raw[name]), name, p)
    for a, b in _INCOMPATIBLE:
        if values.get(_FIELD[a]) and values.get(_FIELD[b]):
            raise InputError(f"static policy options {a} and {b} can not be used at the same time", path=path)
    return StaticPolicyOptions(**values)


def check_policy_options_against_machine(opts: StaticPolicyOptions, num_sockets: int, num_numa: int,
                                         topology_policy: str, path: str = "cpuManagerPolicyOptions") -> None:
    """``ValidateStaticPolicyOptions``: align-by-socket needs NUMA nodes no bigger than sockets."""
    if not opts.align_by_socket:
        return
    if topology_policy == "single-numa-node":
        raise InputError(f"Topology manager single-numa-node policy is incompatible with CPUManager "
                         f"{ALIGN_BY_SOCKET} policy option", path=f"{path}.{ALIGN_BY_SOCKET}")
    if num_sockets > num_numa:
        raise InputError("Align by socket is not compatible with hardware where number of sockets are more than "
                         "number of NUMA", path=f"{path}.{ALIGN_BY_SOCKET}")
