"""Kubernetes API objects and values: Quantity, CPUSet, Pod, Node, configs — parsed and
validated once at the edge into immutable typed views."""

from .cpuset import CPUSet
from .quantity import Quantity, parse_quantity

__all__ = ["CPUSet", "Quantity", "parse_quantity"]
