"""Pods that share one spec object admitted once (a shortcut around the API server's admission
chain, ``plugin/pkg/admission``, as :class:`.loop._AdmissionControl` runs it).

Trace readers, workloads and controllers give the pods of one shape the same spec object, only the names
differ. Where nothing in the pod's namespace reads more than the spec — no LimitRange (whose
LimitRanger annotates the pod), no ResourceQuota (which counts the pods running), no mutating
webhook — the chain's answer depends on the spec alone: defaulting (``SetDefaults_Pod``'s
resource part) and Priority admission rewrite the spec and nothing else, so the admitted spec of
the first such pod is the admitted spec of every pod that shares its spec. The first pod runs the
chain and its answer is kept only if the chain changed nothing but the spec; a rejection is never
kept (its message names the pod). Not an upstream module.
"""

from __future__ import annotations

from typing import Any, Callable

import msgspec

from ..model.pod import Pod

#: off: every pod runs the whole admission chain (the plain path)
ENABLED = True
#: spec objects remembered at most (the memo is cleared past this)
MAX_SPECS = 50_000


class SpecAdmissions:
    """The admitted spec per input spec object, for namespaces whose admission reads only the spec."""

    def __init__(self) -> None:
        #: id(spec) -> (that spec, kept alive so its id stays its own; the admitted spec)
        self._by_spec: dict[int, tuple[Any, Any]] = {}

    def admit(self, pod: Pod, chain: Callable[[Pod], Pod]) -> Pod:
        """``chain(pod)`` — the admission chain — or the answer it gave a pod with the same spec
        object: this pod with that admitted spec."""
        spec = pod.spec
        got = self._by_spec.get(id(spec))
        if got is not None and got[0] is spec:
            out = got[1]
            return pod if out is spec else msgspec.structs.replace(pod, spec=out)
        admitted = chain(pod)
        if admitted is pod:
            out = spec
        elif msgspec.structs.replace(pod, spec=admitted.spec) == admitted:
            out = admitted.spec
        else:
            return admitted   # the chain changed more than the spec: nothing kept
        if len(self._by_spec) >= MAX_SPECS:
            self._by_spec.clear()
        self._by_spec[id(spec)] = (spec, out)
        return admitted
