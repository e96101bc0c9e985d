"""resource.k8s.io/v1 objects as immutable values, read from manifests once.

The allocator never looks at raw dicts: every field it reads is parsed and checked here, with
the Kubernetes field path of whatever is wrong. Older API versions are converted to the v1
shape first (:mod:`kubetwin.dra.convert`). Validation follows the API server where it matters
for allocation (shapes, names, one-of fields, limits); cross-object consistency (duplicate
device names across slices, counters referring to unknown sets) is left to the allocator,
which treats it as Kubernetes does (an *invalid pool*, not a rejected object).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import InputError, join_path
from ..fastinit import fast_init
from ..model.pod import validate_labels
from ..model.quantity import Quantity, parse_quantity

# Limits from k8s.io/api/resource/v1 types.go.
RESULTS_MAX: Final = 32
REQUESTS_MAX: Final = 32
SUBREQUESTS_MAX: Final = 8
CONSTRAINTS_MAX: Final = 32
CONFIG_MAX: Final = 32
SELECTORS_MAX: Final = 32
TOLERATIONS_MAX: Final = 16
DEVICES_PER_SLICE_MAX: Final = 128
DEVICES_PER_SLICE_WITH_EXTRAS_MAX: Final = 64
ATTRIBUTES_AND_CAPACITIES_MAX: Final = 32
ATTRIBUTE_VALUE_MAX_LENGTH: Final = 64
COUNTER_SETS_MAX: Final = 8
COUNTERS_PER_SET_MAX: Final = 32
CONSUMES_COUNTERS_MAX: Final = 2
TAINTS_MAX: Final = 16
BINDING_CONDITIONS_MAX: Final = 4
RESERVED_FOR_MAX: Final = 256
CEL_EXPRESSION_MAX_LENGTH: Final = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH: Final = 10 * 1024

ALLOCATION_MODES: Final = ("ExactCount", "All")
TAINT_EFFECTS: Final = ("None", "NoSchedule", "NoExecute")

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")

SCALAR_KINDS: Final = ("int", "bool", "string", "version")
LIST_KINDS: Final = ("ints", "bools", "strings", "versions")


# --------------------------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DeviceAttribute:
    """One attribute value; ``kind`` names the one field that is set (``""`` = none set).

    ``value`` is the Python value (tuple for the list kinds). Equality is by kind and value,
    which is how ``matchAttribute`` compares (versions as strings).
    """

    kind: str
    value: Any

    @property
    def is_list(self) -> bool:
        return self.kind in LIST_KINDS

    def as_set(self) -> frozenset:
        """Set view for list-typed constraint semantics; a scalar is a set of one."""
        base = self.kind[:-1] if self.is_list else self.kind
        items = self.value if self.is_list else (self.value,)
        return frozenset((base, v) for v in items)

    def to_api(self) -> dict[str, Any]:
        return {self.kind: list(self.value) if self.is_list else self.value} if self.kind else {}


@dataclass(frozen=True, slots=True)
class CapacityRequestPolicy:
    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] | None = None
    valid_range_min: Quantity | None = None
    valid_range_max: Quantity | None = None
    valid_range_step: Quantity | None = None
    has_valid_range: bool = False


@dataclass(frozen=True, slots=True)
class DeviceCapacity:
    value: Quantity
    request_policy: CapacityRequestPolicy | None = None


@dataclass(frozen=True, slots=True)
class DeviceCounterConsumption:
    counter_set: str
    counters: Mapping[str, Quantity]


@dataclass(frozen=True, slots=True)
class CounterSet:
    name: str
    counters: Mapping[str, Quantity]


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    key: str
    value: str
    effect: str
    time_added: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    def tolerates(self, taint: DeviceTaint) -> bool:
        """resourceclaim.ToleratesTaint: effect, key and (for Equal) value must fit."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("Equal", ""):
            return self.value == taint.value
        return False


@dataclass(frozen=True, slots=True, eq=False)
class Device:
    """A device of a ResourceSlice (the v1 flattened shape).

    Compared by identity: the allocator keys caches by the object, which stays the same for
    the lifetime of the slice. A device is a value, not a place: devices written alike in
    several slices (one machine model on many nodes) are one object
    (:func:`parse_resource_slice`), so a cache keyed by the object must not depend on the
    slice, pool or driver it was found in (key those separately, as CEL's ``device.driver``).
    """

    name: str
    attributes: Mapping[str, DeviceAttribute] = field(default_factory=dict)
    capacity: Mapping[str, DeviceCapacity] = field(default_factory=dict)
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    node_name: str | None = None
    node_selector: Mapping[str, Any] | None = None
    all_nodes: bool | None = None
    taints: tuple[DeviceTaint, ...] = ()
    binds_to_node: bool = False
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    allow_multiple_allocations: bool | None = None

    @property
    def has_list_attributes(self) -> bool:
        return any(a.is_list for a in self.attributes.values())


