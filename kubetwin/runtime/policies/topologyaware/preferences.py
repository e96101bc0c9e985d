"""What a container asks the topology-aware policy for: exclusive or shared CPUs, isolated
or reserved ones, CPU priority, memory types, and the annotations that say so.

The rules are the plugin's (``cpuAllocationPreferences``): kube-system and the reserved
namespaces get reserved CPUs; BestEffort and Burstable containers shared ones; a Guaranteed
container below one CPU shares, with one to two CPUs it gets an exclusive core (isolated when
preferred) plus a shared fraction, with two or more whole CPUs exclusive ones, and with a
fraction above two shared CPUs unless annotated ``prefer-shared-cpus=false``. Annotations are
read effectively (``KEY/container.NAME``, ``KEY/pod``, ``KEY``).

Upstream: containers/nri-plugins v0.14.0 ``cmd/plugins/topology-aware/policy/pod-preferences.go``.
"""

from __future__ import annotations

from typing import Any

from ...cpuallocator import PRIORITY_HIGH, PRIORITY_LOW, PRIORITY_NONE, PRIORITY_NORMAL
from ...gomatch import BadPattern, match
from ...resmgr.cache import CONTAINER_SCOPED, RESMGR_NS, CachedContainer, Pod, parse_bool

CPU_NORMAL, CPU_RESERVED, CPU_PRESERVE = 0, 1, 2
CPU_TYPE_NAMES = {CPU_NORMAL: "normal", CPU_RESERVED: "reserved", CPU_PRESERVE: "preserve"}

MEMORY_UNSPEC, MEMORY_DRAM, MEMORY_PMEM, MEMORY_HBM, MEMORY_PRESERVE = 0, 1, 2, 4, 8
MEMORY_ALL = MEMORY_DRAM | MEMORY_PMEM | MEMORY_HBM
DEFAULT_MEMORY_TYPE = MEMORY_ALL
MEMORY_NAMED_TYPES = {"dram": MEMORY_DRAM, "pmem": MEMORY_PMEM, "hbm": MEMORY_HBM, "mixed": MEMORY_ALL}

UNLIMITED_CPU = (1 << 63) - 1
PRIO_BY_NAME = {"high": PRIORITY_HIGH, "normal": PRIORITY_NORMAL, "low": PRIORITY_LOW, "none": PRIORITY_NONE}

PREF_IMPLICIT, PREF_CONFIG, PREF_ANNOTATED = 0, 1, 2

PREFER_RESERVED_KEY = "prefer-reserved-cpus." + RESMGR_NS
PREFER_CPU_PRIORITY_KEY = "prefer-cpu-priority." + RESMGR_NS
HIDE_HYPERTHREADS_KEY = "hide-hyperthreads." + RESMGR_NS
PICK_BY_HINTS_KEY = "pick-resources-by-hints." + RESMGR_NS
SCHEDULING_CLASS_KEY = "scheduling-class." + RESMGR_NS
CPU_CLASS_KEY = "cpu-class." + RESMGR_NS
IRQ_AFFINITY_KEY = "irq-affinity." + RESMGR_NS
PREFER_ISOLATED_KEY = "prefer-isolated-cpus." + RESMGR_NS
REQUIRE_ISOLATED_KEY = "require-isolated-cpus." + RESMGR_NS
PREFER_SHARED_KEY = "prefer-shared-cpus." + RESMGR_NS
MEMORY_TYPE_KEY = "memory-type." + RESMGR_NS
COLD_START_KEY = "cold-start." + RESMGR_NS


def memory_type_str(t: int) -> str:
    from ...libmem import type_mask_str

    if t == MEMORY_PRESERVE:
        return "preserve"
    return type_mask_str(t & MEMORY_ALL)


def parse_memory_type(value: str) -> int:
    """``parseMemoryType``: ``dram``, ``pmem``, ``hbm``, ``mixed``, comma-separated."""
    if value == "":
        return MEMORY_UNSPEC
    out = 0
    for part in value.split(","):
        t = MEMORY_NAMED_TYPES.get(part.lower())
        if t is None:
            raise ValueError(f"unknown memory type value '{part}'")
        out |= t
    return out


def _bool_config(value: bool | None) -> tuple[bool, int]:
    if value is not None:
        return value, PREF_CONFIG
    return False, PREF_IMPLICIT


