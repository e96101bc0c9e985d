"""ResourceQuota, LimitRange (core/v1) and PriorityClass (scheduling/v1): typed views validated as the API server validates them.

Only the objects: what the admission plugins (LimitRanger, ResourceQuota, Priority) do with
them belongs to the scheduler package. Validation follows ``pkg/apis/core/validation``
(``ValidateResourceQuota``, ``ValidateLimitRange``) and ``pkg/apis/scheduling/validation``;
messages read like the API server's field errors (``Invalid value: "2": min value 2 is greater
than max value 1``), under the field path (``spec.limits[0].min.cpu``).
"""

from __future__ import annotations

import re
from typing import Any, Final, Mapping

from ..errors import InputError, join_path
from .kinds import check_builtin
from .meta import KubeStruct, ObjectMeta, ResourceList, check_kind, convert
from .quantity import Quantity

# --- shared rules ---------------------------------------------------------------------------------
_DNS_SUBDOMAIN: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME: Final = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")

#: Resources whose quantities must be whole numbers (``IsIntegerResourceName``).
_INTEGER_RESOURCES: Final = frozenset({
    "pods", "quota", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})


def _invalid(value: object, message: str, path: str) -> InputError:
    return InputError(f'Invalid value: "{value}": {message}', path=path)


def _is_qualified(name: str) -> bool:
    prefix, slash, short = name.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return bool(short) and len(short) <= 63 and _QUALIFIED_NAME.match(short) is not None


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or name.startswith("count/") or (
        "/" in name and not name.startswith(("requests.", "limits.")) and "kubernetes.io/" not in name
        and not name.startswith("hugepages-"))


def _check_quantity_value(name: str, q: Quantity, path: str) -> None:
    """``ValidateResourceQuantityValue``: non-negative, and whole for integer resources."""
    if q.sign() < 0:
        raise _invalid(q, "must be greater than or equal to 0", path)
    if _is_integer_resource(name) and q.milli_value() % 1000 != 0:
        raise _invalid(q, "must be an integer", path)


def _check_name(meta: ObjectMeta, path: str = "metadata.name") -> None:
    if not meta.name:
        raise InputError("Required value: name or generateName is required", path=path)
    if len(meta.name) > 253 or not _DNS_SUBDOMAIN.match(meta.name):
        raise _invalid(meta.name, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                       "characters, '-' or '.', and must start and end with an alphanumeric character", path)


# === ResourceQuota =================================================================================
QUOTA_SCOPES: Final = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
                       "CrossNamespacePodAffinity", "VolumeAttributesClass")
SCOPE_SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")
#: Scopes that only take ``operator: Exists`` in a scope selector.
_EXISTS_ONLY_SCOPES: Final = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort",
                              "CrossNamespacePodAffinity")
#: Standard quota resource names (``standardQuotaResources`` plus the ``requests.``/``limits.`` forms).
STANDARD_QUOTA_RESOURCES: Final = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "quota",
    "services", "replicationcontrollers", "resourcequotas", "secrets", "persistentvolumeclaims", "configmaps",
    "services.nodeports", "services.loadbalancers",
})
#: Resources a scope can limit (``podObjectCountQuotaResources`` + compute) for the pod scopes.
_POD_SCOPE_RESOURCES: Final = frozenset({
    "pods", "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory",
})


class ScopedResourceSelectorRequirement(KubeStruct, frozen=True):
    scope_name: str = ""
    operator: str = ""
    values: tuple[str, ...] = ()


class ScopeSelector(KubeStruct, frozen=True):
    match_expressions: tuple[ScopedResourceSelectorRequirement, ...] = ()


class ResourceQuotaSpec(KubeStruct, frozen=True):
    hard: ResourceList = {}
    scopes: tuple[str, ...] = ()
    scope_selector: ScopeSelector | None = None


class ResourceQuotaStatus(KubeStruct, frozen=True):
    hard: ResourceList = {}
    used: ResourceList = {}


class ResourceQuota(KubeStruct, frozen=True):
    api_version: str = "v1"
    kind: str = "ResourceQuota"
    metadata: ObjectMeta = ObjectMeta()
    spec: ResourceQuotaSpec = ResourceQuotaSpec()
    status: ResourceQuotaStatus = ResourceQuotaStatus()

    def all_scopes(self) -> tuple[str, ...]:
        """Scopes named in ``scopes`` and in the scope selector, in that order."""
        selector = self.spec.scope_selector
        return self.spec.scopes + tuple(r.scope_name for r in (selector.match_expressions if selector else ()))