@dataclass(frozen=True, slots=True, eq=False)
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int
    resource_slice_count: int
    node_name: str | None = None
    node_selector: Mapping[str, Any] | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()
    source: str = ""


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str | None, ...] = ()   # None: a selector without ``cel`` (future type)
    config: tuple[Mapping[str, Any], ...] = ()  # DeviceConfiguration objects ({opaque: ...})
    extended_resource_name: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceSubRequest:
    """An ``exactly`` request or a ``firstAvailable`` entry: what the allocator searches for."""

    name: str
    device_class_name: str
    selectors: tuple[str | None, ...] = ()
    allocation_mode: str = "ExactCount"
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: Mapping[str, Quantity] | None = None   # CapacityRequirements.requests; None = unset


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    name: str
    exactly: DeviceSubRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceClaimConfiguration:
    requests: tuple[str, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)  # {opaque: {driver, parameters}}


@fast_init
@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    """One ``status.allocation.devices.results`` entry of an already-allocated claim."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool = False
    share_id: str | None = None
    consumed_capacity: Mapping[str, Quantity] | None = None


@fast_init
@dataclass(frozen=True, slots=True, eq=False)
class ResourceClaim:
    name: str
    namespace: str = ""
    uid: str = ""
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceClaimConfiguration, ...] = ()
    allocated: tuple[AllocatedDevice, ...] | None = None  # None: not allocated
    reserved_for: tuple[Mapping[str, Any], ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)
    #: ``status.allocation.nodeSelector``: the nodes an allocated claim can be used from
    #: (None: every node, or not allocated).
    node_selector: Mapping[str, Any] | None = None

    @property
    def ref(self) -> str:
        """How upstream names the claim in messages (``klog.KObj``)."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    name: str
    namespace: str
    metadata: Mapping[str, Any]
    spec: Mapping[str, Any]
    raw: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------
# parsing helpers
# --------------------------------------------------------------------------------------------
def _mapping_values(value: Any) -> Iterable[Any]:
    """The values of ``value`` if it is a mapping, else none."""
    return value.values() if isinstance(value, dict) else ()


def _obj(value: Any, path: str, what: str = "object") -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"must be an {what} (mapping), not {_type(value)}", path=path)
    return value


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"must be a list, not {_type(value)}", path=path)
    return value


def _str(value: Any, path: str, required: bool = False, what: str = "") -> str:
    if value is None or value == "":
        if required:
            raise InputError("Required value" + (f": {what}" if what else ""), path=path)
        return ""
    if not isinstance(value, str):
        raise InputError(f"must be a string, not {_type(value)}", path=path)
    return value


def _int(value: Any, path: str, default: int | None = None) -> int:
    if value is None:
        if default is None:
            raise InputError("Required value", path=path)
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"must be an integer, not {_type(value)}", path=path)
    return value


def _bool(value: Any, path: str) -> bool | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise InputError(f"must be true or false, not {_type(value)}", path=path)
    return value


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {"dict": "object", "list": "list", "str": "string", "int": "integer", "float": "number"}.get(
        type(value).__name__, type(value).__name__)


def _max(items: list[Any], limit: int, path: str) -> None:
    if len(items) > limit:
        raise InputError(f"Too many: {len(items)}: must have at most {limit} items", path=path)


def _name(meta: Mapping[str, Any], path: str = "metadata") -> str:
    return _str(meta.get("name"), join_path(path, "name"), required=True, what="name or generateName is required")


def validate_qualified_name(name: str, path: str) -> None:
    """A QualifiedName: ``id`` (C identifier, ≤32) or ``domain/id`` (DNS subdomain ≤63)."""
    domain, sep, ident = name.rpartition("/")
    if sep and (not domain or len(domain) > 63 or not _DNS_SUBDOMAIN.match(domain)):
        raise InputError(f"Invalid value: {name!r}: the domain must be a DNS subdomain of at most 63 characters",
                         path=path)
    if not ident or len(ident) > 32 or not _C_IDENTIFIER.match(ident):
        raise InputError(f"Invalid value: {name!r}: the name must be an identifier of at most 32 characters "
                         "(letters, digits, '_' and '-'; starting with a letter or '_')", path=path)


def _driver_name(value: Any, path: str) -> str:
    name = _str(value, path, required=True)
    if len(name) > 63 or not _DNS_SUBDOMAIN.match(name.lower()) or name != name.lower():
        raise InputError(f"Invalid value: {name!r}: a driver name must be a lowercase DNS subdomain of at most "
                         "63 characters", path=path)
    return name


