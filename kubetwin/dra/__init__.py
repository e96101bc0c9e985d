"""Dynamic Resource Allocation with structured parameters: reading DRA objects, the allocator,
its CEL selectors and its explanations.

Upstream: ``staging/src/k8s.io/dynamic-resource-allocation/structured``; each module names its file.
"""
