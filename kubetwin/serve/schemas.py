"""JSON Schemas of ``kubetwin serve``'s request and response bodies, for its OpenAPI 3 document.

The bodies are read by kubetwin's own strict readers (an unknown field is a 400 naming it), so
these schemas document them rather than validate them. The extender's use the Go field names of
``k8s.io/kube-scheduler/extender/v1`` (``types.go``: no JSON tags); a Pod or Node is the
Kubernetes object as the API server serves it.

Not an upstream module: kubetwin's own API description.
"""

from __future__ import annotations

from typing import Any

OBJECT: dict[str, Any] = {"type": "object"}
POD: dict[str, Any] = {"type": "object", "description": "a core/v1 Pod (apiVersion and kind may be left out)"}
NODE_NAMES: dict[str, Any] = {"type": ["array", "null"], "items": {"type": "string"}}
FAILED_NODES: dict[str, Any] = {"type": ["object", "null"], "additionalProperties": {"type": "string"}}

ERROR: dict[str, Any] = {
    "type": "object", "required": ["error"],
    "properties": {"error": {"type": "string"}, "path": {"type": "string"}, "file": {"type": ["string", "null"]},
                   "fix": {"type": ["string", "null"]}, "message": {"type": "string"}},
}

EXTENDER_ARGS: dict[str, Any] = {
    "type": "object", "description": "ExtenderArgs (k8s.io/kube-scheduler/extender/v1)",
    "properties": {"Pod": POD, "Nodes": {"type": ["object", "null"], "description": "a core/v1 NodeList"},
                   "NodeNames": NODE_NAMES},
}
EXTENDER_FILTER_RESULT: dict[str, Any] = {
    "type": "object", "description": "ExtenderFilterResult",
    "properties": {"Nodes": {"type": ["object", "null"]}, "NodeNames": NODE_NAMES, "FailedNodes": FAILED_NODES,
                   "FailedAndUnresolvableNodes": FAILED_NODES, "Error": {"type": "string"}},
}
HOST_PRIORITY_LIST: dict[str, Any] = {
    "type": "array", "description": "HostPriorityList (scores 0..MaxExtenderPriority = 10)",
    "items": {"type": "object", "properties": {"Host": {"type": "string"},
                                               "Score": {"type": "integer", "minimum": 0, "maximum": 10}}},
}
META_VICTIMS: dict[str, Any] = {
    "type": "object",
    "properties": {"Pods": {"type": "array", "items": {"type": "object", "properties": {"UID": {"type": "string"}}}},
                   "NumPDBViolations": {"type": "integer"}},
}
EXTENDER_PREEMPTION_ARGS: dict[str, Any] = {
    "type": "object", "description": "ExtenderPreemptionArgs",
    "properties": {"Pod": POD,
                   "NodeNameToVictims": {"type": ["object", "null"], "additionalProperties": {
                       "type": "object", "properties": {"Pods": {"type": "array", "items": POD},
                                                        "NumPDBViolations": {"type": "integer"}}}},
                   "NodeNameToMetaVictims": {"type": ["object", "null"], "additionalProperties": META_VICTIMS}},
}
EXTENDER_PREEMPTION_RESULT: dict[str, Any] = {
    "type": "object", "description": "ExtenderPreemptionResult",
    "properties": {"NodeNameToMetaVictims": {"type": ["object", "null"], "additionalProperties": META_VICTIMS}},
}
EXTENDER_BINDING_ARGS: dict[str, Any] = {
    "type": "object", "description": "ExtenderBindingArgs",
    "required": ["PodName", "PodNamespace", "PodUID", "Node"],
    "properties": {"PodName": {"type": "string"}, "PodNamespace": {"type": "string"},
                   "PodUID": {"type": "string"}, "Node": {"type": "string"}},
}
EXTENDER_BINDING_RESULT: dict[str, Any] = {
    "type": "object", "description": "ExtenderBindingResult", "properties": {"Error": {"type": "string"}},
}

SCHEDULE_REQUEST: dict[str, Any] = {
    "type": "object", "required": ["pod"],
    "properties": {"pod": POD, "seed": {"type": "integer"},
                   "config": {"type": "string",
                              "description": "a KubeSchedulerConfiguration file inside --data-dir"}},
}
ADMIT_REQUEST: dict[str, Any] = {
    "type": "object", "required": ["node", "pods"],
    "properties": {"node": {"type": "string"}, "pods": {"type": "array", "items": POD}},
}
EXPLAIN_REQUEST: dict[str, Any] = {
    "type": "object", "required": ["node", "pod"],
    "properties": {"node": {"type": "string"}, "pod": POD},
}
CLAIM: dict[str, Any] = {"type": "object", "description": "a resource.k8s.io ResourceClaim (any served version)"}
DRA_REQUEST: dict[str, Any] = {
    "type": "object", "required": ["node"],
    "description": "either pod (its spec.resourceClaims, as dra allocate --pod) or claims",
    "properties": {"node": {"type": "string"}, "pod": POD, "claims": {"type": "array", "items": CLAIM},
                   "seed": {"type": "integer", "description": "of generated claim names (dra allocate --seed)"},
                   "explain": {"type": "boolean", "description": "answer as dra explain (claims only)"}},
}
RUNTIME_REQUEST: dict[str, Any] = {
    "type": "object", "required": ["node"],
    "properties": {"node": {"type": "string"},
                   "policy": {"type": "string", "description": "topology-aware, balloons, none, or a policy file "
                                                               "inside --data-dir (default: the node group's)"},
                   "helmValues": {"type": "string", "description": "a Helm values file inside --data-dir"},
                   "rdt": {"type": "string", "description": "a goresctrl RDT configuration inside --data-dir"},
                   "blockio": {"type": "string", "description": "a goresctrl Block I/O configuration inside --data-dir"},
                   "isolatedCpus": {"type": "string"}, "pods": {"type": "array", "items": POD},
                   "delete": {"type": "array", "items": {"type": "string"}},
                   "explain": {"type": "boolean"}, "nrt": {"type": "boolean"}},
}
SIMULATION_REQUEST: dict[str, Any] = {
    "type": "object",
    "properties": {"variants": {"type": "array", "items": {"type": "string"},
                                "description": "as simulate --variant: NAME:KEY=VALUE[,KEY=VALUE]"}},
}
JOB: dict[str, Any] = {
    "type": "object", "required": ["id", "state"],
    "properties": {"id": {"type": "string"},
                   "state": {"enum": ["queued", "running", "succeeded", "failed", "cancelled"]},
                   "progress": OBJECT, "results": {"type": ["array", "null"]}},
}


def body(schema: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra`` of a route whose JSON body is read by kubetwin (not by FastAPI)."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def responses(schema: dict[str, Any], *codes: int, ok: int = 200) -> dict[int | str, dict[str, Any]]:
    """A route's answers: ``schema`` on success, the error object on each of ``codes``."""
    words = {400: "malformed request (the field path says which field)", 401: "missing or wrong bearer token",
             403: "read-only service (start it with --allow-writes)", 404: "not found",
             408: "the body did not arrive in time", 413: "body too large", 429: "the job queue is full",
             503: "busy or over the time limit"}
    out: dict[int | str, dict[str, Any]] = {ok: {"description": "OK",
                                                 "content": {"application/json": {"schema": schema}}}}
    for c in (401, 503, *codes):
        out[c] = {"description": words[c], "content": {"application/json": {"schema": ERROR}}}
    return out
