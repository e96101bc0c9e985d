"""Fields Kubernetes acts on that kubetwin reads but does not model: reported, never dropped.

Strict decoding (:mod:`kubetwin.model.kinds`) refuses what Kubernetes refuses. What it accepts
but kubetwin's answer would ignore is listed here, field by field, with the reader whose answer
it changes — each one a warning on stderr (an error under ``kubetwin --strict``,
:func:`kubetwin.diagnostics.not_modelled`) naming the file and the field:

========================================  ===================  ==========================================
field                                     changes the answer   because
========================================  ===================  ==========================================
Pod ``spec.runtimeClassName``             every reader         the RuntimeClass admission controller
(without ``spec.overhead``)                                    adds its overhead and scheduling; kubetwin
                                                               reads no RuntimeClass objects
Pod ``spec.os.name`` other than linux     kubelet              kubetwin's kubelet is Linux's (cgroups,
                                                               resource managers, admission)
Pod ``spec.hostNetwork`` with ports       kube-scheduler       the API server defaults ``hostPort`` to
without ``hostPort``                                           ``containerPort``; NodePorts sees ports
                                                               as written
Pod ``spec.schedulingGroup``,             kube-scheduler       gang scheduling (the Workload API) is not
``spec.workloadRef``                                           modelled
Pod ``spec.resourceClaims``               kubelet              the kubelet's DRA manager prepares claims
                                                               after admission; ``admit`` and ``explain``
                                                               do not (``kubetwin dra prepare`` does)
Pod ``spec.activeDeadlineSeconds``        simulation           the kubelet ends the pod at the deadline
Deployment ``spec.paused``                simulation           a paused new Deployment creates no pods
Job ``spec.suspend``, ``managedBy``,      simulation           the Job controller's suspension, other
``activeDeadlineSeconds``,                                     managers, deadline, failure and success
``podFailurePolicy``, ``successPolicy``,                       policies are not modelled
``backoffLimitPerIndex``,
``maxFailedIndexes``,
``podReplacementPolicy``
StatefulSet ``spec.volumeClaimTemplates``, simulation           PersistentVolumeClaims are not simulated:
``persistentVolumeClaimRetentionPolicy``                       the pods are created without their claims
StatefulSet ``status`` with                simulation           a rolling update under way: pods keep the
``currentRevision`` != ``updateRevision``                       revision they run, none is replaced
ReplicationController                     simulation           its pods are not created (only the
                                                               default spread selector reads it)
PodDisruptionBudget without ``status``    kube-scheduler       preemption reads ``disruptionsAllowed``
                                                               as given; the disruption controller that
                                                               computes it is not modelled
========================================  ===================  ==========================================

Fields that do not touch resource management (images, probes, env, ...) stay silent, and so
do fields kubetwin models (see ``docs/architecture.md``). The simulation runs the scheduler and
the kubelets' admission, so it hears what matters to either, except what it models itself (DRA).

Not an upstream module: kubetwin's own list of fields Kubernetes acts on that kubetwin does not model.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from ..diagnostics import not_modelled

KUBELET = "kubelet"
SCHEDULER = "kube-scheduler"
SIMULATION = "simulation"
#: None: a library caller that named no reader hears about every field.
Reader = str | None

_ALL = frozenset({KUBELET, SCHEDULER, SIMULATION})


def _matters(to: frozenset[str], reader: Reader) -> bool:
    return reader is None or reader in to


def _join(prefix: str, path: str) -> str:
    return f"{prefix}.{path}" if prefix else path


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


Finding = tuple[str, str, frozenset[str]]  # (path, why, readers whose answer it changes)


def pod_findings(obj: Mapping[str, Any]) -> Iterator[Finding]:
    """What a Pod (or pod template: ``metadata`` and ``spec``) sets that kubetwin does not model."""
    spec = _mapping(obj.get("spec"))
    if spec.get("runtimeClassName") and not spec.get("overhead"):
        yield ("spec.runtimeClassName",
               "kubetwin reads no RuntimeClass, so its overhead and scheduling constraints are not added; "
               "give spec.overhead (and the class's nodeSelector and tolerations) as the RuntimeClass "
               "admission controller would", _ALL)
    os_name = _mapping(spec.get("os")).get("name")
    if os_name not in (None, "linux"):
        yield ("spec.os.name", f"kubetwin models Linux nodes' kubelets; a {os_name} pod's cgroups and "
                               "admission are not those of its node", frozenset({KUBELET, SIMULATION}))
    if spec.get("hostNetwork") is True:
        for group in ("initContainers", "containers"):
            for i, c in enumerate(spec.get(group) or ()):
                for j, port in enumerate(_mapping(c).get("ports") or ()):
                    port = _mapping(port)
                    if port.get("containerPort") and not port.get("hostPort"):
                        yield (f"spec.{group}[{i}].ports[{j}].hostPort",
                               "the API server sets hostPort to containerPort for a hostNetwork pod; kubetwin "
                               "takes ports as written, so NodePorts does not see this port — give hostPort",
                               frozenset({SCHEDULER, SIMULATION}))
    for name in ("schedulingGroup", "workloadRef"):
        if spec.get(name):
            yield (f"spec.{name}", "gang scheduling (the Workload API) is not modelled; the pod is scheduled "
                                   "on its own", frozenset({SCHEDULER, SIMULATION}))
    if spec.get("resourceClaims"):
        yield ("spec.resourceClaims", "the kubelet's DRA manager (claims prepared, CDI devices handed to containers) "
                                      "is not part of this answer; kubetwin dra prepare models it",
               frozenset({KUBELET}))
    if spec.get("activeDeadlineSeconds") is not None:
        yield ("spec.activeDeadlineSeconds", "the kubelet's deadline is not modelled; the pod runs for its "
                                             "kubetwin.io/duration", frozenset({SIMULATION}))


_JOB_FIELDS = ("activeDeadlineSeconds", "podFailurePolicy", "successPolicy", "backoffLimitPerIndex",
               "maxFailedIndexes", "podReplacementPolicy", "managedBy")


def object_findings(obj: Mapping[str, Any]) -> Iterator[Finding]:
    """The same for the other kinds kubetwin reads (workload controllers, disruption budgets)."""
    kind = obj.get("kind")
    spec = _mapping(obj.get("spec"))
    sim = frozenset({SIMULATION})
    if kind == "Deployment" and spec.get("paused") is True:
        yield ("spec.paused", "a paused Deployment is simulated as if it were not paused (a new paused "
                              "Deployment creates no pods)", sim)
    elif kind == "Job":
        if spec.get("suspend") is True:
            yield ("spec.suspend", "a suspended Job is simulated as if it ran (it creates no pods)", sim)
        for name in _JOB_FIELDS:
            if spec.get(name) is not None:
                yield (f"spec.{name}", "the Job controller's handling of this field is not modelled "
                                       "(parallelism, completions and backoffLimit are)", sim)
    elif kind == "StatefulSet":
        yield from _statefulset_findings(spec, _mapping(obj.get("status")))
    elif kind == "ReplicationController":
        yield ("kind", f"the simulation creates no pods for a {kind} (it runs the Deployment, ReplicaSet, "
                       "StatefulSet and Job controllers); only the scheduler's default spread selector reads it", sim)
    elif kind == "PodDisruptionBudget" and not _mapping(obj.get("status")) and (
            spec.get("minAvailable") is not None or spec.get("maxUnavailable") is not None):
        yield ("status.disruptionsAllowed", "preemption takes the budget's status as given and the disruption "
                                            "controller that computes it is not modelled: without a status, "
                                            "no disruption is allowed — give status as kubectl get -o yaml shows it",
               frozenset({SCHEDULER, SIMULATION}))


def _statefulset_findings(spec: Mapping[str, Any], status: Mapping[str, Any]) -> Iterator[Finding]:
    """What the simulation's StatefulSet controller (:mod:`kubetwin.sim.statefulset`) does not do."""
    sim = frozenset({SIMULATION})
    if spec.get("volumeClaimTemplates"):
        yield ("spec.volumeClaimTemplates", "PersistentVolumeClaims are not simulated: the set's pods are created "
                                            "without their claims (no volume binding, no storage limits)", sim)
    if spec.get("persistentVolumeClaimRetentionPolicy") is not None:
        yield ("spec.persistentVolumeClaimRetentionPolicy", "PersistentVolumeClaims are not simulated, so neither "
                                                            "is their retention when the set scales down", sim)
    current, update = status.get("currentRevision"), status.get("updateRevision")
    if current and update and current != update:
        yield ("status.updateRevision", f"a rolling update is under way ({current} to {update}): the simulation "
                                        "replaces no pod for it, pods keep the revision they run", sim)


