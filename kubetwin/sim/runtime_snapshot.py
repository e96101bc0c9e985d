"""Snapshots of a runtime node's state, taken with ``pickle`` at C speed and restored many times.

The table of node histories (:mod:`.runtime_memo`) answers an event it does not know (a *miss*)
on a real :class:`..runtime.node.RuntimeNode` in the node's state. Without a real node parked in
that state it used to copy one parked higher up and replay the rest of the node's history on it
(the full NRI path, ~0.6 ms a creation). A snapshot kept at every state a real node leaves
makes every state restorable: the miss restores the snapshot of its own state, no replay, no
copy of a parked node.

A snapshot holds only what a node changes: the objects its copies share
(:func:`.runtime_policies.clone_runtime_node`: the machine, its sysfs view, the policy resource
and configuration, the kubelet, the balloons' CPU tree) are pre-seeded in the pickler's and the
unpickler's memo, so they are written as a memo reference and read back as the same object;
what never changes once made — frozen ``msgspec`` structs (pods), CPU sets, NRI pod sandbox
messages, objects whose ``__deepcopy__`` returns themselves — is kept in a list of the
snapshotter (:class:`Snapshots`) and read back by index, by the list's own ``__getitem__`` (no
Python frame). A container message is written as the message it was made as plus what the
runtime writes after ``CreateContainer``, its state and ``linux.resources``
(:mod:`.runtime_copy`'s rule: the rest is shared). Everything else is pickled as
``copy.deepcopy`` copies it (``__reduce_ex__``): a restored node is the graph a copy gives.

A node is not snapshot-safe when it runs NRI plugins other than the resource manager (a Python
plugin's state is its own) or when something in it can not be pickled (a lambda, ...):
:meth:`Snapshots.take` then answers None and the table keeps its parked copies and replays.

**Off by default** (:data:`ENABLED`): measured, it does not pay. A snapshot costs about what a
copy does (topology-aware, a node with six pods: take 0.25 ms, restore 0.5 ms, a copy 0.45 ms,
~15-20 kB) — the graph is many small objects, and pickle's per-object work in C is not much
less than :mod:`.runtime_copy`'s in Python —, and one is taken at every state a real node
leaves, most of them never restored: 5,000 nodes x 50,000 pods, 5,359 snapshots (130 MB) for
3,484 restores, +3 s CPU and +100 MB RSS over copies and replays. Kept as a tested option
(``--snapshots`` in ``benchmarks/bench_runtime_sim.py``) for policies whose states are revisited more.

The protocol is pickle 3: its memo entries carry their index (``BINPUT``), so a pre-seeded memo
stays consistent on both sides (protocol 4's ``MEMOIZE`` counts entries, which CPython's
unpickler does not take over from a copied memo).

Not an upstream module: a kubetwin fast path for the simulation of nri-plugins' policies.
"""

from __future__ import annotations

import io
import operator
import pickle
from typing import TYPE_CHECKING, Any, Callable

import msgspec

from ..model.cpuset import CPUSet

if TYPE_CHECKING:
    from ..runtime.node import RuntimeNode

PROTOCOL = 3

#: take and restore snapshots (False: the table copies parked nodes and replays, for A/B runs)
ENABLED = False

_DEFAULT = operator.methodcaller("__reduce_ex__", PROTOCOL)


class NotSnapshotSafe(Exception):
    """Something in the node can not be kept in a snapshot."""


