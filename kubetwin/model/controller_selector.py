"""The API server's validation of a workload controller's selector, shared by every reader of
controllers (``kubetwin plan``'s workload, ``simulate``'s scenario): one validator, so the two
refuse the same objects with the same words.

Upstream (read, not copied): kubernetes ``pkg/apis/apps/validation/validation.go``
(``ValidateDeploymentSpec``/``ValidateReplicaSetSpec``/``ValidateStatefulSetSpec``/
``ValidateDaemonSetSpec`` → ``unversionedvalidation.ValidateLabelSelector`` on
``spec.selector`` and ``ValidatePodTemplateSpecForReplicaSet``: the template's labels must be
matched by the selector).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import InputError

#: the kinds whose ``spec.selector`` the apps validation checks
SELECTED_KINDS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"})


def check_controller_selector(obj: Mapping[str, Any], where: str) -> None:
    """``spec.selector.matchLabels``' keys and values valid label keys/values, and the
    template's labels matched by it; an :class:`InputError` naming ``where`` otherwise."""
    from .pod import validate_labels

    spec = obj.get("spec") or {}
    selector = spec.get("selector") or {}
    match = selector.get("matchLabels") or {}
    try:
        validate_labels(dict(match), "spec.selector.matchLabels")
    except InputError as exc:
        raise exc.in_file(where) from None
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in match.items()):
        raise InputError("Invalid value: `selector` does not match template `labels`",
                         path="spec.template.metadata.labels", file=where,
                         fix="give the template every label of spec.selector.matchLabels")
