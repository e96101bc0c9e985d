"""Typed, immutable view of a core/v1 ``Pod`` — the fields resource management reads.

Decoding (:func:`pod_from_dict`) checks types and quantities; :func:`validate_pod` then applies
the API server's rules for the resource fields (``ValidatePodCreate``'s resource part), so a pod
kubetwin accepts is one the API server would accept. Before validation, as the API server does,
it applies the API server's defaulting of resources (requests from limits, pod-level requests:
:mod:`kubetwin.model.defaulting`), unless ``--no-api-defaulting`` asks for pods as written.

Upstream: ``Pod`` in ``staging/src/k8s.io/api/core/v1/types.go``; the rules of
``pkg/apis/core/validation/validation.go``.
"""

from __future__ import annotations

import re
import uuid
from functools import lru_cache
from typing import Any, Callable, Iterator

import msgspec

from ..errors import InputError
from .meta import KubeStruct, LabelSelector, ObjectMeta, ResourceList, check_kind, convert
from .quantity import Quantity

# --- containers -----------------------------------------------------------------------------


class ResourceClaimRef(KubeStruct, frozen=True):
    """``resources.claims[]``: a container's use of one of the pod's ResourceClaims."""

    name: str
    request: str = ""


class ResourceRequirements(KubeStruct, frozen=True):
    requests: ResourceList = {}
    limits: ResourceList = {}
    claims: list[ResourceClaimRef] = []


class ContainerPort(KubeStruct, frozen=True):
    container_port: int = 0
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = msgspec.field(default="", name="hostIP")
    name: str = ""


class ContainerResizePolicy(KubeStruct, frozen=True):
    resource_name: str
    restart_policy: str = "NotRequired"


class SecurityContext(KubeStruct, frozen=True):
    """The part of a container's ``securityContext`` the CRI sandbox config carries."""

    privileged: bool | None = None


class Container(KubeStruct, frozen=True):
    name: str = ""
    image: str = ""
    resources: ResourceRequirements = ResourceRequirements()
    #: ``Always`` on an init container makes it a sidecar (restartable init container).
    restart_policy: str | None = None
    ports: list[ContainerPort] = []
    resize_policy: list[ContainerResizePolicy] = []
    security_context: SecurityContext | None = None

    @property
    def requests(self) -> ResourceList:
        return self.resources.requests

    @property
    def limits(self) -> ResourceList:
        return self.resources.limits


# --- scheduling constraints -------------------------------------------------------------------


class NodeSelectorRequirement(KubeStruct, frozen=True):
    key: str
    operator: str
    values: list[str] = []


class NodeSelectorTerm(KubeStruct, frozen=True):
    match_expressions: list[NodeSelectorRequirement] = []
    match_fields: list[NodeSelectorRequirement] = []


class NodeSelector(KubeStruct, frozen=True):
    node_selector_terms: list[NodeSelectorTerm] = []


class PreferredSchedulingTerm(KubeStruct, frozen=True):
    weight: int
    preference: NodeSelectorTerm = NodeSelectorTerm()


class NodeAffinity(KubeStruct, frozen=True):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = []


class PodAffinityTerm(KubeStruct, frozen=True):
    label_selector: LabelSelector | None = None
    namespaces: list[str] = []
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] = []
    mismatch_label_keys: list[str] = []


class WeightedPodAffinityTerm(KubeStruct, frozen=True):
    weight: int
    pod_affinity_term: PodAffinityTerm


class PodAffinity(KubeStruct, frozen=True):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []


class Affinity(KubeStruct, frozen=True):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class Toleration(KubeStruct, frozen=True):
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class TopologySpreadConstraint(KubeStruct, frozen=True):
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = []


class PodResourceClaim(KubeStruct, frozen=True):
    """``spec.resourceClaims[]``: a claim by name or one made per pod from a template."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class EmptyDirVolumeSource(KubeStruct, frozen=True):
    medium: str = ""
    size_limit: Quantity | None = None


class HostPathVolumeSource(KubeStruct, frozen=True):
    path: str = ""
    type: str | None = None


class Volume(KubeStruct, frozen=True):
    """A pod volume; the sources kept are those the kubelet counts as local ephemeral storage
    (eviction ranking) — others are decoded as opaque presence."""

    name: str
    empty_dir: EmptyDirVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None
    config_map: dict[str, Any] | None = None
    git_repo: dict[str, Any] | None = None


class PodSchedulingGate(KubeStruct, frozen=True):
    name: str


class Sysctl(KubeStruct, frozen=True):
    name: str = ""
    value: str = ""


class PodSecurityContext(KubeStruct, frozen=True):
    """The part of ``spec.securityContext`` the CRI sandbox config carries."""

    sysctls: list[Sysctl] = []


class PodSpec(KubeStruct, frozen=True):
    containers: list[Container] = []
    init_containers: list[Container] = []
    #: Ephemeral containers never count towards resources (kept for completeness).
    ephemeral_containers: list[Container] = []
    #: RuntimeClass overhead, added on top of container requests.
    overhead: ResourceList = {}
    #: Pod-level resources (gate PodLevelResources).
    resources: ResourceRequirements | None = None
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    node_name: str = ""
    node_selector: dict[str, str] = {}
    affinity: Affinity | None = None
    tolerations: list[Toleration] = []
    topology_spread_constraints: list[TopologySpreadConstraint] = []
    resource_claims: list[PodResourceClaim] = []
    scheduler_name: str = "default-scheduler"
    runtime_class_name: str | None = None
    restart_policy: str = "Always"
    termination_grace_period_seconds: int | None = None
    active_deadline_seconds: int | None = None
    volumes: list[Volume] = []
    host_network: bool = False
    host_pid: bool = msgspec.field(default=False, name="hostPID")
    host_ipc: bool = msgspec.field(default=False, name="hostIPC")
    share_process_namespace: bool | None = None
    security_context: PodSecurityContext | None = None
    scheduling_gates: list[PodSchedulingGate] = []
    #: Read only to report them as not modelled (:mod:`kubetwin.model.unmodelled`).
    os: dict[str, Any] | None = None
    scheduling_group: Any = None
    workload_ref: Any = None


# --- status ---------------------------------------------------------------------------------


class ContainerStatus(KubeStruct, frozen=True):
    name: str = ""
    allocated_resources: ResourceList = {}
    resources: ResourceRequirements | None = None
    restart_count: int = 0


class NodeAllocatableResourceMapping(KubeStruct, frozen=True):
    name: str
    quantity: Quantity


class NodeAllocatableResourceOverhead(KubeStruct, frozen=True):
    name: str
    per_pod: Quantity | None = None
    per_container: Quantity | None = None


class NodeAllocatableResourceClaimStatus(KubeStruct, frozen=True):
    """DRA node-allocatable resources of one claim (gate DRANodeAllocatableResources)."""

    resource_claim_name: str = ""
    containers: list[str] = []
    mapping: list[NodeAllocatableResourceMapping] = []
    overhead: list[NodeAllocatableResourceOverhead] = []


class PodResourceClaimStatus(KubeStruct, frozen=True):
    """``status.resourceClaimStatuses[]``: the claim the resourceclaim controller generated for
    a template entry (``resource_claim_name`` None: none was needed)."""

    name: str
    resource_claim_name: str | None = None


class ContainerExtendedResourceRequest(KubeStruct, frozen=True):
    """Which request of the pod's extended-resource claim serves a container's extended resource."""

    container_name: str = ""
    resource_name: str = ""
    request_name: str = ""


class PodExtendedResourceClaimStatus(KubeStruct, frozen=True):
    """``status.extendedResourceClaimStatus`` (gate DRAExtendedResource): the ResourceClaim the
    scheduler created for extended resources backed by DRA, and which container uses which
    request of it — what the kubelet needs to hand each container its devices."""

    request_mappings: list[ContainerExtendedResourceRequest] = []
    resource_claim_name: str = ""


class PodCondition(KubeStruct, frozen=True):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""


class PodStatus(KubeStruct, frozen=True):
    phase: str = ""
    qos_class: str = ""
    #: ``PodResizePending`` with reason ``Infeasible`` makes resize-aware sums ignore the spec.
    conditions: list[PodCondition] = []
    nominated_node_name: str = ""
    start_time: str | None = None
    resize: str = ""
    container_statuses: list[ContainerStatus] = []
    init_container_statuses: list[ContainerStatus] = []
    node_allocatable_resource_claim_statuses: list[NodeAllocatableResourceClaimStatus] = []
    resource_claim_statuses: list[PodResourceClaimStatus] = []
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None


@lru_cache(maxsize=65536)
def standin_uid(namespace: str, name: str) -> str:
    """The UID kubetwin gives a pod written without ``metadata.uid``: a name-based UUID (RFC 4122
    version 5) of ``pod/NAMESPACE/NAME``, so two pods never share it and runs are reproducible."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"kubetwin:pod/{namespace}/{name}"))