def _selectors(items: Any, path: str) -> tuple[str | None, ...]:
    out: list[str | None] = []
    lst = _list(items, path)
    _max(lst, SELECTORS_MAX, path)
    for i, sel in enumerate(lst):
        p = join_path(path, i)
        sel = _obj(sel, p)
        cel = sel.get("cel")
        if cel is None:
            out.append(None)  # unknown selector type: the allocator reports it, as upstream
            continue
        cel = _obj(cel, join_path(p, "cel"))
        expr = _str(cel.get("expression"), join_path(p, "cel.expression"), required=True)
        if len(expr) > CEL_EXPRESSION_MAX_LENGTH:
            raise InputError(f"Too long: may not be more than {CEL_EXPRESSION_MAX_LENGTH} bytes",
                             path=join_path(p, "cel.expression"))
        _check_compiles(expr, join_path(p, "cel.expression"))
        out.append(expr)
    return tuple(out)


def _check_compiles(expression: str, path: str) -> None:
    """The API server compiles a selector when the object is created and refuses one that does not
    compile (``validateCELSelector``), so a bad expression is an input error here, not a failure at
    allocation. It is compiled in the widest environment (every library a feature gate can add),
    as the API server's environment for stored expressions: whether the allocator's features
    allow what it uses is the allocator's verdict."""
    from .cel import CELError, CELOptions, compile_selector
    from .celfields import device_fields, fix_for

    try:
        compile_selector(expression, CELOptions(consumable_capacity=True, list_type_attributes=True))
    except CELError as exc:
        shown = expression if len(expression) <= 200 else expression[:200] + "..."
        raise InputError(f"Invalid value: {_go_quote(shown)}: {exc}", path=path,
                         fix=fix_for(str(exc), device_fields(True))) from None


def _go_quote(text: str) -> str:
    """A string as Go's ``%q`` writes it in field errors."""
    import json

    return json.dumps(text, ensure_ascii=False)


def _node_selector(value: Any, path: str) -> Mapping[str, Any] | None:
    if value is None:
        return None
    sel = _obj(value, path)
    terms = _list(sel.get("nodeSelectorTerms"), join_path(path, "nodeSelectorTerms"))
    for i, term in enumerate(terms):
        tp = join_path(join_path(path, "nodeSelectorTerms"), i)
        term = _obj(term, tp)
        for key in ("matchExpressions", "matchFields"):
            for j, req in enumerate(_list(term.get(key), join_path(tp, key))):
                rp = join_path(join_path(tp, key), j)
                req = _obj(req, rp)
                _str(req.get("key"), join_path(rp, "key"), required=True)
                _str(req.get("operator"), join_path(rp, "operator"), required=True)
                for k, v in enumerate(_list(req.get("values"), join_path(rp, "values"))):
                    _str(v, join_path(join_path(rp, "values"), k))
    return sel


# --------------------------------------------------------------------------------------------
# DeviceClass
# --------------------------------------------------------------------------------------------
def parse_device_class(obj: Mapping[str, Any]) -> DeviceClass:
    meta = _obj(obj.get("metadata"), "metadata")
    name = _name(meta)
    spec = _obj(obj.get("spec"), "spec")
    selectors = _selectors(spec.get("selectors"), "spec.selectors")
    config = tuple(_device_configuration(c, join_path("spec.config", i))
                   for i, c in enumerate(_list(spec.get("config"), "spec.config")))
    if len(config) > CONFIG_MAX:
        raise InputError(f"Too many: {len(config)}: must have at most {CONFIG_MAX} items", path="spec.config")
    ext = spec.get("extendedResourceName")
    return DeviceClass(name, selectors, config, _str(ext, "spec.extendedResourceName") or None)


def _device_configuration(value: Any, path: str) -> Mapping[str, Any]:
    cfg = _obj(value, path)
    opaque = cfg.get("opaque")
    if opaque is None:
        raise InputError("Required value: exactly one configuration type (opaque) must be set",
                         path=join_path(path, "opaque"))
    opaque = _obj(opaque, join_path(path, "opaque"))
    _driver_name(opaque.get("driver"), join_path(path, "opaque.driver"))
    if "parameters" not in opaque:
        raise InputError("Required value", path=join_path(path, "opaque.parameters"))
    return {"opaque": opaque}


# --------------------------------------------------------------------------------------------
# ResourceSlice
# --------------------------------------------------------------------------------------------
def _attribute(value: Any, path: str) -> DeviceAttribute:
    attr = _obj(value, path)
    set_kinds = [k for k in SCALAR_KINDS + LIST_KINDS if attr.get(k) is not None]
    if len(set_kinds) > 1:
        raise InputError(f"Invalid value: exactly one value must be specified, found {', '.join(set_kinds)}",
                         path=path)
    if not set_kinds:
        # The API server rejects this; the allocator (and CEL) treat it as an unsupported value.
        return DeviceAttribute("", None)
    kind = set_kinds[0]
    v = attr[kind]
    p = join_path(path, kind)
    if kind == "int":
        return DeviceAttribute(kind, _int(v, p))
    if kind == "bool":
        return DeviceAttribute(kind, _bool(v, p))
    if kind in ("string", "version"):
        s = _str(v, p)
        if len(s) > ATTRIBUTE_VALUE_MAX_LENGTH:
            raise InputError(f"Too long: may not be more than {ATTRIBUTE_VALUE_MAX_LENGTH} bytes", path=p)
        if kind == "version" and not _SEMVER.match(s):
            raise InputError(f"Invalid value: {s!r}: must be a string compatible with semver.org spec 2.0.0", path=p)
        return DeviceAttribute(kind, s)
    items = _list(v, p)
    converters: dict[str, Callable[[Any, str], Any]] = {"ints": _int, "bools": _bool, "strings": _str,
                                                        "versions": _str}
    conv = converters[kind]
    return DeviceAttribute(kind, tuple(conv(x, join_path(p, i)) for i, x in enumerate(items)))


