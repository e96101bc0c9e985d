"""Feature gates and every other version-dependent default, in one table keyed by Kubernetes version.

The shape follows upstream ``pkg/features/kube_features.go`` (``defaultVersionedKubernetesFeatureGates``):
each gate has a list of :class:`GateSpec` — from which minor version on it had which default and
maturity, and whether it was locked to its default. :func:`gates_for` picks, for a Kubernetes
version, the newest spec at or before it. ``VERSIONED_DEFAULTS`` does the same for non-gate
defaults (e.g. the MemoryQoS throttling factor, checkpoint format versions).

Adding a release is adding rows here; no other module branches on the Kubernetes version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Iterable, Mapping

from ..errors import InputError

#: Minor versions kubetwin models; the last one is the default (``--kubernetes-version``).
KNOWN_VERSIONS: Final = ("1.34", "1.35", "1.36", "1.37")
DEFAULT_VERSION: Final = "1.36"

ALPHA, BETA, GA, DEPRECATED = "ALPHA", "BETA", "GA", "DEPRECATED"


@dataclass(frozen=True, slots=True)
class GateSpec:
    """From Kubernetes ``version`` on, the gate defaults to ``default`` at ``prerelease``."""

    version: str
    default: bool
    prerelease: str
    locked: bool = False


def _v(version: str) -> tuple[int, int]:
    major, _, minor = version.lstrip("v").partition(".")
    minor = minor.split(".")[0]
    return int(major), int(minor)


# Gate name -> specs in ascending version order. Sources: upstream kube_features.go (and
# staging component-base / apiextensions gates the kubelet and scheduler read).
FEATURE_GATES: Final[dict[str, tuple[GateSpec, ...]]] = {
    # --- resource model / kubelet ---
    "PodLevelResources": (GateSpec("1.32", False, ALPHA), GateSpec("1.34", True, BETA)),
    "PodLevelResourceManagers": (GateSpec("1.36", False, ALPHA),),
    "PodLevelResourcesFixKubeletQOSClass": (GateSpec("1.36", True, BETA),),
    "MemoryQoS": (GateSpec("1.22", False, ALPHA), GateSpec("1.37", True, BETA)),
    "NodeSwap": (GateSpec("1.22", False, ALPHA), GateSpec("1.28", True, BETA), GateSpec("1.34", True, GA)),
    "CustomCPUCFSQuotaPeriod": (GateSpec("1.12", False, ALPHA),),
    "DisableCPUQuotaWithExclusiveCPUs": (GateSpec("1.33", True, BETA),),
    "KubeletOOMScoreAdjTieBreak": (GateSpec("1.37", False, ALPHA),),
    "DRANodeAllocatableResources": (GateSpec("1.36", False, ALPHA),),
    "SidecarContainers": (GateSpec("1.28", False, ALPHA), GateSpec("1.29", True, BETA),
                          GateSpec("1.33", True, GA, locked=True)),
    "InPlacePodVerticalScaling": (GateSpec("1.27", False, ALPHA), GateSpec("1.33", True, BETA),
                                  GateSpec("1.35", True, GA)),
    # --- CPU / topology manager option maturity gates ---
    "CPUManagerPolicyOptions": (GateSpec("1.22", False, ALPHA), GateSpec("1.23", True, BETA),
                                GateSpec("1.33", True, GA, locked=True)),
    "CPUManagerPolicyBetaOptions": (GateSpec("1.23", True, BETA),),
    "CPUManagerPolicyAlphaOptions": (GateSpec("1.23", False, ALPHA),),
    "TopologyManagerPolicyOptions": (GateSpec("1.26", False, ALPHA), GateSpec("1.28", True, BETA),
                                     GateSpec("1.32", True, GA, locked=True)),
    "TopologyManagerPolicyBetaOptions": (GateSpec("1.26", False, BETA), GateSpec("1.28", True, BETA)),
    "TopologyManagerPolicyAlphaOptions": (GateSpec("1.26", False, ALPHA),),
    # --- DRA ---
    "DynamicResourceAllocation": (GateSpec("1.26", False, ALPHA), GateSpec("1.32", False, BETA),
                                  GateSpec("1.34", True, GA, locked=True)),
    "DRAPrioritizedList": (GateSpec("1.33", False, ALPHA), GateSpec("1.34", True, BETA)),
    "DRAAdminAccess": (GateSpec("1.32", False, ALPHA), GateSpec("1.34", True, BETA)),
    "DRAExtendedResource": (GateSpec("1.34", False, ALPHA), GateSpec("1.36", True, BETA)),
    # --- scheduler ---
    "MatchLabelKeysInPodTopologySpread": (GateSpec("1.25", False, ALPHA), GateSpec("1.27", True, BETA)),
    "NodeInclusionPolicyInPodTopologySpread": (GateSpec("1.25", False, ALPHA), GateSpec("1.26", True, BETA),
                                               GateSpec("1.33", True, GA, locked=True)),
    "TaintTolerationComparisonOperators": (GateSpec("1.35", False, ALPHA),),
}

# Non-gate defaults that changed between releases: name -> ((since version, value), ...).
VERSIONED_DEFAULTS: Final[dict[str, tuple[tuple[str, Any], ...]]] = {
    # KubeletConfiguration.memoryThrottlingFactor: 0.9 until MemoryQoS beta dropped the default.
    "memoryThrottlingFactor": (("1.22", 0.9), ("1.37", None)),
    # KubeletConfiguration.failCgroupV1: false since the field came (1.31); true from 1.35 on
    # (KEP-5573 at beta: the kubelet refuses to start on cgroup v1 unless told otherwise).
    "failCgroupV1": (("1.31", False), ("1.35", True)),
}


@dataclass(frozen=True)
class FeatureGates:
    """The effective gates of one component at one Kubernetes version."""

    version: str
    values: Mapping[str, bool]

    def enabled(self, name: str) -> bool:
        try:
            return self.values[name]
        except KeyError:
            raise KeyError(f"unknown feature gate {name!r} (add it to kubetwin.model.features.FEATURE_GATES)") from None

    def __getitem__(self, name: str) -> bool:
        return self.enabled(name)

    def with_overrides(self, overrides: Mapping[str, bool], path: str = "featureGates",
                       strict_locks: bool = False) -> "FeatureGates":
        """Apply ``featureGates`` settings, validated as the component would.

        An unknown gate is refused (as ``--feature-gates`` refuses it). Setting a locked gate to
        a value other than its default is refused when ``strict_locks``; otherwise ignored, as
        the upstream unit tests do when they pin a locked gate.
        """
        values = dict(self.values)
        for name, value in overrides.items():
            if not isinstance(value, bool):
                raise InputError(f"feature gate {name} must be true or false, not {value!r}", path=f"{path}.{name}")
            spec = _spec_at(name, self.version)
            if spec is None:
                raise InputError(f"unrecognized feature gate: {name}", path=f"{path}.{name}",
                                 fix=f"check the spelling; known gates at {self.version}: see `kubetwin gates`")
            if spec.locked and value != spec.default:
                if strict_locks:
                    raise InputError(f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to "
                                     f"{str(spec.default).lower()}", path=f"{path}.{name}")
                continue
            values[name] = value
        return FeatureGates(self.version, values)


def normalize_version(version: str | None) -> str:
    """``"v1.36.2"`` -> ``"1.36"``; None -> the default version; unknown minor versions refused."""
    if version is None:
        return DEFAULT_VERSION
    try:
        major, minor = _v(str(version))
    except ValueError:
        raise InputError(f"invalid Kubernetes version {version!r}", path="--kubernetes-version",
                         fix=f"use one of {', '.join(KNOWN_VERSIONS)}") from None
    norm = f"{major}.{minor}"
    if norm not in KNOWN_VERSIONS:
        raise InputError(f"Kubernetes version {norm} is not modelled", path="--kubernetes-version",
                         fix=f"use one of {', '.join(KNOWN_VERSIONS)}")
    return norm


def _spec_at(name: str, version: str) -> GateSpec | None:
    specs = FEATURE_GATES.get(name)
    if not specs:
        return None
    want = _v(version)
    chosen = None
    for spec in specs:
        if _v(spec.version) <= want:
            chosen = spec
    if chosen is None:  # gate introduced later than ``version``: unknown there
        return None
    return chosen


def gates_for(version: str | None = None, overrides: Mapping[str, bool] | None = None,
              path: str = "featureGates") -> FeatureGates:
    """Effective feature gates at ``version`` with ``overrides`` applied."""
    norm = normalize_version(version)
    values = {}
    for name in FEATURE_GATES:
        spec = _spec_at(name, norm)
        if spec is not None:
            values[name] = spec.default
    gates = FeatureGates(norm, values)
    return gates.with_overrides(overrides, path) if overrides else gates


def default_for(name: str, version: str | None = None) -> Any:
    """A non-gate default (``VERSIONED_DEFAULTS``) at ``version``."""
    want = _v(normalize_version(version))
    value = None
    for since, v in VERSIONED_DEFAULTS[name]:
        if _v(since) <= want:
            value = v
    return value


def parse_feature_gates_flag(text: str, path: str = "--feature-gates") -> dict[str, bool]:
    """``A=true,B=false`` as Kubernetes components take it."""
    out: dict[str, bool] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, eq, value = item.partition("=")
        if not eq or value.strip().lower() not in ("true", "false"):
            raise InputError(f"invalid feature gate setting {item!r}", path=path, fix="write NAME=true or NAME=false")
        out[name.strip()] = value.strip().lower() == "true"
    return out


def known_gates(version: str | None = None) -> Iterable[tuple[str, GateSpec]]:
    norm = normalize_version(version)
    for name in sorted(FEATURE_GATES):
        spec = _spec_at(name, norm)
        if spec is not None:
            yield name, spec