def _report(findings: Iterator[Finding], file: str | None, prefix: str, reader: Reader) -> None:
    for path, why, readers in findings:
        if _matters(readers, reader):
            not_modelled(_join(prefix, path), file=file, why=why)


#: The PodSpec fields :func:`pod_findings` looks at (a pod with none of them is passed at C speed).
_POD_FIELDS = frozenset({"runtimeClassName", "os", "hostNetwork", "schedulingGroup", "workloadRef", "resourceClaims",
                         "activeDeadlineSeconds"})


def not_modelled_pod(obj: Mapping[str, Any], file: str | None = None, *, prefix: str = "",
                     reader: Reader = None) -> None:
    """Warn (error under ``--strict``) for each field of a pod that changes ``reader``'s answer
    but that kubetwin does not model."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and spec.keys().isdisjoint(_POD_FIELDS):
        return
    _report(pod_findings(obj), file, prefix, reader)


def not_modelled_object(obj: Mapping[str, Any], file: str | None = None, *, prefix: str = "",
                        reader: Reader = None) -> None:
    """:func:`not_modelled_pod` for the other kinds."""
    _report(object_findings(obj), file, prefix, reader)


__all__ = ["KUBELET", "SCHEDULER", "SIMULATION", "pod_findings", "object_findings", "not_modelled_pod",
           "not_modelled_object"]
