"""Every field of ``KubeletConfiguration`` (``kubelet.config.k8s.io/v1beta1``) per release, and
what kubetwin does with each.

The field list is ``staging/src/k8s.io/kubelet/config/v1beta1/types.go`` read at the release
tags kubetwin models (``kubernetes-1.34.0``, ``-1.35.0``, ``-1.36.0``; 1.37 from the development
branch), with the nested types of ``k8s.io/component-base`` (``logs/api/v1``,
``tracing/api/v1``) and ``core/v1.Taint``. Go types become JSON types as ``encoding/json``
decodes them: ``metav1.Duration`` is a string, ``map[string]string`` has string values (a
number is refused), ``v1.ResourceList`` holds quantities (string or number).

A file is checked in three steps (:func:`check_fields`):

* unknown fields are errors, in the kubelet's strict decoder's words (``strict decoding error:
  unknown field "cpuManagerPolcy"``), with the nearest valid name; a value of the wrong JSON
  type is an error too (``failed to decode``: the kubelet cannot decode the file at all).
  The real kubelet falls back to lenient decoding for v1beta1 and only logs the strict error
  ("Using lenient decoding as strict decoding failed", ``kubeletconfig/util/codec``): it starts
  with the misspelt field ignored. kubetwin refuses instead, and says so in the fix.
* a field that only a later release has is read as that release defines it, with a warning
  naming the release (the rule :mod:`kubetwin.model.apischema` applies to API objects);
* a known field that matters to resource management but that kubetwin does not act on is
  reported with :func:`kubetwin.diagnostics.not_modelled` (an error under ``--strict``). Fields
  irrelevant to resource management (TLS, authentication, logging, ...) stay silent.
"""

from __future__ import annotations

from typing import Any, Callable, Final, Mapping

from ..errors import InputError, join_path
from .strict import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    STRING,
    STRING_OR_NUMBER,
    Obj,
    Spec,
    find_problems,
    list_of,
    map_of,
    obj,
    problems_error,
)

#: ``metav1.Duration`` is written as a Go duration string.
DURATION: Final = STRING

_VERBOSITY = INTEGER
_OUTPUT_ROUTING = obj(splitStream=BOOLEAN, infoBufferSize=STRING_OR_NUMBER)
#: ``logsapi.LoggingConfiguration`` (component-base/logs/api/v1/types.go); ``flushFrequency`` is a
#: ``TimeOrMetaDuration``: nanoseconds as a number, or a duration string.
_LOGGING = obj(format=STRING, flushFrequency=STRING_OR_NUMBER, verbosity=_VERBOSITY,
               vmodule=list_of(obj(filePattern=STRING, verbosity=_VERBOSITY)),
               options=obj(text=_OUTPUT_ROUTING, json=_OUTPUT_ROUTING))
#: ``tracingapi.TracingConfiguration`` (component-base/tracing/api/v1/types.go).
_TRACING = obj(endpoint=STRING, samplingRatePerMillion=INTEGER)
_TAINT = obj(key=STRING, value=STRING, effect=STRING, timeAdded=STRING)

_AUTHENTICATION = obj(x509=obj(clientCAFile=STRING),
                      webhook=obj(enabled=BOOLEAN, cacheTTL=DURATION),
                      anonymous=obj(enabled=BOOLEAN))
_AUTHORIZATION = obj(mode=STRING, webhook=obj(cacheAuthorizedTTL=DURATION, cacheUnauthorizedTTL=DURATION))