def validate_resource_quota(rq: ResourceQuota) -> None:
    _check_name(rq.metadata)
    for name, q in rq.spec.hard.items():
        path = f"spec.hard.{name}"
        if "/" not in name and name not in STANDARD_QUOTA_RESOURCES and not name.startswith(
                ("requests.hugepages-", "hugepages-", "count/")):
            raise _invalid(name, "must be a standard resource for quota", path)
        if "/" in name and not name.startswith("count/") and not _is_qualified(name.removeprefix("requests.")):
            raise _invalid(name, "must be a standard resource for quota", path)
        _check_quantity_value(name, q, path)
    for i, scope in enumerate(rq.spec.scopes):
        if scope not in QUOTA_SCOPES:
            raise _invalid(scope, "unsupported scope", f"spec.scopes[{i}]")
    selector = rq.spec.scope_selector
    for i, req in enumerate(selector.match_expressions if selector else ()):
        path = f"spec.scopeSelector.matchExpressions[{i}]"
        if req.scope_name not in QUOTA_SCOPES:
            raise _invalid(req.scope_name, "unsupported scope", f"{path}.scopeName")
        if req.operator not in SCOPE_SELECTOR_OPERATORS:
            raise _invalid(req.operator, "not a valid selector operator", f"{path}.operator")
        if req.scope_name in _EXISTS_ONLY_SCOPES and req.operator != "Exists":
            raise _invalid(req.operator, "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
                           "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                           "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
                           f"{path}.operator")
        if req.operator in ("In", "NotIn") and not req.values:
            raise InputError("Required value: must be at least one value when `operator` is 'In' or 'NotIn' for "
                             "scope selector", path=f"{path}.values")
        if req.operator in ("Exists", "DoesNotExist") and req.values:
            raise _invalid(list(req.values), "must be no value when `operator` is 'Exist' or 'DoesNotExist' for "
                           "scope selector", f"{path}.values")
    scopes = rq.all_scopes()
    for scope in scopes:
        if scope in ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
                     "CrossNamespacePodAffinity"):
            allowed = {"pods"} if scope == "BestEffort" else None
            for name in rq.spec.hard:
                ok = name in allowed if allowed is not None else (
                    name in _POD_SCOPE_RESOURCES or name.startswith(("requests.", "limits.", "hugepages-"))
                    or name in ("ephemeral-storage",) or _is_qualified(name) and "/" in name)
                if not ok:
                    raise _invalid(name, "unsupported scope applied to resource", f"spec.hard.{name}")
    for a, b in (("Terminating", "NotTerminating"), ("BestEffort", "NotBestEffort")):
        if a in scopes and b in scopes:
            raise _invalid(list(scopes), "conflicting scopes", "spec.scopes")


def resource_quota_from_dict(obj: dict[str, Any], file: str | None = None, *, checked: bool = False) -> ResourceQuota:
    check_kind(obj, ("ResourceQuota",), ("v1",), file)
    if not checked:
        check_builtin(obj, "v1", "ResourceQuota", file)
    rq = convert(obj, ResourceQuota, file=file)
    try:
        validate_resource_quota(rq)
    except InputError as exc:
        raise exc.in_file(file) from None
    return rq


# === LimitRange ====================================================================================
LIMIT_TYPES: Final = ("Pod", "Container", "PersistentVolumeClaim")


class LimitRangeItem(KubeStruct, frozen=True):
    type: str = ""
    max: ResourceList = {}
    min: ResourceList = {}
    default: ResourceList = {}
    default_request: ResourceList = {}
    max_limit_request_ratio: ResourceList = {}


class LimitRangeSpec(KubeStruct, frozen=True):
    limits: tuple[LimitRangeItem, ...] = ()


class LimitRange(KubeStruct, frozen=True):
    api_version: str = "v1"
    kind: str = "LimitRange"
    metadata: ObjectMeta = ObjectMeta()
    spec: LimitRangeSpec = LimitRangeSpec()

    def items_of(self, limit_type: str) -> tuple[LimitRangeItem, ...]:
        return tuple(item for item in self.spec.limits if item.type == limit_type)


