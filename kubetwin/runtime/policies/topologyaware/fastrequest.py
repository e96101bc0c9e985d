"""A fast path for the topology-aware policy's requests: one per shape of an annotation-free container.

Upstream's ``newRequest`` reads a container's CPU and memory preferences — about a dozen
effective-annotation lookups (prefer-reserved, preserve, isolated, shared, CPU priority, memory
type, cold start, pick-by-hints), the reserved-pool namespaces' patterns, the QoS class and
the resource requirements — for every creation. For a pod without annotations every lookup
answers "not annotated", so the request's fields are a function of what is left: the QoS
class, the namespace, the CPU and memory requests and limits, the policy's options
(``preferIsolatedCPUs``, ``preferSharedCPUs``, ``reservedPoolNamespaces``, the default CPU
priority) and the memory allocator's types. They are computed once per such shape by the
plain code (:meth:`.policy.TopologyAwarePolicy.plain_new_request`) and remembered; a new
:class:`.resources.Request` is made from them for each creation (the placement changes its
``cpu_type``). Pods with annotations and policies with CPU classes go the plain way.
Likewise such a container's pool affinities (``calculatePoolAffinities``) are none when the
policy registers no implicit affinities (:func:`no_affinities`): its explicit ones are
annotations; and a grant for such a container has no strict preference to verify
(:func:`no_strict_preferences`: strict topology hints and required isolated CPUs are
annotations too).
``tests/runtime/policies/topologyaware/test_fastrequest.py`` holds the requests equal to the
plain ones.

Not an upstream module: a kubetwin fast path over containers/nri-plugins v0.14.0
``cmd/plugins/topology-aware/policy/{topology-aware-policy,pod-preferences}.go``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import resources

if TYPE_CHECKING:
    from ...resmgr.cache import CachedContainer
    from .policy import TopologyAwarePolicy
    from .resources import Request

#: remember requests per shape (False: every request from the plain code, for A/B runs and tests)
ENABLED = True

#: shapes kept before the table starts over
MAX_SHAPES = 1 << 12

_FIELDS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def new_request(p: "TopologyAwarePolicy", c: "CachedContainer") -> "Request | None":
    """``p.plain_new_request(c)`` for a container of a pod without annotations on a policy
    without CPU classes (None for the others: the plain code answers)."""
    pod = c.pod
    cfg = p.cfg
    if pod.sandbox.annotations or cfg.cpu_classes:
        return None
    reqs = c.resource_requirements()
    key = (pod.qos_class, c.qos_class, pod.namespace, reqs.cpu_request, reqs.cpu_limit, reqs.memory_request,
           reqs.memory_limit, cfg.prefer_isolated, cfg.prefer_shared, cfg.reserved_pool_namespaces, p.default_prio,
           p.mem_allocator.types)
    fields = _FIELDS.get(key)
    if fields is None:
        r = p.plain_new_request(c)
        fields = (r.full, r.fraction, r.limit, r.isolate, r.cpu_type, r.cpu_class, r.prio, r.mem_req, r.mem_lim,
                  r.mem_type, r.cold_start, r.pick_by_hints)
        if len(_FIELDS) >= MAX_SHAPES:
            _FIELDS.clear()
        _FIELDS[key] = fields
        return r
    return resources.Request(c, *fields)



def no_affinities(p: "TopologyAwarePolicy", c: "CachedContainer") -> bool:
    """Whether ``p.calculate_pool_affinities(c)`` is certainly ``{}``: the pod has no
    annotations (the explicit affinities are annotations) and the policy registered no implicit
    ones (``colocatePods``, ``colocateNamespaces``)."""
    return not p.cache.implicit and not c.pod.sandbox.annotations


def no_strict_preferences(r: "Request") -> bool:
    """Whether ``r.verify_strict_preferences(g)`` certainly passes: the container's pod has no
    annotations, so neither strict topology hints (``strictTopologyHints``) nor required
    isolated CPUs (``require-isolated-cpus``) are asked for — both are annotations, looked up
    there for every grant (the second by a function-level import)."""
    return not r.container.pod.sandbox.annotations
