"""The kinds kubetwin reads, and the one check every object passes before its reader sees it.

kubectl refuses an object of a kind the cluster does not serve (``no matches for kind "Pdo" in
version "v1"``), and the API server decodes the rest strictly. kubetwin does both for every
object of every input, in :func:`check_object`:

* built-in kinds: against the chosen release's API definitions
  (:func:`~kubetwin.model.apischema.check_api_object`);
* custom resources kubetwin reads (NodeResourceTopology) and kubetwin's own object formats:
  against hand-written specs (:data:`CUSTOM_KINDS`, specs in :mod:`kubetwin.model.crds`);
* configuration kinds with their own strict readers (KubeletConfiguration,
  KubeSchedulerConfiguration, the Simulation object, plugin args): known here, checked there.

A command names the kinds it takes (``kinds=``): another kind is refused there, with the nearest
one it takes (``kind "Pdo" is not supported here (fix: did you mean "Pod"?)``). Where a file may
hold objects a command has no use for (``schedule -f`` given a Deployment), :func:`ignored` says
so on stderr instead of dropping the object silently.

Upstream: ``k8s.io/apimachinery/pkg/api/meta`` (``NoKindMatchError``: "no matches for kind"),
``k8s.io/apimachinery/pkg/runtime/serializer/json`` (strict decoding).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping

from ..errors import InputError
from .strict import Spec, check, suggest


@dataclass(frozen=True, slots=True)
class CustomKind:
    """A kind no Kubernetes release defines that kubetwin reads: its API versions and, per
    version, its spec (``None``: its own reader checks it strictly); ``decode`` validates the
    values as its reader will (quantities, names), so errors name the file here."""

    kind: str
    api_versions: tuple[str, ...]
    spec: Callable[[str], Spec] | None = None
    decode: Callable[[dict[str, Any], str | None], Any] | None = None


def _nrt_spec(api_version: str) -> Spec:
    from .crds import node_resource_topology_spec

    return node_resource_topology_spec(api_version)


def _nrt_decode(obj: dict[str, Any], file: str | None) -> Any:
    from .crds import validate_node_resource_topology

    validate_node_resource_topology(obj, file)


def _vpa_spec(api_version: str) -> Spec:
    from ..autoscale.vpa import vpa_spec

    return vpa_spec()


#: Kinds outside the Kubernetes API that kubetwin reads, by kind.
CUSTOM_KINDS: Mapping[str, CustomKind] = {c.kind: c for c in (
    CustomKind("NodeResourceTopology", ("topology.node.k8s.io/v1alpha2", "topology.node.k8s.io/v1alpha1"), _nrt_spec,
               _nrt_decode),
    CustomKind("KubeletConfiguration", ("kubelet.config.k8s.io/v1beta1",)),
    CustomKind("KubeSchedulerConfiguration", ("kubescheduler.config.k8s.io/v1",)),
    CustomKind("Simulation", ("kubetwin.io/v1alpha1",)),
    CustomKind("VerticalPodAutoscaler", ("autoscaling.k8s.io/v1",), _vpa_spec),
)}


def known_kinds() -> set[str]:
    """Every kind kubetwin could be given: built-in kinds of any release and :data:`CUSTOM_KINDS`."""
    from .apischema import served_kinds

    return {k for _, k in served_kinds()} | set(CUSTOM_KINDS)


def api_versions_of(kind: str) -> list[str]:
    """The API versions that serve ``kind`` (any release; custom kinds' own), newest group first."""
    custom = CUSTOM_KINDS.get(kind)
    if custom is not None:
        return list(custom.api_versions)
    from .apischema import served_kinds

    found = [(releases[-1], api) for (api, k), releases in served_kinds().items() if k == kind]
    return [api for _, api in sorted(found, key=lambda x: tuple(int(p) for p in x[0].split(".")), reverse=True)]


def _kind_path(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def refuse_kind(kind: Any, accepted: Collection[str], *, file: str | None = None, prefix: str = "",
                what: str = "here") -> InputError:
    """``kind "Pdo" is not supported here (fix: did you mean "Pod"?)``; for a kind that is no
    misspelling of one taken here, ``expected Pod, found kind "Node"``."""
    accepted = sorted(accepted)
    near = suggest(kind, accepted) if isinstance(kind, str) else None
    shown = f'"{kind}"' if isinstance(kind, str) else repr(kind)
    path = _kind_path(prefix, "kind")
    if near is not None:
        return InputError(f"kind {shown} is not supported {what}", path=path, file=file,
                          fix=f'did you mean "{near}"?')
    if len(accepted) <= 3:
        return InputError(f"expected {' or '.join(accepted)}, found kind {shown}", path=path, file=file,
                          fix=f"this input takes {' or '.join(accepted)} objects: check which file goes to "
                              "which option (the command's --help)")
    return InputError(f"kind {shown} is not supported {what}", path=path, file=file,
                      fix="supported kinds: " + ", ".join(accepted))


def check_kind_known(obj: Mapping[str, Any], file: str | None = None, *, prefix: str = "") -> tuple[str, str]:
    """``(apiVersion, kind)`` of an object whose kind and apiVersion some Kubernetes release or
    kubetwin knows; otherwise kubectl's ``no matches for kind "X" in version "Y"``, with the
    nearest kind or the versions that serve it."""
    from .apischema import is_served

    kind = obj.get("kind")
    api_version = obj.get("apiVersion")
    if not isinstance(kind, str) or not kind:
        raise InputError("Object 'Kind' is missing" if kind in (None, "") else
                         f"invalid type for field \"kind\": expected a string, got {type(kind).__name__}",
                         path=_kind_path(prefix, "kind"), file=file,
                         fix="every object needs apiVersion and kind, e.g. apiVersion: v1, kind: Pod")
    if not isinstance(api_version, str) or not api_version:
        versions = api_versions_of(kind)
        raise InputError("Object 'apiVersion' is missing" if api_version in (None, "") else
                         f"invalid type for field \"apiVersion\": expected a string, got {type(api_version).__name__}",
                         path=_kind_path(prefix, "apiVersion"), file=file,
                         fix=f"use apiVersion: {versions[0]}" if versions else None)
    custom = CUSTOM_KINDS.get(kind)
    if custom is not None:
        if api_version not in custom.api_versions:
            raise InputError(f'no matches for kind "{kind}" in version "{api_version}"',
                             path=_kind_path(prefix, "apiVersion"), file=file,
                             fix="use apiVersion: " + " or ".join(custom.api_versions))
        return api_version, kind
    if is_served(api_version, kind):
        return api_version, kind
    versions = api_versions_of(kind)
    if versions:
        raise InputError(f'no matches for kind "{kind}" in version "{api_version}"',
                         path=_kind_path(prefix, "apiVersion"), file=file,
                         fix="use apiVersion: " + " or ".join(versions[:4]))
    near = suggest(kind, known_kinds())
    raise InputError(f'no matches for kind "{kind}" in version "{api_version}"', path=_kind_path(prefix, "kind"),
                     file=file, fix=f'did you mean "{near}"?' if near else
                     "kubetwin reads Kubernetes' built-in kinds and " + ", ".join(sorted(CUSTOM_KINDS)))


def check_object(obj: Any, file: str | None = None, *, kinds: Collection[str] | None = None,
                 prefix: str = "", what: str = "here") -> None:
    """Refuse an object that is not a mapping, whose kind is not one of ``kinds`` (when given) or
    not known at all, or that has unknown, duplicate or mistyped fields — the file, the field path
    and the nearest valid name in the message.

    ``kinds`` are the kinds the reader takes; ``what`` completes "kind X is not supported ..."
    (``"by kubetwin dra allocate"``). ``prefix`` is the path of an object embedded in another
    input. Configuration kinds (:data:`CUSTOM_KINDS` without a spec) are left to their readers."""
    from .apischema import check_api_object

    if not isinstance(obj, dict):
        raise InputError(f"expected a Kubernetes object (a mapping with apiVersion and kind), got "
                         f"{type(obj).__name__}", path=prefix, file=file)
    kind = obj.get("kind")
    if kinds is not None and (not isinstance(kind, str) or kind not in kinds):
        if isinstance(kind, str) and kind:
            raise refuse_kind(kind, kinds, file=file, prefix=prefix, what=what)
        check_kind_known(obj, file, prefix=prefix)  # names the missing field
    api_version, kind = check_kind_known(obj, file, prefix=prefix)
    custom = CUSTOM_KINDS.get(kind)
    if custom is not None:
        if custom.spec is not None:
            check(obj, custom.spec(api_version), file=file, prefix=prefix)
        if custom.decode is not None:
            try:
                custom.decode(obj, None)
            except InputError as exc:
                raise exc.within(prefix).in_file(file) from None
        return
    check_api_object(obj, file, prefix=prefix)


def check_builtin(obj: Mapping[str, Any], api_version: str, kind: str, file: str | None = None, *,
                  prefix: str = "") -> None:
    """Strictly check ``obj`` as a ``kind`` of ``api_version`` — also where apiVersion and kind are
    left out (a pod template, a typed reader's caller that knows the kind)."""
    from .apischema import check_api_object

    if obj.get("apiVersion") != api_version or obj.get("kind") != kind:
        obj = {**obj, "apiVersion": api_version, "kind": kind}
    check_api_object(obj if isinstance(obj, dict) else dict(obj), file, prefix=prefix)


#: Kinds kube-scheduler (and its admission step) reads from ``schedule -f``: namespace labels,
#: the default spread selector's owners, PodDisruptionBudgets for preemption, DRA objects,
#: NodeResourceTopologies, and the admission controllers' PriorityClasses, LimitRanges and quotas.
READ_BY_SCHEDULER: frozenset[str] = frozenset({
    "Namespace", "Service", "ReplicationController", "ReplicaSet", "StatefulSet", "PodDisruptionBudget",
    "DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "NodeResourceTopology",
    "PriorityClass", "LimitRange", "ResourceQuota"})

#: Where an object a command does not read belongs instead.
_GIVE_INSTEAD = {"Pod": "give running pods with --pods", "Node": "give nodes with --nodes",
                 "KubeSchedulerConfiguration": "give it with --config"}


def check_read(obj: Any, file: str | None, *, reads: Collection[str], reader: str) -> None:
    """:func:`check_object` for a file of cluster objects of any kind, of which ``reader`` reads
    ``reads``: another known kind is accepted with a warning that it is ignored; fields of the
    kinds it reads that change its answer but are not modelled are reported."""
    from .unmodelled import not_modelled_object

    check_object(obj, file)
    kind = obj["kind"]
    if kind not in reads:
        ignored(kind, reader, file=file, why=_GIVE_INSTEAD.get(kind, ""))
    else:
        not_modelled_object(obj, file, reader=reader)


def ignored(kind: str, reader: str, *, file: str | None = None, why: str = "") -> None:
    """An object a command reads but has no use for: a warning (an error under ``--strict``),
    never a silent drop."""
    from ..diagnostics import warn

    warn(InputError(f"{kind} objects are not read by {reader}; this one is ignored{': ' + why if why else ''}",
                    path="kind", file=file))


__all__ = ["CUSTOM_KINDS", "CustomKind", "READ_BY_SCHEDULER", "check_object", "check_builtin", "check_read", "check_kind_known", "refuse_kind", "ignored",
           "known_kinds", "api_versions_of"]