class Pod(KubeStruct, frozen=True):
    api_version: str = "v1"
    kind: str = "Pod"
    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def key(self) -> str:
        """``namespace/name``, the identity used in messages."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def uid(self) -> str:
        """The pod UID, or a stable stand-in when none is given: the API server gives every pod a
        random UUID; kubetwin derives one from namespace/name (``standin_uid``) so that a manifest
        without ``metadata.uid`` gets the same UID on every run, and the UID is a valid cgroup and
        systemd slice component as the kubelet's pod cgroup name (``pod<UID>``) needs."""
        return self.metadata.uid or standin_uid(self.metadata.namespace, self.metadata.name)

    def all_containers(self) -> Iterator[tuple[Container, bool]]:
        """Init containers (sidecars included) then app containers; the flag says 'init'."""
        for c in self.spec.init_containers:
            yield c, True
        for c in self.spec.containers:
            yield c, False


def is_sidecar(container: Container) -> bool:
    """A restartable init container (``restartPolicy: Always``), i.e. a sidecar."""
    return container.restart_policy == "Always"


# --- decoding and validation -----------------------------------------------------------------


def pod_from_dict(obj: dict[str, Any], file: str | None = None, *,
                  warn: Callable[[InputError], None] | None = None, checked: bool = False) -> Pod:
    """A validated :class:`Pod` from a manifest dict (kind Pod, apiVersion v1), decoded strictly
    (unknown and mistyped fields refused as the API server refuses them) unless ``checked``: the
    caller already ran :func:`~kubetwin.model.kinds.check_object` on it."""
    check_kind(obj, ("Pod",), ("v1",), file)
    if not checked:
        from .kinds import check_builtin

        check_builtin(obj, "v1", "Pod", file)
    from .defaulting import api_defaults

    pod = api_defaults(convert(obj, Pod, file=file))
    try:
        validate_pod(pod, warn=warn)
    except InputError as exc:
        raise exc.in_file(file) from None
    return pod


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")

STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_POD_RESTART_POLICIES = ("Always", "OnFailure", "Never")


def is_hugepage_resource(name: str) -> bool:
    return name.startswith("hugepages-")