def _capacity(value: Any, path: str) -> DeviceCapacity:
    cap = _obj(value, path)
    q = parse_quantity(cap.get("value"), join_path(path, "value")) if "value" in cap else None
    if q is None:
        raise InputError("Required value", path=join_path(path, "value"))
    policy = None
    if cap.get("requestPolicy") is not None:
        pp = join_path(path, "requestPolicy")
        pol = _obj(cap["requestPolicy"], pp)
        default = parse_quantity(pol["default"], join_path(pp, "default")) if pol.get("default") is not None else None
        values = None
        if pol.get("validValues") is not None:
            values = tuple(parse_quantity(v, join_path(join_path(pp, "validValues"), i))
                           for i, v in enumerate(_list(pol["validValues"], join_path(pp, "validValues"))))
        rng = pol.get("validRange")
        if values is not None and rng is not None:
            raise InputError("Invalid value: only one of validValues and validRange may be set", path=pp)
        rmin = rmax = rstep = None
        if rng is not None:
            rp = join_path(pp, "validRange")
            rng = _obj(rng, rp)
            rmin = parse_quantity(rng["min"], join_path(rp, "min")) if rng.get("min") is not None else None
            rmax = parse_quantity(rng["max"], join_path(rp, "max")) if rng.get("max") is not None else None
            rstep = parse_quantity(rng["step"], join_path(rp, "step")) if rng.get("step") is not None else None
            if rstep is not None and rstep.sign() <= 0:
                raise InputError("Invalid value: step must be positive", path=join_path(rp, "step"))
        policy = CapacityRequestPolicy(default, values, rmin, rmax, rstep, rng is not None)
    return DeviceCapacity(q, policy)


def _counters(value: Any, path: str) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    counters = _obj(value, path)
    if len(counters) > COUNTERS_PER_SET_MAX:
        raise InputError(f"Too many: {len(counters)}: must have at most {COUNTERS_PER_SET_MAX} counters", path=path)
    for name, c in counters.items():
        cp = join_path(path, str(name))
        c = _obj(c, cp)
        if "value" not in c:
            raise InputError("Required value", path=join_path(cp, "value"))
        out[str(name)] = parse_quantity(c["value"], join_path(cp, "value"))
    return out


def _taint(value: Any, path: str) -> DeviceTaint:
    t = _obj(value, path)
    key = _str(t.get("key"), join_path(path, "key"), required=True)
    effect = _str(t.get("effect"), join_path(path, "effect"), required=True)
    if effect not in TAINT_EFFECTS:
        raise InputError(f'Unsupported value: "{effect}": supported values: "None", "NoExecute", "NoSchedule"',
                         path=join_path(path, "effect"))
    return DeviceTaint(key, _str(t.get("value"), join_path(path, "value")), effect,
                       _str(t.get("timeAdded"), join_path(path, "timeAdded")) or None)


def _toleration(value: Any, path: str) -> DeviceToleration:
    t = _obj(value, path)
    op = _str(t.get("operator"), join_path(path, "operator")) or "Equal"
    if op not in ("Equal", "Exists"):
        raise InputError(f'Unsupported value: "{op}": supported values: "Equal", "Exists"',
                         path=join_path(path, "operator"))
    effect = _str(t.get("effect"), join_path(path, "effect"))
    if effect and effect not in TAINT_EFFECTS:
        raise InputError(f'Unsupported value: "{effect}": supported values: "None", "NoExecute", "NoSchedule"',
                         path=join_path(path, "effect"))
    value_ = _str(t.get("value"), join_path(path, "value"))
    if op == "Exists" and value_:
        raise InputError("Invalid value: value must be empty when `operator` is 'Exists'", path=join_path(path, "value"))
    secs = t.get("tolerationSeconds")
    if secs is not None:
        secs = _int(secs, join_path(path, "tolerationSeconds"))
    return DeviceToleration(_str(t.get("key"), join_path(path, "key")), op, value_, effect, secs, dict(t))


