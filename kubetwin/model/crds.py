"""Field specs of the custom resources kubetwin reads, written from their CRDs' Go types.

No Kubernetes release defines these, so their strict decoding follows the types the CRD is
generated from:

* ``NodeResourceTopology`` (``topology.node.k8s.io/v1alpha2`` and ``v1alpha1``), which node
  agents (RTE, NFD) publish and the NodeResourceTopologyMatch plugin reads — from
  k8stopologyawareschedwg/noderesourcetopology-api ``pkg/apis/topology/v1alpha{1,2}/types.go``.
  v1alpha1 has no top-level ``attributes``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .quantity import parse_quantity
from .strict import INTEGER, STRING, STRING_OR_NUMBER, Spec, list_of, obj


def _object_meta() -> Spec:
    from .apischema import type_spec

    return type_spec("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")


@lru_cache(maxsize=None)
def node_resource_topology_spec(api_version: str) -> Spec:
    attribute = obj(name=STRING, value=STRING)
    zone = obj(name=STRING, type=STRING, parent=STRING,
               costs=list_of(obj(name=STRING, value=INTEGER)),
               attributes=list_of(attribute),
               resources=list_of(obj(name=STRING, capacity=STRING_OR_NUMBER, allocatable=STRING_OR_NUMBER,
                                     available=STRING_OR_NUMBER)))
    fields: dict[str, Spec] = {"apiVersion": STRING, "kind": STRING, "metadata": _object_meta(),
                               "topologyPolicies": list_of(STRING), "zones": list_of(zone)}
    if api_version.endswith("/v1alpha2"):
        fields["attributes"] = list_of(attribute)
    return obj(fields)


def validate_node_resource_topology(nrt: dict[str, Any], file: str | None = None) -> None:
    """The values the spec's types do not pin down: every resource amount is a quantity (the
    CRD's ``resource.Quantity``), so a bad one is refused where it is read, naming the file."""
    from ..errors import InputError

    for i, zone in enumerate(nrt.get("zones") or ()):
        for j, res in enumerate((zone or {}).get("resources") or ()):
            for key in ("capacity", "allocatable", "available"):
                value = (res or {}).get(key)
                if value is not None:
                    try:
                        parse_quantity(value, f"zones[{i}].resources[{j}].{key}")
                    except InputError as exc:
                        raise exc.in_file(file) from None
