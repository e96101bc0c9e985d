"""Cluster simulation: the scheduler and a kubelet on every node over time.

``load_scenario`` reads a scenario (a ``Simulation`` object plus Kubernetes objects and traces),
``simulate`` runs it and returns a :class:`SimResult`.

Not an upstream module: kubetwin's own simulation, driving upstream's scheduler and kubelet models.
"""

from __future__ import annotations

from .loop import Simulator, simulate
from .results import SimResult
from .scenario import Scenario, load_scenario

__all__ = ["Scenario", "SimResult", "Simulator", "load_scenario", "simulate"]