def isolated_cpus_preference(opt: Any, pod: Pod, c: CachedContainer) -> tuple[bool, int]:
    s_val, s_scope, s_ok = pod.query_effective_annotation(REQUIRE_ISOLATED_KEY, c.name)
    p_val, p_scope, p_ok = pod.query_effective_annotation(PREFER_ISOLATED_KEY, c.name)
    if not s_ok and not p_ok:
        return _bool_config(opt.prefer_isolated)
    value = s_val if (s_ok and not p_ok) or (s_ok and s_scope <= p_scope) else p_val
    pref = parse_bool(value)
    if pref is None:
        return _bool_config(opt.prefer_isolated)
    return pref, PREF_ANNOTATED


def strict_isolated_cpus_preference(pod: Pod, c: CachedContainer) -> bool:
    _, s_scope, s_ok = pod.query_effective_annotation(REQUIRE_ISOLATED_KEY, c.name)
    _, p_scope, p_ok = pod.query_effective_annotation(PREFER_ISOLATED_KEY, c.name)
    return (s_ok and not p_ok) or (s_ok and p_ok and s_scope <= p_scope)


def shared_cpus_preference(opt: Any, pod: Pod, c: CachedContainer) -> tuple[bool, int]:
    value, ok = pod.effective_annotation(PREFER_SHARED_KEY, c.name)
    if not ok:
        return _bool_config(opt.prefer_shared)
    pref = parse_bool(value)
    if pref is None:
        return _bool_config(opt.prefer_shared)
    return pref, PREF_ANNOTATED


def cpu_prio_preference(pod: Pod, c: CachedContainer, fallback: int, default_prio: int) -> int:
    value, ok = pod.effective_annotation(PREFER_CPU_PRIORITY_KEY, c.name)
    if not ok:
        return fallback
    if value == "default":
        return default_prio
    return PRIO_BY_NAME.get(value, fallback)


def hide_hyperthreads_preference(c: CachedContainer) -> bool:
    value, ok = c.effective_annotation(HIDE_HYPERTHREADS_KEY)
    return ok and parse_bool(value) is True


def memory_type_preference(pod: Pod, c: CachedContainer) -> int:
    if c.preserve_memory_resources():
        return MEMORY_PRESERVE
    value, ok = pod.effective_annotation(MEMORY_TYPE_KEY, c.name)
    if not ok:
        return MEMORY_UNSPEC
    try:
        return parse_memory_type(value)
    except ValueError:
        return MEMORY_UNSPEC


def check_reserved_pool_namespaces(opt: Any, namespace: str) -> bool:
    if namespace == "kube-system":
        return True
    for pattern in opt.reserved_pool_namespaces:
        try:
            if match(pattern, namespace):
                return True
        except BadPattern:
            return False
    return False


def check_reserved_cpus_annotations(c: CachedContainer) -> tuple[bool, bool]:
    value, ok = c.effective_annotation(PREFER_RESERVED_KEY)
    if not ok:
        return False, False
    pref = parse_bool(value)
    if pref is None:
        return False, False
    return pref, True


def cpu_allocation_preferences(opt: Any, pod: Pod, c: CachedContainer, default_prio: int
                               ) -> tuple[int, int, int, bool, int, int]:
    """(full CPUs, milli-CPU fraction, limit, isolate, cpu type, priority)."""
    reqs = c.resource_requirements()
    request = reqs.cpu_request or 0
    qos = pod.qos_class
    fraction = request
    prio = default_prio
    limit = 0
    if qos == "Burstable":
        limit = reqs.cpu_limit if reqs.cpu_limit is not None else UNLIMITED_CPU
    elif qos == "Guaranteed":
        if reqs.cpu_limit is not None:
            limit = reqs.cpu_limit
    prefer_reserved, explicit = check_reserved_cpus_annotations(c)
    if c.preserve_cpu_resources():
        return 0, fraction, limit, False, CPU_PRESERVE, prio
    if prefer_reserved:
        return 0, fraction, limit, False, CPU_RESERVED, prio
    if check_reserved_pool_namespaces(opt, c.namespace) and not explicit:
        return 0, fraction, limit, False, CPU_RESERVED, prio
    if qos == "Burstable":
        return 0, fraction, limit, False, CPU_NORMAL, prio
    if qos == "BestEffort":
        return 0, 0, 0, False, CPU_NORMAL, prio
    cores, fraction = divmod(fraction, 1000)
    limit = 1000 * cores + fraction
    prefer_isolated, isol_kind = isolated_cpus_preference(opt, pod, c)
    prefer_shared, shared_kind = shared_cpus_preference(opt, pod, c)
    prio = cpu_prio_preference(pod, c, default_prio, default_prio)
    if cores == 0:
        return 0, fraction, limit, False, CPU_NORMAL, prio
    if cores < 2:
        if prefer_shared:
            return 0, 1000 * cores + fraction, limit, False, CPU_NORMAL, prio
        return cores, fraction, limit, prefer_isolated, CPU_NORMAL, prio
    if fraction > 0:
        if not prefer_shared and shared_kind == PREF_ANNOTATED:
            return cores, fraction, limit, prefer_isolated, CPU_NORMAL, prio
        return 0, 1000 * cores + fraction, limit, False, CPU_NORMAL, prio
    if prefer_shared:
        return 0, 1000 * cores, limit, False, CPU_NORMAL, prio
    return cores, 0, limit, prefer_isolated and isol_kind == PREF_ANNOTATED, CPU_NORMAL, prio