#: Field -> its JSON shape, for every field of v1beta1 as of the oldest modelled release (1.34).
_BASE: Final[dict[str, Spec]] = {
    "apiVersion": STRING, "kind": STRING,
    "enableServer": BOOLEAN, "staticPodPath": STRING, "podLogsDir": STRING,
    "syncFrequency": DURATION, "fileCheckFrequency": DURATION, "httpCheckFrequency": DURATION,
    "staticPodURL": STRING, "staticPodURLHeader": map_of(list_of(STRING)),
    "address": STRING, "port": INTEGER, "readOnlyPort": INTEGER,
    "tlsCertFile": STRING, "tlsPrivateKeyFile": STRING, "tlsCipherSuites": list_of(STRING), "tlsMinVersion": STRING,
    "rotateCertificates": BOOLEAN, "serverTLSBootstrap": BOOLEAN,
    "authentication": _AUTHENTICATION, "authorization": _AUTHORIZATION,
    "registryPullQPS": INTEGER, "registryBurst": INTEGER,
    "imagePullCredentialsVerificationPolicy": STRING, "preloadedImagesVerificationAllowlist": list_of(STRING),
    "eventRecordQPS": INTEGER, "eventBurst": INTEGER,
    "enableDebuggingHandlers": BOOLEAN, "enableContentionProfiling": BOOLEAN,
    "healthzPort": INTEGER, "healthzBindAddress": STRING,
    "oomScoreAdj": INTEGER, "clusterDomain": STRING, "clusterDNS": list_of(STRING),
    "streamingConnectionIdleTimeout": DURATION, "nodeStatusUpdateFrequency": DURATION,
    "nodeStatusReportFrequency": DURATION, "nodeLeaseDurationSeconds": INTEGER,
    "imageMinimumGCAge": DURATION, "imageMaximumGCAge": DURATION,
    "imageGCHighThresholdPercent": INTEGER, "imageGCLowThresholdPercent": INTEGER,
    "volumeStatsAggPeriod": DURATION,
    "kubeletCgroups": STRING, "systemCgroups": STRING, "cgroupRoot": STRING, "cgroupsPerQOS": BOOLEAN,
    "cgroupDriver": STRING,
    "cpuManagerPolicy": STRING, "singleProcessOOMKill": BOOLEAN, "cpuManagerPolicyOptions": map_of(STRING),
    "cpuManagerReconcilePeriod": DURATION, "memoryManagerPolicy": STRING,
    "topologyManagerPolicy": STRING, "topologyManagerScope": STRING, "topologyManagerPolicyOptions": map_of(STRING),
    "qosReserved": map_of(STRING), "runtimeRequestTimeout": DURATION, "hairpinMode": STRING,
    "maxPods": INTEGER, "podCIDR": STRING, "podPidsLimit": INTEGER, "resolvConf": STRING, "runOnce": BOOLEAN,
    "cpuCFSQuota": BOOLEAN, "cpuCFSQuotaPeriod": DURATION, "nodeStatusMaxImages": INTEGER,
    "maxOpenFiles": INTEGER, "contentType": STRING, "kubeAPIQPS": INTEGER, "kubeAPIBurst": INTEGER,
    "serializeImagePulls": BOOLEAN, "maxParallelImagePulls": INTEGER,
    "evictionHard": map_of(STRING), "evictionSoft": map_of(STRING), "evictionSoftGracePeriod": map_of(STRING),
    "evictionPressureTransitionPeriod": DURATION, "evictionMaxPodGracePeriod": INTEGER,
    "evictionMinimumReclaim": map_of(STRING), "mergeDefaultEvictionSettings": BOOLEAN,
    "podsPerCore": INTEGER, "enableControllerAttachDetach": BOOLEAN, "protectKernelDefaults": BOOLEAN,
    "makeIPTablesUtilChains": BOOLEAN, "iptablesMasqueradeBit": INTEGER, "iptablesDropBit": INTEGER,
    "featureGates": map_of(BOOLEAN), "failSwapOn": BOOLEAN, "memorySwap": obj(swapBehavior=STRING),
    "containerLogMaxSize": STRING, "containerLogMaxFiles": INTEGER, "containerLogMaxWorkers": INTEGER,
    "containerLogMonitorInterval": DURATION, "configMapAndSecretChangeDetectionStrategy": STRING,
    "systemReserved": map_of(STRING), "kubeReserved": map_of(STRING), "reservedSystemCPUs": STRING,
    "showHiddenMetricsForVersion": STRING, "systemReservedCgroup": STRING, "kubeReservedCgroup": STRING,
    "enforceNodeAllocatable": list_of(STRING), "allowedUnsafeSysctls": list_of(STRING),
    "volumePluginDir": STRING, "providerID": STRING, "kernelMemcgNotification": BOOLEAN,
    "logging": _LOGGING, "enableSystemLogHandler": BOOLEAN, "enableSystemLogQuery": BOOLEAN,
    "shutdownGracePeriod": DURATION, "shutdownGracePeriodCriticalPods": DURATION,
    "shutdownGracePeriodByPodPriority": list_of(obj(priority=INTEGER, shutdownGracePeriodSeconds=INTEGER)),
    "crashLoopBackOff": obj(maxContainerRestartPeriod=DURATION),
    "reservedMemory": list_of(obj(numaNode=INTEGER, limits=map_of(STRING_OR_NUMBER))),
    "enableProfilingHandler": BOOLEAN, "enableDebugFlagsHandler": BOOLEAN, "seccompDefault": BOOLEAN,
    "memoryThrottlingFactor": NUMBER, "registerWithTaints": list_of(_TAINT), "registerNode": BOOLEAN,
    "tracing": _TRACING, "localStorageCapacityIsolation": BOOLEAN,
    "containerRuntimeEndpoint": STRING, "imageServiceEndpoint": STRING, "failCgroupV1": BOOLEAN,
    "userNamespaces": obj(idsPerPod=INTEGER),
}

