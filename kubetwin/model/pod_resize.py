"""The Pod ``resize`` subresource: a resize patch applied to a pod, and the API server's checks.

Since v1.33 container resources change through ``pods/resize`` only
(``kubectl patch pod P --subresource resize --patch '{"spec":{"containers":[...]}}'``). The
API server applies the (strategic merge) patch, keeps of the result only what the subresource
may change — each container's ``resources`` and ``resizePolicy`` and the pod-level
``resources`` (``dropNonResizeUpdates``) — and validates the update (``ValidatePodResize``):

* pods with pod-level resources cannot be resized unless ``InPlacePodLevelResourcesVerticalScaling``;
  static (mirror) pods and Windows pods cannot be resized at all;
* the QoS class may not change;
* no request or limit may be removed;
* only cpu and memory may change (``spec: Forbidden: only cpu and memory resources are mutable``),
  of app containers and sidecars; other init containers not at all;
* the new resources obey the usual rules (requests ≤ limits, ...).

Until v1.35 a memory limit may be lowered (or added) only with ``resizePolicy: RestartContainer``
(``VERSIONED_DEFAULTS["resizeMemoryLimitDecreaseNotRequired"]``); from v1.35 the kubelet checks
usage when it actuates instead. A change of ``resizePolicy`` itself is refused as a change to
something other than cpu and memory.

kubetwin is stricter than the API server where the API server would silently drop a field:
a patch that touches anything but resources and resize policies is an ``InputError`` (the
subresource would ignore it), as is a container name the pod does not have.

Upstream: ``pkg/registry/core/pod/strategy.go`` (``ResizeStrategy``, ``dropNonResizeUpdates``),
``pkg/apis/core/validation/validation.go`` (``ValidatePodResize``, ``validateContainerResize``,
``validatePodResizeContainerOrdering``), ``pkg/api/pod/util.go``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import msgspec

from ..errors import InputError
from .features import FeatureGates, default_for
from .pod import Container, ContainerResizePolicy, Pod, ResourceRequirements, is_sidecar, validate_pod
from .quantity import Quantity, parse_quantity
from .strict import ANY, STRING, check, list_of, map_of, obj

#: The resources whose values a resize may change.
RESIZABLE = ("cpu", "memory")
#: ``kubernetes.io/config.mirror``: the mirror pod of a static pod.
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"

_RESOURCES = obj(requests=map_of(ANY), limits=map_of(ANY))
_CONTAINER = obj(name=STRING, resources=_RESOURCES,
                 resizePolicy=list_of(obj(resourceName=STRING, restartPolicy=STRING)))
#: What a resize patch may hold: the part of a Pod the ``resize`` subresource keeps.
RESIZE_PATCH_SPEC = obj(spec=obj(containers=list_of(_CONTAINER), initContainers=list_of(_CONTAINER),
                                 resources=_RESOURCES))

_RESTART_POLICIES = ("NotRequired", "RestartContainer")


@dataclass(frozen=True)
class FieldError:
    """One ``field.Error`` of the API server: its path, type and detail, rendered as upstream does."""

    path: str
    type: str  # "Forbidden" | "Invalid value" | "" (the detail says it all)
    detail: str
    value: str | None = None

    def __str__(self) -> str:
        path = self.path or "[]"
        if not self.type:  # a rule kubetwin words itself (kubetwin.model.pod.validate_pod)
            return f"{path}: {self.detail}"
        if self.type == "Invalid value":
            return f'{path}: Invalid value: "{self.value}": {self.detail}'
        return f"{path}: {self.type}: {self.detail}"


def refusal_message(pod: Pod, errors: list[FieldError]) -> str:
    """``Pod "NAME" is invalid: ...`` — one error as is, several in brackets (``ErrorList.ToAggregate``)."""
    if len(errors) == 1:
        return f'Pod "{pod.name}" is invalid: {errors[0]}'
    return f'Pod "{pod.name}" is invalid: [{", ".join(str(e) for e in errors)}]'


# --- the patch ---------------------------------------------------------------------------------


def check_resize_patch(patch: Any, file: str | None = None, prefix: str = "") -> Mapping[str, Any]:
    """Strictly check a resize patch: only ``spec.containers[]`` / ``spec.initContainers[]``
    (``name``, ``resources``, ``resizePolicy``) and ``spec.resources``. ``prefix``: where the
    patch sits in a larger document (error paths start with it)."""
    if not isinstance(patch, Mapping):
        raise InputError("a resize patch is an object like {spec: {containers: [{name: c, resources: {...}}]}}",
                         file=file)
    check(patch, RESIZE_PATCH_SPEC, file=file, prefix=prefix,
          what="not part of a resize (the resize subresource changes only containers' resources and "
               "resizePolicy and pod-level resources)")
    spec = patch.get("spec")
    if not isinstance(spec, Mapping) or not spec:
        raise InputError("the patch changes nothing", path=_at(prefix, "spec"), file=file,
                         fix="give spec.containers[].resources (or spec.resources) with the new values")
    for field in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(field) or []):
            if not c.get("name"):
                raise InputError("Required value: a container patch names its container", file=file,
                                 path=_at(prefix, f"spec.{field}[{i}].name"))
            for j, p in enumerate(c.get("resizePolicy") or []):
                rp = p.get("restartPolicy", "")
                if rp not in _RESTART_POLICIES:
                    raise InputError(f'Unsupported value: "{rp}"', file=file,
                                     path=_at(prefix, f"spec.{field}[{i}].resizePolicy[{j}].restartPolicy"),
                                     fix="use NotRequired or RestartContainer")
    return patch


def _at(prefix: str, path: str) -> str:
    return f"{prefix}.{path}" if prefix else path


def _merge_resource_list(old: Mapping[str, Quantity], patch: Any, path: str, file: str | None) -> dict[str, Quantity]:
    out = dict(old)
    for name, value in (patch or {}).items():
        if value is None:  # a strategic merge patch deletes a key with null
            out.pop(name, None)
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise InputError(f"a quantity is a string or a number, not {type(value).__name__}", path=f"{path}.{name}",
                             file=file)
        try:
            out[name] = parse_quantity(value, f"{path}.{name}")
        except InputError as exc:
            raise exc.in_file(file) from None
    return out


def _merge_resources(old: ResourceRequirements, patch: Any, path: str, file: str | None) -> ResourceRequirements:
    if patch is None:
        return old
    return msgspec.structs.replace(
        old, requests=_merge_resource_list(old.requests, patch.get("requests"), f"{path}.requests", file),
        limits=_merge_resource_list(old.limits, patch.get("limits"), f"{path}.limits", file))


def _merge_policies(old: list[ContainerResizePolicy], patch: Any) -> list[ContainerResizePolicy]:
    """``resizePolicy`` merges by ``resourceName`` (its patch merge key)."""
    if patch is None:
        return old
    out = list(old)
    for p in patch:
        new = ContainerResizePolicy(p.get("resourceName", ""), p.get("restartPolicy", "NotRequired"))
        for i, cur in enumerate(out):
            if cur.resource_name == new.resource_name:
                out[i] = new
                break
        else:
            out.append(new)
    return out


def apply_resize_patch(pod: Pod, patch: Mapping[str, Any], file: str | None = None) -> Pod:
    """The pod after the resize patch (strategic merge: containers by name, resource lists by key,
    ``resizePolicy`` by resource name). The patch must have passed :func:`check_resize_patch`."""
    spec = patch.get("spec") or {}
    new_spec = pod.spec
    for field, attr in (("containers", "containers"), ("initContainers", "init_containers")):
        entries = spec.get(field)
        if not entries:
            continue
        containers = list(getattr(new_spec, attr))
        names = [c.name for c in containers]
        for i, entry in enumerate(entries):
            name = entry["name"]
            if name not in names:
                from .strict import suggest

                hint = suggest(name, names)
                raise InputError(f'pod {pod.key} has no {"init " if attr == "init_containers" else ""}container '
                                 f'"{name}"', path=f"spec.{field}[{i}].name", file=file,
                                 fix=f'did you mean "{hint}"?' if hint else f"containers: {', '.join(names) or 'none'}")
            k = names.index(name)
            cur: Container = containers[k]
            path = f"spec.{field}[{i}]"
            containers[k] = msgspec.structs.replace(
                cur, resources=_merge_resources(cur.resources, entry.get("resources"), f"{path}.resources", file),
                resize_policy=_merge_policies(cur.resize_policy, entry.get("resizePolicy")))
        new_spec = msgspec.structs.replace(new_spec, **{attr: containers})
    if "resources" in spec:
        base = pod.spec.resources or ResourceRequirements()
        merged = _merge_resources(base, spec.get("resources"), "spec.resources", file)
        new_spec = msgspec.structs.replace(new_spec, resources=merged if (merged.requests or merged.limits) else None)
    return msgspec.structs.replace(pod, spec=new_spec)


# --- ValidatePodResize ---------------------------------------------------------------------------


def _pod_level_set(pod: Pod) -> bool:
    res = pod.spec.resources
    return res is not None and bool(res.requests or res.limits)


def _removed(old: Mapping[str, Quantity], new: Mapping[str, Quantity]) -> bool:
    """``resourcesRemoved``: some resource of the old list is missing from the new one."""
    return len(old) > len(new) or any(name not in new for name in old)


def _validate_container_resize(new: Container, old: Container, path: str, version: str) -> list[FieldError]:
    """``validateContainerResize``: no request or limit removed; before v1.35 a memory limit may be
    lowered or added only with ``resizePolicy`` ``RestartContainer``."""
    errs = []
    if _removed(old.resources.requests, new.resources.requests):
        errs.append(FieldError(f"{path}.requests", "Forbidden", "resource requests cannot be removed"))
    if _removed(old.resources.limits, new.resources.limits):
        errs.append(FieldError(f"{path}.limits", "Forbidden", "resource limits cannot be removed"))
    if not default_for("resizeMemoryLimitDecreaseNotRequired", version):
        policy = next((p.restart_policy for p in new.resize_policy if p.resource_name == "memory"), "")
        if policy in ("NotRequired", ""):
            new_lim, old_lim = new.resources.limits.get("memory"), old.resources.limits.get("memory")
            if new_lim is not None and old_lim is not None and new_lim.cmp(old_lim) < 0:
                errs.append(FieldError(f"{path}.limits[memory]", "Forbidden",
                                       "memory limits cannot be decreased unless resizePolicy is RestartContainer"))
            elif new_lim is not None and old_lim is None:
                errs.append(FieldError(f"{path}.limits[memory]", "Forbidden",
                                       "memory limits cannot be added unless resizePolicy is RestartContainer"))
    return errs


def _without_cpu_memory_updates(c: Container, old: Container) -> Container:
    """``dropCPUMemoryResourcesFromContainer``: the new container with the old cpu and memory values
    (what is left to differ is what a resize may not change)."""

    def drop(values: Mapping[str, Quantity], old_values: Mapping[str, Quantity]) -> dict[str, Quantity]:
        out = {k: v for k, v in values.items() if k not in RESIZABLE}
        out.update({k: v for k, v in old_values.items() if k in RESIZABLE})
        return out

    res = ResourceRequirements(requests=drop(c.resources.requests, old.resources.requests),
                               limits=drop(c.resources.limits, old.resources.limits))
    return msgspec.structs.replace(c, resources=res)


def validate_pod_resize(old: Pod, new: Pod, gates: FeatureGates) -> list[FieldError]:
    """``ValidatePodResize``: the field errors the API server answers a resize with (none: accepted)."""
    from ..kubelet.qos import compute_pod_qos, get_pod_qos

    errs: list[FieldError] = []
    try:  # validatePodMetadataAndSpec (kubetwin's wording of the resource rules)
        validate_pod(new)
    except InputError as exc:
        errs.append(FieldError(exc.path, "", exc.message))
    if (_pod_level_set(old) or _pod_level_set(new)) and \
            not gates.enabled("InPlacePodLevelResourcesVerticalScaling"):
        return [FieldError("", "Forbidden", "pods with pod-level resources cannot be resized")]
    if MIRROR_POD_ANNOTATION in old.metadata.annotations:
        return [FieldError("", "Forbidden", "static pods cannot be resized")]
    if (old.spec.os or {}).get("name") == "windows":
        return [FieldError("", "Forbidden", "windows pods cannot be resized")]
    old_qos = get_pod_qos(old, gates)
    if old_qos != compute_pod_qos(new, gates).qos_class:
        # upstream shows the pod's status.qosClass (the class before the resize) as the value
        errs.append(FieldError("spec", "Invalid value", "Pod QOS Class may not change as a result of resizing",
                               value=old.status.qos_class or old_qos))
    for i, oc in enumerate(old.spec.init_containers):
        if is_sidecar(oc) and i < len(new.spec.init_containers):
            errs += _validate_container_resize(new.spec.init_containers[i], oc,
                                               f"spec.initContainers[{i}].resources", gates.version)
    for i, oc in enumerate(old.spec.containers):
        errs += _validate_container_resize(new.spec.containers[i], oc, f"spec.containers[{i}].resources",
                                           gates.version)
    for i, oc in enumerate(old.spec.containers):
        if _without_cpu_memory_updates(new.spec.containers[i], oc) != oc:
            errs.append(FieldError("spec", "Forbidden", "only cpu and memory resources are mutable"))
    for i, oc in enumerate(old.spec.init_containers):
        nc = new.spec.init_containers[i]
        if is_sidecar(oc):
            if _without_cpu_memory_updates(nc, oc) != oc:
                errs.append(FieldError("spec", "Forbidden",
                                       "only cpu and memory resources for sidecar containers are mutable"))
        elif nc != oc:
            errs.append(FieldError("spec", "Forbidden", "resources for non-sidecar init containers are immutable"))
    if errs:
        return errs
    o, n = old.spec.resources or ResourceRequirements(), new.spec.resources or ResourceRequirements()
    if o != n:  # pod-level resources (InPlacePodLevelResourcesVerticalScaling): cpu and memory only
        if _removed(o.requests, n.requests):
            errs.append(FieldError("spec.resources.requests", "Forbidden", "resource requests cannot be removed"))
        if _removed(o.limits, n.limits):
            errs.append(FieldError("spec.resources.limits", "Forbidden", "resource limits cannot be removed"))
        kept = ResourceRequirements(
            requests={**{k: v for k, v in n.requests.items() if k not in RESIZABLE},
                      **{k: v for k, v in o.requests.items() if k in RESIZABLE}},
            limits={**{k: v for k, v in n.limits.items() if k not in RESIZABLE},
                    **{k: v for k, v in o.limits.items() if k in RESIZABLE}},
            claims=n.claims)
        if kept != o:
            errs.append(FieldError("spec", "Forbidden", "only cpu and memory resources are mutable"))
    return errs


def load_resize_patch(path: str) -> tuple[Mapping[str, Any], str]:
    """One resize patch from a YAML or JSON file (``-`` = stdin), checked; and the file's name."""
    from .loader import parse_documents, read_text

    name = "<stdin>" if path == "-" else path
    docs = [d for d in parse_documents(read_text(path), name) if d is not None]
    if len(docs) != 1:
        raise InputError(f"expected one resize patch, found {len(docs)} documents", file=name)
    return check_resize_patch(docs[0], name), name


__all__ = ["FieldError", "MIRROR_POD_ANNOTATION", "RESIZABLE", "RESIZE_PATCH_SPEC", "apply_resize_patch",
           "check_resize_patch", "load_resize_patch", "refusal_message", "validate_pod_resize"]