def memory_allocation_preference(pod: Pod, c: CachedContainer) -> tuple[int, int, int]:
    """(memory request, memory limit, memory type)."""
    reqs = c.resource_requirements()
    return reqs.memory_request or 0, reqs.memory_limit or 0, memory_type_preference(pod, c)


def pick_by_hints_preference(pod: Pod, c: CachedContainer) -> bool:
    value, ok = pod.effective_annotation(PICK_BY_HINTS_KEY, c.name)
    return ok and parse_bool(value) is True


def cpu_class_preference(opt: Any, c: CachedContainer) -> tuple[str, bool]:
    """(class, container-scoped) for Guaranteed containers; raises for a container-scoped class
    on another QoS class."""
    value, scope, ok = c.query_effective_annotation(CPU_CLASS_KEY)
    qos = c.qos_class
    if not ok:
        if qos == "Guaranteed":
            return opt.default_exclusive_cpu_class, False
        return "", False
    if qos == "Guaranteed":
        return value, scope == CONTAINER_SCOPED
    if scope == CONTAINER_SCOPED:
        raise ValueError(f'CPU class ("{value}") invalid for non-Guaranteed QoS class ({qos})')
    return "", False


def cold_start_preference(pod: Pod, c: CachedContainer) -> float:
    """The annotated cold start duration in seconds (0 = none); raises on a bad value."""
    value, ok = pod.effective_annotation(COLD_START_KEY, c.name)
    if not ok:
        return 0.0
    from ....model.duration import parse_duration
    from ...annotations import parse_yaml_value

    try:
        doc = parse_yaml_value(value)
    except ValueError as exc:
        raise ValueError(f'invalid cold start preference "{value}": {exc}') from None
    if doc is None:
        return 0.0
    # the Go struct has no json tag: its field matches "duration" in any case
    keys = [k for k in doc] if isinstance(doc, dict) else None
    if keys is None or any(str(k).lower() != "duration" for k in keys):
        raise ValueError(f'invalid cold start preference "{value}": expected {{duration: DURATION}}')
    dur = doc[keys[0]] if keys else None
    if dur is None:
        return 0.0
    try:
        seconds = parse_duration(str(dur)).seconds
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f'invalid cold start preference "{value}": {exc}') from None
    if seconds < 0 or seconds > 3600:
        raise ValueError(f"cold start duration {dur} out of range")
    return seconds


def scheduling_class_preference(opt: Any, c: CachedContainer) -> Any:
    """The annotated scheduling class, else the namespace's, else the QoS class's; raises for an
    unknown annotated class."""
    name, ok = c.effective_annotation(SCHEDULING_CLASS_KEY)
    if ok:
        sc = opt.scheduling_class(name)
        if sc is None:
            raise ValueError(f'unknown scheduling class "{name}"')
        return sc
    ns = opt.namespace_scheduling_classes.get(c.namespace)
    if ns is not None:
        return opt.scheduling_class(ns)
    qos = opt.podqos_scheduling_classes.get(c.qos_class.lower())
    if qos is not None:
        return opt.scheduling_class(qos)
    return None
