"""Extension points as typed protocols, the plugins' :class:`Handle` and ``CycleState``
(``pkg/scheduler/framework/interface.go``, ``k8s.io/kube-scheduler/framework``).

A plugin is a class registered under its upstream name (:mod:`..plugins.registry` for the
in-tree ones, :func:`register` for out-of-tree ones); which extension points it takes part in
is which protocols below it satisfies — as a Go plugin struct satisfies interfaces. The
framework runtime (:mod:`.runtime`) sorts a profile's plugins into per-extension-point lists
once, with these protocols, and runs them in upstream's order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Protocol, Sequence, runtime_checkable

from ...model.pod import Pod
from .status import Status
from .types import NodeInfo, ResourceAccounting, Snapshot

if TYPE_CHECKING:
    from ...model.features import FeatureGates
    from ..backend.cache import Cache
    from ..backend.queue import QueuedPod
    from ..plugins.defaultpreemption.pdb import PodDisruptionBudget
    from ..plugins.dynamicresources.dynamicresources import DynamicResources
    from ..plugins.noderesourcetopology.nrt import NodeResourceTopology
    from .diagnosis import Diagnosis
    from .runtime import Framework

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


@dataclass
class Handle:
    """What plugins may read besides the pod and the node: ``framework.Handle``."""

    snapshot: Snapshot
    gates: "FeatureGates"
    accounting: ResourceAccounting
    #: other API objects by kind (Services, DeviceClasses, NodeResourceTopologies, ...), as read (any JSON)
    objects: Mapping[str, list[Any]] = field(default_factory=dict)
    #: pods nominated to nodes (preemption), by node name
    nominated: Mapping[str, list[Pod]] = field(default_factory=dict)
    #: the run's seed: tie-breaks and the names of generated ResourceClaims
    seed: int = 0
    #: the DRA plugin over this snapshot, whose allocated devices other plugins read
    dynamic_resources: DynamicResources | None = None
    #: the framework runtime running the profile (``RunFilterPluginsWithNominatedPods`` & co.)
    framework: Framework | None = None
    #: the long-running scheduler's cache (:class:`..backend.cache.Cache`), when there is one
    cache: Cache | None = None
    #: PodDisruptionBudgets (preemption reads them)
    pdbs: Sequence[PodDisruptionBudget] = ()
    #: the file (and document) each of ``objects`` came from, by kind, for errors that name it
    origins: Mapping[str, list[str]] = field(default_factory=dict)
    #: NodeResourceTopologies an agent on the node keeps up to date during a run (a runtime policy's
    #: export in ``simulate``): node name -> parsed object, or None to read ``objects``
    live_nrt: Callable[[str], NodeResourceTopology | None] | None = None


class CycleState(dict):
    """Per-cycle, per-plugin scratch space (``fwk.CycleState``), keyed by plugin name."""

    def clone(self) -> "CycleState":
        c = CycleState()
        for k, v in self.items():
            c[k] = v.clone() if hasattr(v, "clone") else v
        return c


class Plugin:
    """Base of every plugin. ``args`` are its typed args (``parse_args``)."""

    name: ClassVar[str] = ""
    #: Filter reads only the node being filtered, PreFilter only the pod: a failed cycle's
    #: verdicts on untouched nodes stand after other nodes changed (kept verdicts)
    node_local: ClassVar[bool] = False
    #: Filter reads only the Node object (spec, labels, name): pods coming or going leave its
    #: verdict as it was
    reads_node_object_only: ClassVar[bool] = False
    #: PreFilter counts pods on other nodes (``PreFilterExtensions``): preemption's dry runs
    #: work its state out again with the victims gone
    pre_filter_counts_pods: ClassVar[bool] = False
    #: Bind has no effect of its own: the binding is the cache's assumed pod (the default binder)
    binds_through_cache: ClassVar[bool] = False

    def __init__(self, args: Any, handle: Handle):
        self.args = args
        self.handle = handle

    @classmethod
    def parse_args(cls, raw: Mapping[str, Any] | None, path: str, file: str | None = None) -> Any:
        """Typed, defaulted args from the ``pluginConfig[].args`` mapping; plugins with args
        override it (a plugin without args takes none: any field is unknown)."""
        from .args import no_args

        return no_args(cls.name, raw, path, file)


#: PreFilter returns (node names to restrict to or None, status).
PreFilterResult = tuple["set[str] | None", Status]


@dataclass(frozen=True)
class PostFilterResult:
    """``fwk.PostFilterResult``: the node nominated for the pod and the pods to evict there."""

    nominated_node: str
    victims: tuple[Pod, ...] = ()


@runtime_checkable
class QueueSortPlugin(Protocol):
    """``QueueSortPlugin``: the scheduling queue's order (``Less``) and the heap key that
    orders as it does."""

    name: ClassVar[str]

    def less(self, a: QueuedPod, b: QueuedPod) -> bool: ...

    def sort_key(self, qp: QueuedPod) -> tuple[int, float, int]: ...


@runtime_checkable
class PreEnqueuePlugin(Protocol):
    """``PreEnqueuePlugin``: whether a pod may enter activeQ at all."""

    name: ClassVar[str]

    def pre_enqueue(self, pod: Pod) -> Status: ...


@runtime_checkable
class PreFilterPlugin(Protocol):
    """``PreFilterPlugin``; with the :class:`Plugin` flags kept verdicts and preemption read of it."""

    name: ClassVar[str]
    node_local: ClassVar[bool]
    pre_filter_counts_pods: ClassVar[bool]

    def pre_filter(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> PreFilterResult: ...


@runtime_checkable
class FilterPlugin(Protocol):
    """``FilterPlugin``; with the :class:`Plugin` flags kept verdicts read of it."""

    name: ClassVar[str]
    node_local: ClassVar[bool]
    reads_node_object_only: ClassVar[bool]

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status: ...


@runtime_checkable
class PostFilterPlugin(Protocol):
    name: ClassVar[str]

    def post_filter(self, state: CycleState, pod: Pod,
                    diagnosis: "Diagnosis") -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Protocol):
    name: ClassVar[str]

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status: ...


@runtime_checkable
class ScorePlugin(Protocol):
    name: ClassVar[str]

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    """``NormalizeScore``: a score plugin's scores over all scored nodes, rescaled in place."""

    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status: ...