class Snapshots:
    """Snapshots of the runtime nodes of one table (one machine, policy resource and kubelet
    configuration): ``shared`` are the objects every node of it shares (never written into a
    snapshot)."""

    def __init__(self, shared: list[Any]):
        #: objects kept by reference: index -> object (strong references, so ids stay valid)
        self.kept: list[Any] = []
        self._kept_index: dict[int, int] = {}
        self._getter = self.kept.__getitem__
        self._roots: list[Any] = [*shared, self.kept, self._getter, _container]
        self._seed()
        self._dispatch = _Dispatch(self)

    def _seed(self) -> None:
        """The pickler's and the unpickler's memos, pre-seeded with the roots at their indices."""
        roots = self._roots
        self._seeder = pickle.Pickler(io.BytesIO(), protocol=PROTOCOL)
        self._seeder.memo = {id(o): (i, o) for i, o in enumerate(roots)}
        # CPython's unpickler takes a copied memo only from another unpickler: one that has run
        # a program memoizing each root at its index
        program = bytearray(b"\x80\x03")
        for i in range(len(roots)):
            program += b"J" + i.to_bytes(4, "little", signed=True) + b"Q" + b"r" + i.to_bytes(4, "little") + b"0"
        program += b"N."
        loader = _RootLoader(io.BytesIO(bytes(program)), roots)
        loader.load()
        self._loader = loader

    def add_root(self, obj: Any) -> None:
        """``obj`` (a class met for the first time) is written as a memo reference from now on;
        snapshots taken before read it as they wrote it (their own memo entries come after the
        roots they knew, and each is put before it is got)."""
        self._roots.append(obj)
        self._seed()

    # --- objects kept by reference -------------------------------------------------------------
    def keep(self, obj: Any) -> tuple[Callable[[int], Any], tuple[int]]:
        i = self._kept_index.get(id(obj))
        if i is None:
            i = self._kept_index[id(obj)] = len(self.kept)
            self.kept.append(obj)
        return self._getter, (i,)

    # --- snapshots -----------------------------------------------------------------------------
    def take(self, rn: "RuntimeNode") -> bytes | None:
        """The node's state as bytes, or None when it is not snapshot-safe."""
        if not snapshot_safe(rn):
            return None
        buf = io.BytesIO()
        p = pickle.Pickler(buf, protocol=PROTOCOL)
        p.dispatch_table = self._dispatch
        p.memo = self._seeder.memo
        try:
            p.dump(rn)
        except (NotSnapshotSafe, pickle.PicklingError, TypeError, AttributeError, RecursionError):
            return None
        return buf.getvalue()

    def restore(self, data: bytes) -> "RuntimeNode":
        """A new node in the state :meth:`take` saw."""
        u = pickle.Unpickler(io.BytesIO(data))
        u.memo = self._loader.memo
        node: RuntimeNode = u.load()
        return node


class _RootLoader(pickle.Unpickler):
    """Reads the program that puts each root in the memo (by its index, as a persistent id)."""

    def __init__(self, file: io.BytesIO, roots: list[Any]):
        super().__init__(file)
        self.roots = roots

    def persistent_load(self, pid: Any) -> Any:
        return self.roots[pid]


def snapshot_safe(rn: "RuntimeNode") -> bool:
    """Only nri-plugins' policies (the resource manager) among the node's NRI plugins: a Python
    plugin may hold anything."""
    plugins = rn.adaptation.plugins
    return all(getattr(r, "plugin", None) is rn.resmgr and rn.resmgr is not None for r in plugins)


class _Dispatch(dict[type, Callable[[Any], Any]]):
    """The pickler's ``dispatch_table``: how each type is written, decided once per type."""

    def __init__(self, snaps: Snapshots):
        super().__init__()
        self.snaps = snaps

    def __missing__(self, t: type) -> Callable[[Any], Any]:
        how = self[t] = _classify(t, self.snaps)
        self.snaps.add_root(t)
        return how


def _classify(t: type, snaps: Snapshots) -> Callable[[Any], Any]:
    from ..runtime.nri import api

    if t is CPUSet or t is api.PodSandbox or (issubclass(t, msgspec.Struct) and t.__struct_config__.frozen):
        return snaps.keep
    if t is api.Container:
        return lambda ctr: _container_reduce(ctr, snaps)
    if getattr(t, "__deepcopy__", None) is not None:
        return lambda obj: _own_deepcopy(obj, snaps)
    return _DEFAULT


def _own_deepcopy(obj: Any, snaps: Snapshots) -> Any:
    """Objects with a ``__deepcopy__`` of their own: kept when it returns the object itself
    (shared by every copy: enums, the balloons' fixed tables), refused otherwise."""
    if obj.__deepcopy__({}) is obj:
        return snaps.keep(obj)
    raise NotSnapshotSafe(type(obj).__qualname__)


def _container_reduce(ctr: Any, snaps: Snapshots) -> Any:
    """A container message: the message as made, its state and a copy of ``linux.resources``
    (nothing else of it is written after ``CreateContainer``)."""
    linux = ctr.linux
    if linux is None:
        return _container, (snaps.keep(ctr)[1][0], snaps.kept, ctr.state, None, None)
    return _container, (snaps.keep(ctr)[1][0], snaps.kept, ctr.state, snaps.keep(linux)[1][0], linux.resources)


def _container(i: int, kept: list[Any], state: str, linux: int | None, resources: Any) -> Any:
    orig = kept[i]
    new = object.__new__(type(orig))
    new.__dict__.update(orig.__dict__)
    new.state = state
    if linux is None:
        new.linux = None
    else:
        lx = kept[linux]
        nl = object.__new__(type(lx))
        nl.__dict__.update(lx.__dict__)
        nl.resources = resources
        new.linux = nl
    return new
