"""Kubernetes API objects and values: Quantity, CPUSet, Pod, Node, configs — parsed and
validated once at the edge into immutable typed views.

Upstream: ``staging/src/k8s.io/api/core/v1/types.go`` and ``k8s.io/apimachinery``; each module names
its file."""

from .cpuset import CPUSet
from .quantity import Quantity, parse_quantity

__all__ = ["CPUSet", "Quantity", "parse_quantity"]
