"""Feature gates and every other version-dependent default, in one table keyed by Kubernetes version.

The shape follows upstream ``pkg/features/kube_features.go`` (``defaultVersionedKubernetesFeatureGates``):
each gate has a list of :class:`GateSpec` — from which minor version on it had which default and
maturity, and whether it was locked to its default. :func:`gates_for` picks, for a Kubernetes
version, the newest spec at or before it. ``VERSIONED_DEFAULTS`` does the same for non-gate
defaults (e.g. the MemoryQoS throttling factor, checkpoint format versions).

Adding a release is adding rows here; no other module branches on the Kubernetes version.
"""

from __future__ import annotations

import functools
import re
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


_VERSION_RE = re.compile(r"v?([0-9]+)\.([0-9]+)(?:\.[0-9]+)?", re.ASCII)


@functools.lru_cache(maxsize=256)
def _v(version: str) -> tuple[int, int]:
    """``1.36``, ``v1.36`` or ``1.36.2`` → (1, 36); anything else (``+1.36``, ``abc``, full-width
    digits, ``1.36.x``) is a ValueError."""
    m = _VERSION_RE.fullmatch(version)
    if m is None:
        raise ValueError(version)
    return int(m.group(1)), int(m.group(2))


# Gate name -> specs in ascending version order. Sources: upstream kube_features.go (and
# staging component-base / apiextensions gates the kubelet and scheduler read).
FEATURE_GATES: Final[dict[str, tuple[GateSpec, ...]]] = {
    # Sources: kube_features.go as of v1.35 (defaultVersionedKubernetesFeatureGates), the v1.37
    # development copy of the scheduler/DRA gate file, the kubernetes/website feature-gate pages
    # and the v1.35-v1.37 CHANGELOG summaries. Rows list every stage change since the gate came.
    # --- resource model / pod-level resources ---
    "PodLevelResources": (GateSpec("1.32", False, ALPHA), GateSpec("1.34", True, BETA)),
    "PodLevelResourceManagers": (GateSpec("1.36", False, ALPHA), GateSpec("1.37", False, BETA)),
    "PodLevelResourcesFixKubeletQOSClass": (GateSpec("1.36", True, BETA),),
    "PodLevelResourcesFixUpdateDefaulting": (GateSpec("1.36", True, BETA),),
    "InPlacePodLevelResourcesVerticalScaling": (GateSpec("1.35", False, ALPHA), GateSpec("1.36", True, BETA)),
    "InPlacePodVerticalScaling": (GateSpec("1.27", False, ALPHA), GateSpec("1.33", True, BETA),
                                  GateSpec("1.35", True, GA, locked=True)),
    "InPlacePodVerticalScalingExclusiveCPUs": (GateSpec("1.32", False, ALPHA),),
    "InPlacePodVerticalScalingExclusiveMemory": (GateSpec("1.34", False, ALPHA),),
    "InPlacePodVerticalScalingSchedulerPreemption": (GateSpec("1.37", False, ALPHA),),
    "SidecarContainers": (GateSpec("1.28", False, ALPHA), GateSpec("1.29", True, BETA),
                          GateSpec("1.33", True, GA, locked=True)),
    # --- kubelet: cgroups, QoS, swap, OOM ---
    "MemoryQoS": (GateSpec("1.22", False, ALPHA), GateSpec("1.37", True, BETA)),
    "NodeSwap": (GateSpec("1.22", False, ALPHA), GateSpec("1.28", False, BETA), GateSpec("1.30", True, BETA),
                 GateSpec("1.34", True, GA, locked=True)),
    "CustomCPUCFSQuotaPeriod": (GateSpec("1.12", False, ALPHA),),
    "DisableCPUQuotaWithExclusiveCPUs": (GateSpec("1.33", True, BETA),),
    "QOSReserved": (GateSpec("1.11", False, ALPHA),),
    "KubeletOOMScoreAdjTieBreak": (GateSpec("1.37", False, ALPHA),),
    "KubeletCgroupDriverFromCRI": (GateSpec("1.28", False, ALPHA), GateSpec("1.31", True, BETA),
                                   GateSpec("1.34", True, GA, locked=True)),
    "KubeletInUserNamespace": (GateSpec("1.22", False, ALPHA), GateSpec("1.37", True, BETA)),
    # --- kubelet: resource managers and their option maturity gates ---
    "MemoryManager": (GateSpec("1.21", False, ALPHA), GateSpec("1.22", True, BETA),
                      GateSpec("1.32", True, GA, locked=True)),
    "CPUManagerPolicyOptions": (GateSpec("1.22", False, ALPHA), GateSpec("1.23", True, BETA),
                                GateSpec("1.33", True, GA, locked=True)),
    "CPUManagerPolicyBetaOptions": (GateSpec("1.23", True, BETA),),
    "CPUManagerPolicyAlphaOptions": (GateSpec("1.23", False, ALPHA),),
    "TopologyManagerPolicyOptions": (GateSpec("1.26", False, ALPHA), GateSpec("1.28", True, BETA),
                                     GateSpec("1.32", True, GA, locked=True)),
    "TopologyManagerPolicyBetaOptions": (GateSpec("1.26", False, BETA), GateSpec("1.28", True, BETA)),
    "TopologyManagerPolicyAlphaOptions": (GateSpec("1.26", False, ALPHA),),
    "KubeletPodResourcesGet": (GateSpec("1.27", False, ALPHA), GateSpec("1.34", True, BETA)),
    "KubeletPodResourcesDynamicResources": (GateSpec("1.27", False, ALPHA), GateSpec("1.34", True, BETA)),
    "KubeletPodResourcesListUseActivePods": (GateSpec("1.0", False, GA), GateSpec("1.34", True, DEPRECATED)),
    "ResourceHealthStatus": (GateSpec("1.31", False, ALPHA),),
    # --- kubelet: eviction, disk, PSI (PSINodeCondition is not merged as of v1.36: left out) ---
    "KubeletPSI": (GateSpec("1.33", False, ALPHA), GateSpec("1.34", True, BETA),
                   GateSpec("1.36", True, GA, locked=True)),
    "KubeletSeparateDiskGC": (GateSpec("1.29", False, ALPHA), GateSpec("1.31", True, BETA)),
    "LocalStorageCapacityIsolationFSQuotaMonitoring": (GateSpec("1.15", False, ALPHA), GateSpec("1.31", False, BETA)),
    "AllowOverwriteTerminationGracePeriodSeconds": (GateSpec("1.0", True, GA), GateSpec("1.32", False, DEPRECATED),
                                                    GateSpec("1.35", False, DEPRECATED, locked=True)),
    "ImageMaximumGCAge": (GateSpec("1.29", False, ALPHA), GateSpec("1.30", True, BETA),
                          GateSpec("1.35", True, GA, locked=True)),
    # --- kubelet: gates its configuration validation and defaulting read ---
    "GracefulNodeShutdown": (GateSpec("1.20", False, ALPHA), GateSpec("1.21", True, BETA)),
    "GracefulNodeShutdownBasedOnPodPriority": (GateSpec("1.23", False, ALPHA), GateSpec("1.24", True, BETA)),
    "KubeletCrashLoopBackOffMax": (GateSpec("1.32", False, ALPHA), GateSpec("1.35", True, BETA)),
    "KubeletEnsureSecretPulledImages": (GateSpec("1.33", False, ALPHA), GateSpec("1.35", True, BETA)),
    "KubeletTracing": (GateSpec("1.25", False, ALPHA), GateSpec("1.27", True, BETA),
                       GateSpec("1.34", True, GA, locked=True)),
    "NodeLogQuery": (GateSpec("1.27", False, ALPHA), GateSpec("1.30", False, BETA),
                     GateSpec("1.36", True, GA, locked=True)),
    "NodeDeclaredFeatures": (GateSpec("1.35", False, ALPHA), GateSpec("1.36", True, BETA),
                             GateSpec("1.37", True, GA, locked=True)),
    # --- DRA ---
    "DynamicResourceAllocation": (GateSpec("1.26", False, ALPHA), GateSpec("1.32", False, BETA),
                                  GateSpec("1.34", True, GA), GateSpec("1.35", True, GA, locked=True)),
    "DRAAdminAccess": (GateSpec("1.32", False, ALPHA), GateSpec("1.34", True, BETA),
                       GateSpec("1.36", True, GA, locked=True)),
    "DRAConsumableCapacity": (GateSpec("1.34", False, ALPHA), GateSpec("1.36", True, BETA)),
    "DRADerivedAttributes": (GateSpec("1.37", False, ALPHA),),
    "DRADeviceBindingConditions": (GateSpec("1.34", False, ALPHA), GateSpec("1.36", True, BETA)),
    "DRADeviceCompatibilityGroups": (GateSpec("1.37", False, ALPHA),),
    "DRADeviceTaintRules": (GateSpec("1.35", False, ALPHA), GateSpec("1.36", False, BETA),
                            GateSpec("1.37", True, GA)),
    "DRADeviceTaints": (GateSpec("1.33", False, ALPHA), GateSpec("1.36", True, BETA), GateSpec("1.37", True, GA)),
    "DRAExtendedResource": (GateSpec("1.34", False, ALPHA), GateSpec("1.36", True, BETA),
                            GateSpec("1.37", True, GA, locked=True)),
    "DRAFractionalCapacityRange": (GateSpec("1.37", True, BETA),),
    "DRAListTypeAttributes": (GateSpec("1.36", False, ALPHA),),
    "DRANodeAllocatableResources": (GateSpec("1.36", False, ALPHA),),
    "DRAOptionalNodeOperations": (GateSpec("1.37", False, ALPHA),),
    "DRAPartitionableDevices": (GateSpec("1.33", False, ALPHA), GateSpec("1.36", True, BETA)),
    "DRAPrioritizedList": (GateSpec("1.33", False, ALPHA), GateSpec("1.34", True, BETA), GateSpec("1.36", True, GA),
                           GateSpec("1.37", True, GA, locked=True)),
    "DRAResourceClaimDeviceStatus": (GateSpec("1.32", False, ALPHA), GateSpec("1.33", True, BETA),
                                     GateSpec("1.37", True, GA, locked=True)),
    "DRASchedulerFilterTimeout": (GateSpec("1.34", True, BETA),),
    "DRAWorkloadResourceClaims": (GateSpec("1.36", False, ALPHA), GateSpec("1.37", False, BETA)),
    # --- scheduler ---
    "SchedulerQueueingHints": (GateSpec("1.28", False, BETA), GateSpec("1.32", True, BETA),
                               GateSpec("1.34", True, GA, locked=True)),
    "SchedulerAsyncAPICalls": (GateSpec("1.34", False, BETA),),
    "SchedulerAsyncPreemption": (GateSpec("1.32", False, ALPHA), GateSpec("1.33", True, BETA)),
    "SchedulerPopFromBackoffQ": (GateSpec("1.33", True, BETA),),
    "SchedulerPreQueueingHints": (GateSpec("1.37", False, ALPHA),),
    "NominatedNodeNameForExpectation": (GateSpec("1.34", False, ALPHA), GateSpec("1.35", True, BETA)),
    "ClearingNominatedNodeNameAfterBinding": (GateSpec("1.34", False, ALPHA), GateSpec("1.35", True, BETA)),
    "OpportunisticBatching": (GateSpec("1.35", True, BETA),),
    "MatchLabelKeysInPodTopologySpread": (GateSpec("1.25", False, ALPHA), GateSpec("1.27", True, BETA)),
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": (GateSpec("1.34", True, BETA),),
    "MatchLabelKeysInPodAffinity": (GateSpec("1.29", False, ALPHA), GateSpec("1.31", True, BETA),
                                    GateSpec("1.33", True, GA, locked=True)),
    "NodeInclusionPolicyInPodTopologySpread": (GateSpec("1.25", False, ALPHA), GateSpec("1.26", True, BETA),
                                               GateSpec("1.33", True, GA, locked=True)),
    "InterPodAffinityHostnameFastPath": (GateSpec("1.37", False, ALPHA),),
    "TaintTolerationComparisonOperators": (GateSpec("1.35", False, ALPHA),),
    "StorageCapacityScoring": (GateSpec("1.33", False, ALPHA), GateSpec("1.37", True, BETA)),
    "GenericWorkload": (GateSpec("1.35", False, ALPHA), GateSpec("1.37", False, BETA)),
    "TopologyAwareWorkloadScheduling": (GateSpec("1.36", False, ALPHA),),
    "CompositePodGroup": (GateSpec("1.37", False, ALPHA),),
    "PodGroupPreemptionPolicy": (GateSpec("1.37", False, ALPHA),),
}