@runtime_checkable
class ReservePlugin(Protocol):
    """Reserve / Unreserve: the plugin's own bookkeeping of a pod bound to a node (and undone)."""

    name: ClassVar[str]

    def reserve(self, pod: Pod, node: str) -> None: ...

    def unreserve(self, pod: Pod) -> None: ...


@runtime_checkable
class PermitPlugin(Protocol):
    name: ClassVar[str]

    def permit(self, state: CycleState, pod: Pod, node: str) -> Status: ...


@runtime_checkable
class BindPlugin(Protocol):
    """``BindPlugin``; with the :class:`Plugin` flag that says its binding is the cache's own."""

    name: ClassVar[str]
    binds_through_cache: ClassVar[bool]

    def bind(self, state: CycleState, pod: Pod, node: str) -> Status: ...


@runtime_checkable
class NodeLabelsListener(Protocol):
    """kubetwin's own: a plugin keeping state derived from a node's labels hears that they changed
    (upstream plugins read the snapshot afresh each cycle; kubetwin's keep per-node verdicts)."""

    def node_changed(self, name: str) -> None: ...


@runtime_checkable
class ClaimChangesSource(Protocol):
    """kubetwin's own: a plugin that deallocates ResourceClaims keeps the (before, after) pairs as
    JSON for the scheduling queue's ``ResourceClaim`` update events until the scheduler takes them."""

    claim_changes: list[tuple[dict[str, Any], dict[str, Any]]]


_REGISTRY: dict[str, type[Plugin]] = {}


def register(cls: type[Plugin]) -> type[Plugin]:
    """Class decorator for an out-of-tree plugin: make ``cls`` available under ``cls.name``."""
    _REGISTRY[cls.name] = cls
    return cls


def registered(name: str) -> type[Plugin] | None:
    """An out-of-tree plugin registered with :func:`register`."""
    return _REGISTRY.get(name)