def _overcommit_allowed(name: str) -> bool:
    return ("/" not in name or "kubernetes.io/" in name) and not name.startswith("hugepages-")


def _fmt_float(x: float) -> str:
    return f"{x:.6f}"  # Go's %f


def validate_limit_range(lr: LimitRange) -> None:
    """``ValidateLimitRange``: the first violation, with the API server's message."""
    _check_name(lr.metadata)
    seen: set[str] = set()
    for i, item in enumerate(lr.spec.limits):
        path = f"spec.limits[{i}]"
        if not item.type:
            raise InputError("Required value", path=f"{path}.type")
        if item.type not in LIMIT_TYPES and not _is_qualified(item.type):
            raise _invalid(item.type, "must be a standard limit type or fully qualified", f"{path}.type")
        if item.type in seen:
            raise InputError(f'Duplicate value: "{item.type}"', path=f"{path}.type")
        seen.add(item.type)
        for field in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            values: Mapping[str, Quantity] = getattr(item, _snake(field))
            for name, q in values.items():
                p = join_path(f"{path}.{field}", name)
                if "/" in name and not _is_qualified(name):
                    raise _invalid(name, "must be a standard resource type or fully qualified", p)
                _check_quantity_value(name, q, p)
        if item.type == "Pod":
            if item.default:
                raise InputError("Forbidden: may not be specified when `type` is 'Pod'", path=f"{path}.default")
            if item.default_request:
                raise InputError("Forbidden: may not be specified when `type` is 'Pod'",
                                 path=f"{path}.defaultRequest")
        if item.type == "PersistentVolumeClaim":
            if "storage" not in item.min and "storage" not in item.max:
                raise InputError("Required value: either minimum or maximum storage value is required, but neither "
                                 "was provided", path=f"{path}.limits")
        _check_limit_item(item, path)


def _check_limit_item(item: LimitRangeItem, path: str) -> None:
    keys = dict.fromkeys([*item.max, *item.min, *item.default, *item.default_request, *item.max_limit_request_ratio])
    for k in keys:
        mx, mn = item.max.get(k), item.min.get(k)
        df, dr = item.default.get(k), item.default_request.get(k)
        ratio = item.max_limit_request_ratio.get(k)
        if mn is not None and mx is not None and mn > mx:
            raise _invalid(mn, f"min value {mn} is greater than max value {mx}", join_path(f"{path}.min", k))
        if dr is not None and mn is not None and mn > dr:
            raise _invalid(dr, f"min value {mn} is greater than default request value {dr}",
                           join_path(f"{path}.defaultRequest", k))
        if dr is not None and mx is not None and dr > mx:
            raise _invalid(dr, f"default request value {dr} is greater than max value {mx}",
                           join_path(f"{path}.defaultRequest", k))
        if dr is not None and df is not None and dr > df:
            raise _invalid(dr, f"default request value {dr} is greater than default limit value {df}",
                           join_path(f"{path}.defaultRequest", k))
        if df is not None and mn is not None and mn > df:
            raise _invalid(df, f"min value {mn} is greater than default value {df}", join_path(f"{path}.default", k))
        if df is not None and mx is not None and df > mx:
            raise _invalid(df, f"default value {df} is greater than max value {mx}", join_path(f"{path}.default", k))
        if ratio is not None:
            if ratio < Quantity.from_int(1):
                raise _invalid(ratio, f"ratio {ratio} is less than 1", join_path(f"{path}.maxLimitRequestRatio", k))
            if mx is not None and mn is not None and mn.value() != 0:
                limit = float(mx.value()) / float(mn.value())
                if float(ratio.value()) > limit:
                    raise _invalid(ratio, f"ratio {ratio} is greater than max/min = {_fmt_float(limit)}",
                                   join_path(f"{path}.maxLimitRequestRatio", k))
        if not _overcommit_allowed(k) and df is not None and dr is not None and df != dr:
            raise _invalid(dr, f"default value {df} must equal to defaultRequest value {dr} in {k}",
                           join_path(f"{path}.defaultRequest", k))


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def limit_range_from_dict(obj: dict[str, Any], file: str | None = None, *, checked: bool = False) -> LimitRange:
    check_kind(obj, ("LimitRange",), ("v1",), file)
    if not checked:
        check_builtin(obj, "v1", "LimitRange", file)
    lr = convert(obj, LimitRange, file=file)
    try:
        validate_limit_range(lr)
    except InputError as exc:
        raise exc.in_file(file) from None
    return lr