# Non-gate defaults that changed between releases: name -> ((since version, value), ...).
VERSIONED_DEFAULTS: Final[dict[str, tuple[tuple[str, Any], ...]]] = {
    # KubeletConfiguration.memoryThrottlingFactor: 0.9 until MemoryQoS beta dropped the default.
    "memoryThrottlingFactor": (("1.22", 0.9), ("1.37", None)),
    # KubeletConfiguration.failCgroupV1: false since the field came (1.31); true from 1.35 on
    # (KEP-5573 at beta: the kubelet refuses to start on cgroup v1 unless told otherwise).
    "failCgroupV1": (("1.31", False), ("1.35", True)),
    # With MemoryQoS off on cgroup v2 the kubelet resets kubepods memory.min/memory.low (and the
    # burstable tier's memory.low) to 0 at start-up, clearing protection a MemoryQoS run left
    # behind (kubernetes/kubernetes#138903, in v1.37).
    "memoryQoSRollbackCleanup": (("1.22", False), ("1.37", True)),
    # Checkpoint formats each release writes (kubelet state files under /var/lib/kubelet).
    # cpu_manager_state: V2 ({policyName, defaultCpuSet, entries, checksum}); V3 adds podEntries and
    # is written by 1.36 only with PodLevelResourceManagers on; 1.37 writes V4 (V3 payload as a
    # JSON string in "data" + "dataChecksum", V2 fields inline for older readers).
    "cpuManagerCheckpointVersion": (("1.22", "v2"), ("1.37", "v4")),
    "cpuManagerCheckpointVersionPodLevel": (("1.36", "v3"), ("1.37", "v4")),
    # memory_manager_state: V1 ({policyName, machineState, entries, checksum}); V2 adds pod entries,
    # written with PodLevelResourceManagers on.
    "memoryManagerCheckpointVersion": (("1.22", "v1"),),
    "memoryManagerCheckpointVersionPodLevel": (("1.36", "v2"),),
    # CPU Manager isCoreFree / isSocketFree (cpu_assignment.go): a core (socket) is "free" when its
    # free CPUs equal CPUsPerCore() = NumCPUs / NumCores (CPUsPerSocket() = NumCPUs / NumSockets),
    # integer divisions ("perUnitAverage"), until kubernetes/kubernetes#140498 (issue #140495; no
    # release-1.36 cherry-pick) compares with the unit's own CPU count ("ownSize"). On hybrid CPUs
    # the old check hands out CPUs that are not free. v1.37 as the first release is attributed, not
    # read from a release: see docs/upstream-bugs.md.
    "cpuManagerFreeUnitCheck": (("1.22", "perUnitAverage"), ("1.37", "ownSize")),
    # allocated_pods_state (the allocation manager, InPlacePodVerticalScaling): {"data": JSON of
    # {"entries": {UID: PodResourceInfo}}, "checksum"}; the PodResourceInfo fields each release writes
    # (Go field names). v1.35 added PodLevelResources, v1.37 EmptyDirVolumeLimits; earlier formats are
    # not modelled (None).
    "allocatedPodsStateFields": (("1.22", None), ("1.35", ("ContainerResources", "PodLevelResources")),
                                 ("1.37", ("ContainerResources", "PodLevelResources", "EmptyDirVolumeLimits"))),
    # MemoryQoS on the pod cgroup: memory.high for pods with a pod-level memory limit
    # (ApplyPodLevelMemoryHigh, called from the pod container manager's EnsureExists) from v1.37;
    # v1.36 and earlier write only memory.min/memory.low there.
    "podLevelMemoryHigh": (("1.22", False), ("1.37", True)),
    # actuated_pods_state: the resources the kubelet last sent the runtime per container, in the
    # allocated_pods_state format; kept since kubernetes#130599 (v1.33), by the runtime manager
    # (kuberuntime) since kubernetes#132873 (v1.35). Before v1.33 the file did not exist.
    "actuatedPodsStateFile": (("1.22", False), ("1.33", True)),
    # dra_manager_state: {"Data": <DRACheckpoint JSON string>, "Checksum": crc32} with this apiVersion.
    "draManagerCheckpointAPIVersion": (("1.32", "checkpoint.dra.kubelet.k8s.io/v1"),),
    # In-place resize (pods/resize, ValidatePodResize): a memory limit may be lowered (or added)
    # only with resizePolicy RestartContainer until v1.35 lets NotRequired do it too (the kubelet
    # then checks usage against the new limit, best effort).
    "resizeMemoryLimitDecreaseNotRequired": (("1.27", False), ("1.35", True)),
    # The static CPU Manager policy resizes a container's exclusive CPUs in place (KEP-5554, under
    # InPlacePodVerticalScalingExclusiveCPUs) from v1.37; before, Allocate keeps the cpuset it has.
    "cpuManagerResizesExclusiveCPUs": (("1.27", False), ("1.37", True)),
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
            if name in FEATURE_GATES:  # introduced in a later release: off at this version
                return False
            raise KeyError(f"unknown feature gate {name!r} (add it to kubetwin.model.features.FEATURE_GATES)") from None

    def __getitem__(self, name: str) -> bool:
        return self.enabled(name)

    def with_overrides(self, overrides: Mapping[str, bool], path: str = "featureGates",
                       strict_locks: bool = False) -> "FeatureGates":
        """Apply ``featureGates`` settings, validated as the component would.

        An unknown gate is refused (as ``--feature-gates`` refuses it). Setting a locked gate to
        a value other than its default is refused when ``strict_locks``; otherwise ignored, as
        the upstream unit tests do when they pin a locked gate, with a warning (a real component
        refuses to start: an error under ``--strict``).
        """
        values = dict(self.values)
        for name, value in overrides.items():
            if not isinstance(value, bool):
                raise InputError(f"feature gate {name} must be true or false, not {value!r}", path=f"{path}.{name}")
            spec = _spec_at(name, self.version)
            if spec is None and name in FEATURE_GATES:
                # A gate of a later release: a real kubelet of this version would refuse it, but
                # users replaying newer behaviour (and upstream tests from development branches)
                # set it on purpose. Honour it, and say so.
                from ..diagnostics import warn

                first = FEATURE_GATES[name][0].version
                warn(InputError(f"feature gate {name} first appears in Kubernetes {first}; honouring it on "
                                f"{self.version} as set", path=f"{path}.{name}",
                                fix=f"use --kubernetes-version {first} if that is the release meant"))
                values[name] = value
                continue
            if spec is None and name in _upstream_gates():
                _not_modelled_gate(name, value, self.version, f"{path}.{name}")
                continue
            if spec is None:
                raise unknown_gate_error(name, self.version, path=f"{path}.{name}")
            if spec.locked and value != spec.default:
                message = (f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to "
                           f"{str(spec.default).lower()}")
                if strict_locks:
                    raise InputError(message, path=f"{path}.{name}")
                from ..diagnostics import warn

                warn(InputError(f"{message} at Kubernetes {self.version}: the setting is ignored (a real component "
                                "refuses to start)", path=f"{path}.{name}"))
                continue
            values[name] = value
        return FeatureGates(self.version, values)


def _upstream_gates() -> Mapping[str, tuple[tuple[str, bool, str, bool], ...]]:
    from .upstream_gates import UPSTREAM_GATES

    return UPSTREAM_GATES


def _not_modelled_gate(name: str, value: bool, version: str, path: str) -> None:
    """A real gate kubetwin does not act on: a locked one set to the non-default is refused as the
    component refuses it; otherwise accepted with a warning that it changes nothing here."""
    from ..diagnostics import warn

    want = _v(version)
    spec = None
    for since, default, stage, locked in _upstream_gates()[name]:
        if _v(since) <= want:
            spec = (default, stage, locked)
    if spec is None:
        first = _upstream_gates()[name][0][0]
        warn(InputError(f"feature gate {name} first appears in Kubernetes {first} and is not modelled by kubetwin: "
                        "the setting changes nothing here", path=path))
        return
    default, stage, locked = spec
    if locked and value != default:  # as component-base refuses it (no upstream test pins these)
        raise InputError(f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to "
                         f"{str(default).lower()}", path=path, fix=f"remove the setting (Kubernetes {version})")
    warn(InputError(f"feature gate {name} ({stage}, default {str(default).lower()}) is not modelled by kubetwin: "
                    "the setting changes nothing here", path=path))


def unknown_gate_error(name: str, version: str, path: str = "--feature-gates") -> InputError:
    """``unrecognized feature gate: NAME`` (component-base's message), with the nearest known gate."""
    from .strict import suggest

    near = suggest(name, [*FEATURE_GATES, *_upstream_gates()])
    fix = (f'did you mean "{near}"?' if near else
           f"check the spelling; `kubetwin gates --kubernetes-version {version}` lists the gates kubetwin knows")
    return InputError(f"unrecognized feature gate: {name}", path=path, fix=fix)


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


_GO_BOOLS: Final = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
                    "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def parse_feature_gates_flag(text: str, path: str = "--feature-gates") -> dict[str, bool]:
    """``A=true,B=false`` as Kubernetes components take it (component-base ``featureGate.Set``:
    items split on ``,``, names and values trimmed, values as Go's ``strconv.ParseBool``)."""
    out: dict[str, bool] = {}
    for item in text.split(","):
        if not item:
            continue
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not eq:
            raise InputError(f"missing bool value for {name}", path=path, fix="write NAME=true or NAME=false")
        if value not in _GO_BOOLS:
            raise InputError(f'invalid value of {name}={value}, err: strconv.ParseBool: parsing "{value}": '
                             "invalid syntax", path=path, fix="write NAME=true or NAME=false")
        out[name] = _GO_BOOLS[value]
    return out


def known_gates(version: str | None = None) -> Iterable[tuple[str, GateSpec]]:
    norm = normalize_version(version)
    for name in sorted(FEATURE_GATES):
        spec = _spec_at(name, norm)
        if spec is not None:
            yield name, spec
