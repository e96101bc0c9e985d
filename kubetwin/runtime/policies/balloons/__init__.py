"""nri-plugins' ``balloons`` policy (containers/nri-plugins v0.14.0,
``cmd/plugins/balloons/policy``): containers grouped into balloons of exclusive CPUs that
inflate and deflate as containers come and go.

``cputree``: the CPU topology tree and the allocator that picks where a balloon grows or
shrinks; ``policy``: balloon types, instances, the fill-method chain and the ``Backend``.
"""

from .policy import BalloonsPolicy

__all__ = ["BalloonsPolicy"]