#: Fields added after 1.34: name -> (first release, shape).
LATER: Final[dict[str, tuple[str, Spec]]] = {
    "tlsCurvePreferences": ("1.36", list_of(INTEGER)),
    "memoryReservationPolicy": ("1.36", STRING),
    "defaultPodSysctls": ("1.37", map_of(STRING)),
}


def _v(version: str) -> tuple[int, int]:
    a, b = version.split(".")[:2]
    return int(a), int(b)


def fields_at(version: str) -> dict[str, Spec]:
    """The fields a kubelet of ``version`` (``"1.36"``) knows."""
    out = dict(_BASE)
    for name, (since, spec) in LATER.items():
        if _v(since) <= _v(version):
            out[name] = spec
    return out


def all_fields() -> frozenset[str]:
    return frozenset(_BASE) | frozenset(LATER)


# --- known fields kubetwin does not act on --------------------------------------------------------
def _set(value: Any) -> bool:
    return value is not None


def _true(value: Any) -> bool:
    return value is True


def _false(value: Any) -> bool:
    return value is False


def _non_empty(value: Any) -> bool:
    return bool(value)


def _enforces_system_cgroups(value: Any) -> bool:
    return isinstance(value, list) and any(v not in ("pods", "none") for v in value)


#: Fields that matter to resource management but that kubetwin reads without acting on:
#: name -> (when the given value makes the answer differ from a real kubelet's, why).
NOT_MODELLED: Final[dict[str, tuple[Callable[[Any], bool], str]]] = {
    "imageGCHighThresholdPercent": (_set, "image garbage collection (disk usage) is not simulated"),
    "imageGCLowThresholdPercent": (_set, "image garbage collection (disk usage) is not simulated"),
    "imageMinimumGCAge": (_set, "image garbage collection (disk usage) is not simulated"),
    "imageMaximumGCAge": (_set, "image garbage collection (disk usage) is not simulated"),
    "kernelMemcgNotification": (_true, "eviction reacts at its housekeeping interval, not on memcg notifications"),
    "enforceNodeAllocatable": (_enforces_system_cgroups,
                               "the system-reserved and kube-reserved cgroups are not modelled; "
                               "only the pods (kubepods) enforcement is"),
    "registerWithTaints": (_non_empty, "nodes are registered without these taints; give them on the Node "
                                       "(or a scenario node group's taints)"),
    "registerNode": (_false, "every simulated node is registered"),
    "allowedUnsafeSysctls": (_non_empty, "the kubelet's sysctl admission (SysctlForbidden) is not modelled"),
}


def check_fields(obj_: Mapping[str, Any], version: str, file: str | None = None, warn_prefix: str = "") -> None:
    """Refuse unknown and mistyped fields; warn on later-release and not-modelled fields (their
    paths under ``warn_prefix``: where the object sits in an enclosing document)."""
    from ..diagnostics import not_modelled, warn

    problems = find_problems(obj_, Obj(fields_at(version)))
    later: dict[str, str] = {}
    remaining = []
    for p in problems:
        top = p.path.split(".", 1)[0].split("[", 1)[0]
        if p.kind == "unknown" and p.path == top and top in LATER:
            later[top] = LATER[top][0]
        else:
            remaining.append(p)
    for name in later:  # a later release's field: its shape is that release's
        remaining += [p for p in find_problems({name: obj_[name]}, Obj({name: LATER[name][1]}))]
    mistyped = [p for p in remaining if p.kind != "unknown"]
    if mistyped:  # the kubelet cannot decode the file at all: it does not start
        raise problems_error(mistyped, file=file, what="failed to decode")
    if remaining:
        err = problems_error(remaining, file=file)
        err.fix = ((err.fix + "; ") if err.fix else "") + (
            "a kubelet given this file logs \"Using lenient decoding as strict decoding failed\" and "
            "starts without the field")
        raise err
    for name, release in sorted(later.items()):
        warn(InputError(f"field is not in the KubeletConfiguration of Kubernetes {version}; read as Kubernetes "
                        f"{release} defines it", path=join_path(warn_prefix, name), file=file,
                        fix=f"use --kubernetes-version {release} if that is the release meant"))
    for name, (applies, why) in NOT_MODELLED.items():
        if name in obj_ and applies(obj_[name]):
            not_modelled(join_path(warn_prefix, name), file=file, why=why)