def _device(value: Any, path: str, per_device: bool) -> Device:
    d = _obj(value, path)
    name = _str(d.get("name"), join_path(path, "name"), required=True)
    if len(name) > 63 or not _DNS_LABEL.match(name):
        raise InputError(f"Invalid value: {name!r}: a device name must be a DNS label (lowercase letters, digits "
                         "and '-', at most 63 characters)", path=join_path(path, "name"))
    attrs: dict[str, DeviceAttribute] = {}
    for key, v in _obj(d.get("attributes"), join_path(path, "attributes")).items():
        ap = join_path(join_path(path, "attributes"), str(key))
        validate_qualified_name(str(key), ap)
        attrs[str(key)] = _attribute(v, ap)
    caps: dict[str, DeviceCapacity] = {}
    for key, v in _obj(d.get("capacity"), join_path(path, "capacity")).items():
        cp = join_path(join_path(path, "capacity"), str(key))
        validate_qualified_name(str(key), cp)
        caps[str(key)] = _capacity(v, cp)
    if len(attrs) + len(caps) > ATTRIBUTES_AND_CAPACITIES_MAX:
        raise InputError(f"Too many: {len(attrs) + len(caps)}: must have at most {ATTRIBUTES_AND_CAPACITIES_MAX} "
                         "attributes and capacities combined", path=path)
    consumes = []
    cc = _list(d.get("consumesCounters"), join_path(path, "consumesCounters"))
    _max(cc, CONSUMES_COUNTERS_MAX, join_path(path, "consumesCounters"))
    for i, c in enumerate(cc):
        cp = join_path(join_path(path, "consumesCounters"), i)
        c = _obj(c, cp)
        consumes.append(DeviceCounterConsumption(
            _str(c.get("counterSet"), join_path(cp, "counterSet"), required=True),
            _counters(c.get("counters"), join_path(cp, "counters"))))
    taints = _list(d.get("taints"), join_path(path, "taints"))
    _max(taints, TAINTS_MAX, join_path(path, "taints"))
    node_name = _str(d.get("nodeName"), join_path(path, "nodeName")) or None
    node_sel = _node_selector(d.get("nodeSelector"), join_path(path, "nodeSelector"))
    all_nodes = _bool(d.get("allNodes"), join_path(path, "allNodes"))
    chosen = [k for k, v in (("nodeName", node_name), ("nodeSelector", node_sel), ("allNodes", all_nodes)) if v]
    if per_device and len(chosen) != 1:
        raise InputError("Invalid value: exactly one of nodeName, nodeSelector or allNodes must be set when the "
                         "slice uses perDeviceNodeSelection", path=path)
    if not per_device and chosen:
        raise InputError(f"Forbidden: {chosen[0]} may only be set on a device when the slice sets "
                         "perDeviceNodeSelection", path=join_path(path, chosen[0]))
    bc = tuple(_str(x, join_path(join_path(path, "bindingConditions"), i))
               for i, x in enumerate(_list(d.get("bindingConditions"), join_path(path, "bindingConditions"))))
    bfc = tuple(_str(x, join_path(join_path(path, "bindingFailureConditions"), i))
                for i, x in enumerate(_list(d.get("bindingFailureConditions"),
                                            join_path(path, "bindingFailureConditions"))))
    for what, items in (("bindingConditions", bc), ("bindingFailureConditions", bfc)):
        if len(items) > BINDING_CONDITIONS_MAX:
            raise InputError(f"Too many: {len(items)}: must have at most {BINDING_CONDITIONS_MAX} items",
                             path=join_path(path, what))
    return Device(
        name=name, attributes=attrs, capacity=caps, consumes_counters=tuple(consumes),
        node_name=node_name, node_selector=node_sel, all_nodes=all_nodes,
        taints=tuple(_taint(t, join_path(join_path(path, "taints"), i)) for i, t in enumerate(taints)),
        binds_to_node=bool(_bool(d.get("bindsToNode"), join_path(path, "bindsToNode"))),
        binding_conditions=bc, binding_failure_conditions=bfc,
        allow_multiple_allocations=_bool(d.get("allowMultipleAllocations"),
                                         join_path(path, "allowMultipleAllocations")))


#: Devices decoded so far, by (perDeviceNodeSelection, the device's JSON text): the slices of
#: one machine model publish the same devices on every node, so each distinct device is
#: decoded, and later evaluated by CEL, once (see :class:`Device`: values, not places).
_DEVICES: dict[tuple[bool, bytes], Device] = {}
_DEVICES_MAX: Final = 100_000


def _shared_device(value: Any, path: str, per_device: bool) -> Device:
    """:func:`_device`, the same object for devices written alike. Only a device that decodes
    is kept; one that does not raises its error with its own path, as without sharing.

    The key is the device's JSON text, taken only for a value that JSON gives back equal (plain
    JSON types): msgspec would write a YAML date or an integer key as a string, and the text
    would then stand for two values that decode differently."""
    import msgspec

    try:
        text = msgspec.json.encode(value)
        plain = msgspec.json.decode(text) == value
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError, msgspec.DecodeError):
        plain = False
    if not plain:
        return _device(value, path, per_device)
    key = (per_device, text)
    hit = _DEVICES.get(key)
    if hit is None:
        hit = _device(value, path, per_device)
        if len(_DEVICES) >= _DEVICES_MAX:
            _DEVICES.clear()
        _DEVICES[key] = hit
    return hit