# === PriorityClass =================================================================================
HIGHEST_USER_DEFINABLE_PRIORITY: Final = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY: Final = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PRIORITY_CLASS_PREFIX: Final = "system-"
#: The classes the API server creates itself, with their fixed values.
SYSTEM_PRIORITY_CLASSES: Final[Mapping[str, int]] = {
    "system-node-critical": SYSTEM_CRITICAL_PRIORITY + 1000,
    "system-cluster-critical": SYSTEM_CRITICAL_PRIORITY,
}
PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")
_INT32: Final = (-(2**31), 2**31 - 1)


class PriorityClass(KubeStruct, frozen=True):
    api_version: str = "scheduling.k8s.io/v1"
    kind: str = "PriorityClass"
    metadata: ObjectMeta = ObjectMeta()
    value: int = 0
    global_default: bool = False
    description: str = ""
    preemption_policy: str = "PreemptLowerPriority"

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def is_system(self) -> bool:
        return self.metadata.name in SYSTEM_PRIORITY_CLASSES


def validate_priority_class(pc: PriorityClass) -> None:
    _check_name(pc.metadata)
    name = pc.metadata.name
    if not _INT32[0] <= pc.value <= _INT32[1]:
        raise _invalid(pc.value, "must be a 32-bit integer", "value")
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        want = SYSTEM_PRIORITY_CLASSES.get(name)
        if want is None:
            raise InputError(f"Forbidden: priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are "
                             "reserved for system use only", path="metadata.name")
        if pc.value != want:
            raise _invalid(pc.value, f"value of {name} PriorityClass must be {want}", "value")
        if pc.global_default:
            raise _invalid(True, f"globalDefault of {name} PriorityClass must be false", "globalDefault")
    elif pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        raise InputError(f"Forbidden: maximum allowed value of a user defined priority is "
                         f"{HIGHEST_USER_DEFINABLE_PRIORITY}", path="value")
    if pc.preemption_policy not in PREEMPTION_POLICIES:
        raise InputError(f'Unsupported value: "{pc.preemption_policy}": supported values: "Never", '
                         '"PreemptLowerPriority"', path="preemptionPolicy")


def priority_class_from_dict(obj: dict[str, Any], file: str | None = None, *, checked: bool = False) -> PriorityClass:
    versions = ("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha1")
    check_kind(obj, ("PriorityClass",), versions, file)
    if not checked:
        api = obj.get("apiVersion")
        check_builtin(obj, api if api in versions else versions[0], "PriorityClass", file)
    pc = convert(obj, PriorityClass, file=file)
    try:
        validate_priority_class(pc)
    except InputError as exc:
        raise exc.in_file(file) from None
    return pc


def check_single_global_default(classes: list[PriorityClass] | tuple[PriorityClass, ...]) -> None:
    """Only one PriorityClass may be the global default (the Priority admission plugin's rule)."""
    default = None
    for pc in classes:
        if pc.global_default:
            if default is not None:
                raise InputError(f"PriorityClass {default.name} is already marked as default. Only one default "
                                 "can exist", path=f"PriorityClass {pc.name}: globalDefault")
            default = pc


def global_default_priority(classes: list[PriorityClass] | tuple[PriorityClass, ...]) -> PriorityClass | None:
    """The class pods without ``priorityClassName`` get (the lowest-valued one if several claim it)."""
    defaults = [pc for pc in classes if pc.global_default]
    return min(defaults, key=lambda pc: pc.value) if defaults else None


def _register() -> None:
    """Make the three kinds loadable through :func:`kubetwin.model.objects.load_objects`."""
    from .objects import register_kind

    register_kind("ResourceQuota", lambda obj, file: resource_quota_from_dict(obj, file, checked=True))
    register_kind("LimitRange", lambda obj, file: limit_range_from_dict(obj, file, checked=True))
    register_kind("PriorityClass", lambda obj, file: priority_class_from_dict(obj, file, checked=True))


_register()