def is_native_resource(name: str) -> bool:
    """No domain, or in the ``kubernetes.io`` domain (``IsNativeResource``)."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: a domain-qualified name outside kubernetes.io, not ``requests.*``."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return _QUALIFIED_NAME.match(name.rsplit("/", 1)[-1]) is not None


def is_qualified_name(name: str) -> bool:
    """``IsQualifiedName``: an optional DNS-subdomain prefix and ``/``, then a name of at most 63
    alphanumerics, ``-``, ``_`` or ``.``, alphanumeric at both ends."""
    prefix, slash, short = name.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return bool(short) and len(short) <= 63 and _QUALIFIED_NAME.match(short) is not None


_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def validate_labels(labels: dict[str, str], path: str) -> None:
    """``ValidateLabels``: every key a qualified name, every value at most 63 characters of
    alphanumerics, ``-``, ``_`` and ``.``, alphanumeric at both ends (or empty)."""
    for key, value in labels.items():
        if not is_qualified_name(key):
            raise InputError(f'Invalid value: "{key}": a label key must be a qualified name: an optional DNS '
                             "subdomain prefix and '/', then at most 63 alphanumerics, '-', '_' or '.', starting "
                             "and ending with an alphanumeric", path=f"{path}.{key}")
        if len(value) > 63 or not _LABEL_VALUE.match(value):
            raise InputError(f'Invalid value: "{value}": a label value must be empty or at most 63 alphanumerics, '
                             "'-', '_' or '.', starting and ending with an alphanumeric", path=f"{path}.{key}")


def overcommit_allowed(name: str) -> bool:
    """``IsOvercommitAllowed``: native, non-hugepage resources may have request < limit."""
    return is_native_resource(name) and not is_hugepage_resource(name)


def validate_pod(pod: Pod, *, warn: Callable[[InputError], None] | None = None) -> None:
    """The resource rules of the API server's pod validation; first violation raises.

    Rules that the upstream *unit tests* routinely bend (container list empty, hugepage or
    extended resources requested without a limit, non-standard resource names) are reported
    through ``warn`` instead — kubetwin reproduces those tests, and the answer stays defined.
    """
    spec = pod.spec
    name = pod.metadata.name
    if not name and not pod.metadata.generate_name:
        raise InputError("name or generateName is required", path="metadata.name")
    if name and (len(name) > 253 or not _DNS_SUBDOMAIN.match(name)):
        _soft(warn, InputError(f'invalid pod name "{name}": a lowercase RFC 1123 subdomain is required',
                               path="metadata.name"))
    validate_labels(pod.metadata.labels, "metadata.labels")
    validate_labels(spec.node_selector, "spec.nodeSelector")
    if spec.restart_policy not in _POD_RESTART_POLICIES:
        raise InputError(f'unsupported value: "{spec.restart_policy}"', path="spec.restartPolicy",
                         fix="use Always, OnFailure or Never")
    if not spec.containers:
        _soft(warn, InputError("Required value: a pod needs at least one container", path="spec.containers"))
    seen: set[str] = set()
    for field, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, c in enumerate(containers):
            path = f"spec.{field}[{i}]"
            if not c.name:
                raise InputError("Required value: container name", path=f"{path}.name")
            if not _DNS_LABEL.match(c.name) or len(c.name) > 63:
                _soft(warn, InputError(f'invalid container name "{c.name}": a lowercase RFC 1123 label is required',
                                       path=f"{path}.name"))
            if c.name in seen:
                raise InputError(f'Duplicate value: "{c.name}"', path=f"{path}.name",
                                 fix="give every container (init containers included) a unique name")
            seen.add(c.name)
            if c.restart_policy is not None:
                if field == "containers":
                    raise InputError("Forbidden: may not be set for non-init containers",
                                     path=f"{path}.restartPolicy")
                if c.restart_policy != "Always":
                    raise InputError(f'Unsupported value: "{c.restart_policy}": supported values: "Always"',
                                     path=f"{path}.restartPolicy")
            validate_resource_requirements(c.resources, f"{path}.resources", warn=warn)
    if spec.resources is not None:
        validate_resource_requirements(spec.resources, "spec.resources", warn=warn, pod_level=True)
    for rname, q in spec.overhead.items():  # validateOverhead: checked as a container's limits
        if q.sign() < 0:
            raise InputError("must be greater than or equal to 0", path=f"spec.overhead.{rname}")
        if not is_qualified_name(rname):
            raise InputError(f'Invalid value: "{rname}": a resource name must be a qualified name '
                             "(e.g. 'cpu', 'example.com/gpu')", path=f"spec.overhead.{rname}")
    if spec.priority is not None and not (-(2**31) <= spec.priority < 2**31):
        raise InputError("priority must fit in a 32-bit integer", path="spec.priority")
    if spec.termination_grace_period_seconds is not None and spec.termination_grace_period_seconds < 0:
        raise InputError("must be greater than or equal to 0", path="spec.terminationGracePeriodSeconds")


def validate_resource_requirements(res: ResourceRequirements, path: str, *,
                                   warn: Callable[[InputError], None] | None = None,
                                   pod_level: bool = False) -> None:
    """``ValidateResourceRequirements``: non-negative, names, requests ≤ limits, equal for
    resources that cannot be overcommitted (hugepages, extended resources)."""
    seen_claims: set[str] = set()
    for i, claim in enumerate(res.claims):  # validateResourceClaimNames: each claim (and request) once
        key = f"{claim.name}/{claim.request}" if claim.request else claim.name
        if key in seen_claims:
            raise InputError(f'Duplicate value: "{key}"', path=f"{path}.claims[{i}]",
                             fix="list each claim (or claim request) once")
        seen_claims.add(key)
    for kind, values in (("limits", res.limits), ("requests", res.requests)):
        for rname, q in values.items():
            p = f"{path}.{kind}.{rname}"
            if q.sign() < 0:
                raise InputError(f'Invalid value: "{q}": must be greater than or equal to 0', path=p)
            if not is_qualified_name(rname):  # validateResourceName: never a resource name, even in tests
                raise InputError(f'Invalid value: "{rname}": a resource name must be a qualified name '
                                 "(e.g. 'cpu', 'example.com/gpu')", path=p)
            if not (rname in STANDARD_CONTAINER_RESOURCES or is_hugepage_resource(rname) or is_extended_resource(rname)):
                _soft(warn, InputError(f'Invalid value: "{rname}": must be a standard resource for containers',
                                       path=p))
            if rname == "cpu" or rname == "memory" or is_hugepage_resource(rname):
                pass
            elif is_extended_resource(rname) and q.scaled_value(0) * 1000 != q.milli_value():
                raise InputError(f'Invalid value: "{q}": must be an integer', path=p)
    for rname, req in res.requests.items():
        lim = res.limits.get(rname)
        p = f"{path}.requests.{rname}"
        if lim is not None:
            if req.cmp(lim) != 0 and not overcommit_allowed(rname):
                _soft(warn, InputError(f'Invalid value: "{req}": must be equal to {rname} limit of {lim}', path=p))
            elif req.cmp(lim) > 0:
                raise InputError(f'Invalid value: "{req}": must be less than or equal to {rname} limit of {lim}',
                                 path=p, fix=f"raise the {rname} limit or lower the request")
        elif not overcommit_allowed(rname) and not pod_level:
            _soft(warn, InputError("Required value: Limit must be set for non overcommitable resources",
                                   path=f"{path}.limits.{rname}"))


def _soft(warn: Callable[[InputError], None] | None, err: InputError) -> None:
    if warn is not None:
        warn(err)


def default_requests_from_limits(pod: Pod) -> Pod:
    """The API server's defaulting: a container limit without a request becomes its request."""

    def fix(c: Container) -> Container:
        missing = {k: v for k, v in c.resources.limits.items() if k not in c.resources.requests}
        if not missing:
            return c
        res = msgspec.structs.replace(c.resources, requests={**c.resources.requests, **missing})
        return msgspec.structs.replace(c, resources=res)

    containers = [fix(c) for c in pod.spec.containers]
    init = [fix(c) for c in pod.spec.init_containers]
    if all(a is b for a, b in zip(containers, pod.spec.containers)) and \
            all(a is b for a, b in zip(init, pod.spec.init_containers)):
        return pod   # nothing to default: the pod as it came
    spec = msgspec.structs.replace(pod.spec, containers=containers, init_containers=init)
    return msgspec.structs.replace(pod, spec=spec)


def requests_of(container: Container, resource: str) -> Quantity | None:
    return container.resources.requests.get(resource)
