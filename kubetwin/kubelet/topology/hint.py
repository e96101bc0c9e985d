"""``TopologyHint``: a NUMA affinity (``None`` = any node) and whether it is preferred.

Upstream: ``pkg/kubelet/cm/topologymanager/topology_manager.go`` (``TopologyHint``)."""

from __future__ import annotations

from typing import NamedTuple

from .bitmask import bits_of, format_mask


class TopologyHint(NamedTuple):
    """A named tuple: hashed and compared in C, as hints are keys of the managers' memos."""

    affinity: int | None
    preferred: bool

    def nodes(self) -> list[int]:
        return [] if self.affinity is None else bits_of(self.affinity)

    def to_dict(self) -> dict:
        return {"numaNodeAffinity": None if self.affinity is None else self.nodes(), "preferred": self.preferred}

    def __str__(self) -> str:
        return f"{{{format_mask(self.affinity)} {str(self.preferred).lower()}}}"


#: ``nil`` hints of a provider: no preference for this resource.
ANY_PREFERRED = TopologyHint(None, True)
#: An empty (non-nil) hint list: the resource cannot be satisfied with any alignment.
ANY_NOT_PREFERRED = TopologyHint(None, False)
