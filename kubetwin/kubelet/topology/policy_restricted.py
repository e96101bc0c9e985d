"""The ``restricted`` Topology Manager policy (``pkg/kubelet/cm/topologymanager/policy_restricted.go``):
as best-effort, but a merged hint that is not preferred is refused."""

from __future__ import annotations

from dataclasses import dataclass

from .policy import RESTRICTED, Policy


@dataclass(frozen=True)
class RestrictedPolicy(Policy):
    name = RESTRICTED