#: Device lists decoded so far, by (perDeviceNodeSelection, the list's JSON text): one lookup
#: per slice where every node of a machine model publishes the same list.
_DEVICE_LISTS: dict[tuple[bool, bytes], tuple[Device, ...]] = {}
_DEVICE_LISTS_MAX: Final = 10_000


def _device_list_key(devices_raw: list[Any], per_device: bool) -> tuple[bool, bytes] | None:
    """The key a slice's ``spec.devices`` is kept under (None: not plain JSON; the same rule as
    :func:`_shared_device`). A list is kept only once it passed the slice's device limit and
    every device of it decoded, so a list found kept needs neither again."""
    import msgspec

    try:
        text = msgspec.json.encode(devices_raw)
        if msgspec.json.decode(text) == devices_raw:
            return (per_device, text)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError, msgspec.DecodeError):
        pass
    return None


def parse_resource_slice(obj: Mapping[str, Any]) -> ResourceSlice:
    meta = _obj(obj.get("metadata"), "metadata")
    name = _name(meta)
    spec = _obj(obj.get("spec"), "spec")
    driver = _driver_name(spec.get("driver"), "spec.driver")
    pool = _obj(spec.get("pool"), "spec.pool")
    if not pool:
        raise InputError("Required value", path="spec.pool")
    pool_name = _str(pool.get("name"), "spec.pool.name", required=True)
    generation = _int(pool.get("generation"), "spec.pool.generation", default=0)
    count = _int(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount", default=0)
    if count <= 0:
        raise InputError(f"Invalid value: {count}: must be greater than zero", path="spec.pool.resourceSliceCount")
    if generation < 0:
        raise InputError(f"Invalid value: {generation}: must be greater than or equal to 0",
                         path="spec.pool.generation")
    node_name = _str(spec.get("nodeName"), "spec.nodeName") or None
    node_sel = _node_selector(spec.get("nodeSelector"), "spec.nodeSelector")
    all_nodes = _bool(spec.get("allNodes"), "spec.allNodes")
    per_device = _bool(spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection")
    devices_raw = _list(spec.get("devices"), "spec.devices")
    counters_raw = _list(spec.get("sharedCounters"), "spec.sharedCounters")
    chosen = [k for k, v in (("nodeName", node_name), ("nodeSelector", node_sel), ("allNodes", all_nodes),
                             ("perDeviceNodeSelection", per_device)) if v]
    if len(chosen) > 1:
        raise InputError(f"Invalid value: exactly one of nodeName, nodeSelector, allNodes or perDeviceNodeSelection "
                         f"is required, found {', '.join(chosen)}", path="spec")
    if node_sel is not None and len(node_sel.get("nodeSelectorTerms") or []) != 1:
        raise InputError("Invalid value: must have exactly one node selector term",
                         path="spec.nodeSelector.nodeSelectorTerms")
    key = _device_list_key(devices_raw, bool(per_device))
    devices = _DEVICE_LISTS.get(key) if key is not None else None
    if devices is None:
        extras = any(isinstance(d, dict) and (d.get("taints") or d.get("consumesCounters")
                                              or any(isinstance(a, dict) and set(a) & set(LIST_KINDS)
                                                     for a in _mapping_values(d.get("attributes"))))
                     for d in devices_raw)
        limit = DEVICES_PER_SLICE_WITH_EXTRAS_MAX if extras else DEVICES_PER_SLICE_MAX
        _max(devices_raw, limit, "spec.devices")
    _max(counters_raw, COUNTER_SETS_MAX, "spec.sharedCounters")
    if devices is None:
        devices = tuple(_shared_device(d, join_path("spec.devices", i), bool(per_device))
                        for i, d in enumerate(devices_raw))
        if key is not None:
            if len(_DEVICE_LISTS) >= _DEVICE_LISTS_MAX:
                _DEVICE_LISTS.clear()
            _DEVICE_LISTS[key] = devices
    counter_sets = []
    for i, cs in enumerate(counters_raw):
        cp = join_path("spec.sharedCounters", i)
        cs = _obj(cs, cp)
        counter_sets.append(CounterSet(_str(cs.get("name"), join_path(cp, "name"), required=True),
                                       _counters(cs.get("counters"), join_path(cp, "counters"))))
    return ResourceSlice(name, driver, pool_name, generation, count, node_name, node_sel, all_nodes, per_device,
                         devices, tuple(counter_sets))


# --------------------------------------------------------------------------------------------
# ResourceClaim
# --------------------------------------------------------------------------------------------
def _sub_request(d: Mapping[str, Any], path: str, name: str, allow_admin: bool) -> DeviceSubRequest:
    mode = _str(d.get("allocationMode"), join_path(path, "allocationMode")) or "ExactCount"
    count = d.get("count")
    if mode == "ExactCount":
        count = _int(count, join_path(path, "count"), default=1)
        if count <= 0:
            raise InputError(f"Invalid value: {count}: must be greater than zero", path=join_path(path, "count"))
    elif mode == "All":
        if count is not None:
            _int(count, join_path(path, "count"))
        count = 0  # ignored for All
    else:
        count = _int(count, join_path(path, "count"), default=0)  # unknown mode: the allocator reports it
    admin = _bool(d.get("adminAccess"), join_path(path, "adminAccess")) if allow_admin else None
    tols = _list(d.get("tolerations"), join_path(path, "tolerations"))
    _max(tols, TOLERATIONS_MAX, join_path(path, "tolerations"))
    capacity = None
    if d.get("capacity") is not None:
        cap = _obj(d["capacity"], join_path(path, "capacity"))
        reqs = _obj(cap.get("requests"), join_path(path, "capacity.requests"))
        capacity = {}
        for k, v in reqs.items():
            kp = join_path(join_path(path, "capacity.requests"), str(k))
            validate_qualified_name(str(k), kp)
            capacity[str(k)] = parse_quantity(v, kp)
    return DeviceSubRequest(
        name=name,
        device_class_name=_str(d.get("deviceClassName"), join_path(path, "deviceClassName")),
        selectors=_selectors(d.get("selectors"), join_path(path, "selectors")),
        allocation_mode=mode, count=count, admin_access=admin,
        tolerations=tuple(_toleration(t, join_path(join_path(path, "tolerations"), i)) for i, t in enumerate(tols)),
        capacity=capacity)


def _request_name(value: Any, path: str) -> str:
    name = _str(value, path, required=True)
    if len(name) > 63 or not _DNS_LABEL.match(name):
        raise InputError(f"Invalid value: {name!r}: a request name must be a DNS label (lowercase letters, digits "
                         "and '-', at most 63 characters)", path=path)
    return name


def parse_claim_spec(spec: Mapping[str, Any], path: str = "spec") -> tuple[
        tuple[DeviceRequest, ...], tuple[DeviceConstraint, ...], tuple[DeviceClaimConfiguration, ...]]:
    """The ``spec.devices`` of a ResourceClaim (or of a template's claim spec)."""
    devices = _obj(_obj(spec, path).get("devices"), join_path(path, "devices"))
    dp = join_path(path, "devices")
    reqs_raw = _list(devices.get("requests"), join_path(dp, "requests"))
    _max(reqs_raw, REQUESTS_MAX, join_path(dp, "requests"))
    requests: list[DeviceRequest] = []
    seen: set[str] = set()
    for i, r in enumerate(reqs_raw):
        rp = join_path(join_path(dp, "requests"), i)
        r = _obj(r, rp)
        name = _str(r.get("name"), join_path(rp, "name"), required=True)
        if name in seen:
            raise InputError(f'Duplicate value: "{name}"', path=join_path(rp, "name"))
        seen.add(name)
        exactly, first = r.get("exactly"), r.get("firstAvailable")
        if exactly is not None and first is not None:
            raise InputError("Invalid value: exactly one of `exactly` or `firstAvailable` is required, but multiple "
                             "fields are set", path=rp)
        if exactly is None and first is None:
            raise InputError("Required value: exactly one of `exactly` or `firstAvailable` is required", path=rp)
        if exactly is not None:
            ep = join_path(rp, "exactly")
            requests.append(DeviceRequest(name, exactly=_sub_request(_obj(exactly, ep), ep, name, True)))
            continue
        fp = join_path(rp, "firstAvailable")
        subs_raw = _list(first, fp)
        if not subs_raw:
            raise InputError("Required value: at least one subrequest is needed", path=fp)
        _max(subs_raw, SUBREQUESTS_MAX, fp)
        subs = []
        sub_seen: set[str] = set()
        for j, s in enumerate(subs_raw):
            sp = join_path(fp, j)
            s = _obj(s, sp)
            sname = _str(s.get("name"), join_path(sp, "name"), required=True)
            # Duplicate subrequest names are accepted: upstream allocator inputs contain them
            # and the allocator addresses subrequests by position.
            sub_seen.add(sname)
            subs.append(_sub_request(s, sp, sname, False))
        requests.append(DeviceRequest(name, first_available=tuple(subs)))
    cons_raw = _list(devices.get("constraints"), join_path(dp, "constraints"))
    _max(cons_raw, CONSTRAINTS_MAX, join_path(dp, "constraints"))
    constraints = []
    for i, c in enumerate(cons_raw):
        cp = join_path(join_path(dp, "constraints"), i)
        c = _obj(c, cp)
        names = tuple(_str(x, join_path(join_path(cp, "requests"), k))
                      for k, x in enumerate(_list(c.get("requests"), join_path(cp, "requests"))))
        match = _str(c.get("matchAttribute"), join_path(cp, "matchAttribute")) or None
        distinct = _str(c.get("distinctAttribute"), join_path(cp, "distinctAttribute")) or None
        if match and distinct:
            raise InputError("Invalid value: only one of matchAttribute or distinctAttribute may be set", path=cp)
        for attr, key in ((match, "matchAttribute"), (distinct, "distinctAttribute")):
            if attr is not None and "/" not in attr:
                raise InputError(f"Invalid value: {attr!r}: must include a domain", path=join_path(cp, key))
        constraints.append(DeviceConstraint(names, match, distinct))
    cfg_raw = _list(devices.get("config"), join_path(dp, "config"))
    _max(cfg_raw, CONFIG_MAX, join_path(dp, "config"))
    config = []
    for i, c in enumerate(cfg_raw):
        cp = join_path(join_path(dp, "config"), i)
        c = _obj(c, cp)
        names = tuple(_str(x, join_path(join_path(cp, "requests"), k))
                      for k, x in enumerate(_list(c.get("requests"), join_path(cp, "requests"))))
        config.append(DeviceClaimConfiguration(names, _device_configuration(
            {k: v for k, v in c.items() if k != "requests"}, cp)))
    return tuple(requests), tuple(constraints), tuple(config)


def _allocated_results(status: Mapping[str, Any]) -> tuple[AllocatedDevice, ...] | None:
    alloc = status.get("allocation")
    if alloc is None:
        return None
    ap = "status.allocation"
    alloc = _obj(alloc, ap)
    results = _list(_obj(alloc.get("devices"), join_path(ap, "devices")).get("results"),
                    join_path(ap, "devices.results"))
    _max(results, RESULTS_MAX, join_path(ap, "devices.results"))
    out = []
    for i, r in enumerate(results):
        rp = join_path(join_path(ap, "devices.results"), i)
        r = _obj(r, rp)
        cc = None
        if r.get("consumedCapacity") is not None:
            cc = {str(k): parse_quantity(v, join_path(join_path(rp, "consumedCapacity"), str(k)))
                  for k, v in _obj(r["consumedCapacity"], join_path(rp, "consumedCapacity")).items()}
        out.append(AllocatedDevice(
            request=_str(r.get("request"), join_path(rp, "request"), required=True),
            driver=_driver_name(r.get("driver"), join_path(rp, "driver")),  # validateDriverName, as in a slice
            pool=_str(r.get("pool"), join_path(rp, "pool"), required=True),
            device=_str(r.get("device"), join_path(rp, "device"), required=True),
            admin_access=bool(_bool(r.get("adminAccess"), join_path(rp, "adminAccess"))),
            share_id=_str(r.get("shareID"), join_path(rp, "shareID")) or None,
            consumed_capacity=cc))
    return tuple(out)


def parse_resource_claim(obj: Mapping[str, Any]) -> ResourceClaim:
    meta = _obj(obj.get("metadata"), "metadata")
    name = _name(meta)
    requests, constraints, config = parse_claim_spec(_obj(obj.get("spec"), "spec"))
    status = _obj(obj.get("status"), "status")
    reserved = tuple(_obj(r, join_path("status.reservedFor", i))
                     for i, r in enumerate(_list(status.get("reservedFor"), "status.reservedFor")))
    if len(reserved) > RESERVED_FOR_MAX:
        raise InputError(f"Too many: {len(reserved)}: must have at most {RESERVED_FOR_MAX} items",
                         path="status.reservedFor")
    allocated = _allocated_results(status)
    selector = None
    if allocated is not None:
        selector = _node_selector(_obj(status.get("allocation"), "status.allocation").get("nodeSelector"),
                                  "status.allocation.nodeSelector")
    return ResourceClaim(name=name, namespace=_str(meta.get("namespace"), "metadata.namespace"),
                         uid=_str(meta.get("uid"), "metadata.uid"), requests=requests, constraints=constraints,
                         config=config, allocated=allocated, reserved_for=reserved, raw=obj,
                         node_selector=selector)


def parse_resource_claim_template(obj: Mapping[str, Any]) -> ResourceClaimTemplate:
    meta = _obj(obj.get("metadata"), "metadata")
    name = _name(meta)
    spec = _obj(obj.get("spec"), "spec")
    claim_spec = _obj(spec.get("spec"), "spec.spec")
    parse_claim_spec(claim_spec, "spec.spec")  # validate now, instantiate per pod later
    return ResourceClaimTemplate(name, _str(meta.get("namespace"), "metadata.namespace"),
                                 _obj(spec.get("metadata"), "spec.metadata"), claim_spec, obj)


def parse_node(obj: Mapping[str, Any]) -> Node:
    meta = _obj(obj.get("metadata"), "metadata")
    labels = {str(k): str(v) for k, v in _obj(meta.get("labels"), "metadata.labels").items()}
    validate_labels(labels, "metadata.labels")  # as every Node the API server stores
    return Node(_name(meta), labels)
