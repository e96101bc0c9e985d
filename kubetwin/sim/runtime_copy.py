"""A copy of a runtime node's state, several times cheaper than ``copy.deepcopy``.

``simulate`` copies runtime nodes all the time: every node of a runtime-policy group starts as a
copy of the group's started node (:func:`.runtime_policies.fork_runtime_node`), and the table
of node histories (:mod:`.runtime_memo`) parks copies of real nodes in the states they pass
through. ``copy.deepcopy`` spends most of that time on what never changes once built — the
pods (frozen ``msgspec`` structs), cpusets (immutable), strings — and on its generic dispatch
(``__reduce_ex__`` for every object). :func:`copy_state` gives the same graph — every mutable
object copied once, shared references and cycles kept, ``memo`` objects taken as given — but
shares the immutable values and copies plain objects (``__dict__`` and ``__slots__``), dicts,
lists, sets and tuples directly; anything else (objects with their own ``__deepcopy__``,
``__reduce_ex__``, ``__setstate__``, ...) goes to ``copy.deepcopy`` with the same memo.

The runtime's own records of its pods (:class:`..runtime.node.PodRecord`) are most of a node
with pods, and most of them never changes once the pod runs: after ``CreateContainer`` the
runtime only writes a container's state and its ``linux.resources`` (the plugins' updates,
:func:`..runtime.nri.adaptation.apply_update`), never the sandbox message nor the container's
labels, annotations, mounts, hooks or other fields (what the plugins get is a clone, or — for the
events their plugin declares read-only — the message itself, which they neither keep nor
change). The resource manager's cache (``pkg/resmgr/cache``) keeps its own copies of the
messages and likewise only writes a container's ``linux.resources`` (the policy's cpusets,
memory nodes, classes). So the records and the cache's pods and containers are copied with
their sandbox message and those fields shared: a new record, a new container message and
``linux`` around them, and a copy of the resources.

What can not change is shared rather than copied: frozen dataclasses whose fields are all
scalars (the kubelet's ``CgroupLayout``, the runtime's ``Requirements``), types whose
``__deepcopy__`` is ``return self`` (balloons' types and CPU-tree allocators: ``copy.deepcopy``
gives the object itself), a container's ``HugepageLimit`` entries (replaced, never written), and
what a started node only reads (:func:`read_only_parts`: libmem's memory topology,
topology-aware's pool memory sets). Slotted classes (the pools' CPU supplies, libmem's zones and
requests) get a copier generated from their slot names, and a container's ``LinuxResources`` is
copied in one step. Copies of held nodes at 1,000 nodes x 10,000 pods: 449 -> 261 us
(topology-aware) and 280 -> 156 us (balloons) a copy without the collector (docs/scale.md).

Eleventh session: a tuple or frozenset whose items are all atoms (or such tuples themselves) can
never change, so it is remembered the first time it is met (:data:`_IMMUTABLE`) and every later
copy shares it without walking it (topology-aware's offer plans: a tuple per pool per memory
type, walked item by item by every copy before); a dict or plain object is copied whole at C
speed and only its values that are not atoms replaced; values met already (back references to
the policy, the cache, a pool's parent) are read from the memo without a call; a container's
message chain (message, ``linux``, resources, memory, CPU and the flat lists and dict under them)
is copied in line.

Thirteenth session: what neither a node nor its copy ever writes again is shared, not copied
(:data:`SHARE_UNWRITTEN`: a container's hugepage-limit and device lists, a cached container's tags
and topology hints, the started node's empty plugin lists and topology-aware's leaf pools' child
lists), and :func:`copy_detached` (the copies of :mod:`.runtime_policies`) lets the C kernel keep
the memo in a table of its own keyed by address, the started node's shared objects in a table kept
from one copy to the next (:data:`DETACHED`); the kernel copies tuples itself.

Fourteenth session: the kernel allocates the plain objects it copies bare (:data:`BARE_NEW`: no
inline attribute values made only to be dropped for the copy's own ``__dict__``) and copies slots at
their offsets (:data:`DIRECT_SLOTS`), and a node never
resized in place — the table's, :func:`.runtime_policies.clone_runtime_node` with ``resizable``
False — shares its containers' memory parts and unified entries with its copy
(:data:`SHARE_UNRESIZED`).

Not an upstream module: a kubetwin fast path for the simulation of nri-plugins' policies.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import keyword
import types
import typing
from typing import Any, Callable

import msgspec

from ..model.cpuset import CPUSet

_ATOM, _DICT, _LIST, _TUPLE, _SET, _FROZENSET, _OBJECT, _DEEPCOPY, _OWN, _OWN_DEEPCOPY = range(10)

#: per type: how it is copied; types first met are classified by :func:`_classify`
_KIND: dict[type, int] = {t: _ATOM for t in (str, int, float, bool, complex, bytes, type(None), type,
                                             range, types.FunctionType, types.BuiltinFunctionType,
                                             types.ModuleType, CPUSet, type(Ellipsis), type(NotImplemented))}
_KIND.update({dict: _DICT, list: _LIST, tuple: _TUPLE, set: _SET, frozenset: _FROZENSET})
#: the types whose kind is ``_ATOM`` (as a set: the test on every value copied)
_ATOMS: set[type] = {t for t, k in _KIND.items() if k == _ATOM}
#: the slots of a type (its own and its bases'), for objects with ``__slots__``
_SLOTS: dict[type, tuple[str, ...]] = {}

_PLAIN_REDUCE = object.__reduce_ex__
#: plain objects whose attributes are set the plain way (no ``__setattr__`` of their own): a copy
#: is given its ``__dict__`` whole (a ``dict.copy()``), at about half the cost of filling the new
#: object's own dict
_PLAIN_SET: set[type] = set()
#: of those, the ones without slots nor a ``__new__`` of their own: copied by the C kernel
_NATIVE_PLAIN: set[type] = set()
#: the types the C kernel shares unless the memo has a copy (pod sandbox messages): never copied
#: by it as plain objects, whenever the Python copier first met them
_KEEP: set[type] = set()


#: annotations of the fields of a frozen dataclass whose instances are shared (immutable values)
_SCALAR_HINTS = frozenset({str, int, float, bool, type(None)})


def _frozen_scalars(t: type) -> bool:
    """A frozen dataclass with slots (no ``__dict__`` for anything else) whose every field is annotated
    with immutable scalars (``str``, ``int``, ``float``, ``bool``, ``None`` and unions of them):
    its instances can not change, so copies share them (``CgroupLayout``, the runtime's
    ``Requirements``)."""
    params = getattr(t, "__dataclass_params__", None)
    if params is None or not params.frozen or "__dataclass_fields__" not in t.__dict__ or "__dict__" in dir(t):
        return False   # not frozen, or instances with a __dict__ (room for more than the fields)
    try:
        hints = typing.get_type_hints(t)
    except Exception:   # an annotation that does not resolve: not seen through, copied
        return False
    for f in dataclasses.fields(t):
        hint = hints.get(f.name)
        args = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        if not args or any(a not in _SCALAR_HINTS for a in args):
            return False
    return True


def _return_self(self: Any, memo: Any) -> Any:
    return self


def _returns_self(method: Any) -> bool:
    """A ``__deepcopy__(self, memo)`` whose body is ``return self`` (a docstring or comment aside):
    the same code as :func:`_return_self`'s (types fixed once set up: balloons' types, CPU tree
    allocators)."""
    code = getattr(method, "__code__", None)
    ref = _return_self.__code__
    return (code is not None and getattr(method, "__closure__", None) is None and code.co_argcount == 2
            and code.co_code == ref.co_code and code.co_varnames[:1] == ("self",)
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


def _classify(t: type) -> int:
    if issubclass(t, msgspec.Struct) and t.__struct_config__.frozen:
        return _ATOM   # the model's objects (pods, ...): frozen, built once from the input
    deep = getattr(t, "__deepcopy__", None)
    if deep is not None and _returns_self(deep):
        return _ATOM   # its copies are itself (as copy.deepcopy would return it): shared without a call
    if t.__module__ == "builtins" or any(b.__module__ == "builtins" and b is not object for b in t.__mro__):
        return _DEEPCOPY   # builtin types and their subclasses (enums of int, ...): deepcopy knows them
    if _frozen_scalars(t):
        return _ATOM
    if deep is not None:
        return _OWN_DEEPCOPY   # its own __deepcopy__, called as copy.deepcopy would (without its dispatch)
    if (getattr(t, "__deepcopy__", None) is not None or getattr(t, "__setstate__", None) is not None
            or getattr(t, "__reduce_ex__", None) is not _PLAIN_REDUCE
            or getattr(t, "__reduce__", None) is not object.__reduce__
            or getattr(t, "__getstate__", None) is not object.__getstate__):
        return _DEEPCOPY
    slots: list[str] = []
    for base in t.__mro__:
        own = base.__dict__.get("__slots__", ())
        for s in (own,) if isinstance(own, str) else own:
            if s not in ("__dict__", "__weakref__"):
                slots.append(s)
    _SLOTS[t] = tuple(slots)
    made = _slots_copier(t)
    if made is not None:
        _OWN_COPY[t] = made
        return _OWN
    if t.__setattr__ is object.__setattr__:
        _PLAIN_SET.add(t)
        if not _SLOTS[t] and t.__new__ is object.__new__:
            if t not in _KEEP:
                _NATIVE_PLAIN.add(t)
    return _OBJECT


def _slots_copier(t: type) -> Callable[[Any, dict[int, Any]], Any] | None:
    """A copier generated for a class with ``__slots__`` (and no ``__dict__``): each slot read
    and written by name (its own slot descriptor, no property of the same name) — what the generic path does through ``object.__getattribute__`` and
    ``object.__setattr__`` for every slot, unset slots left unset. Only for classes whose
    attribute access is the plain one (no ``__getattribute__``, ``__getattr__`` or
    ``__setattr__`` of their own) and whose slot names are plain identifiers."""
    slots = _SLOTS[t]
    if (not slots or "__dict__" in dir(t) or t.__getattribute__ is not object.__getattribute__
            or t.__setattr__ is not object.__setattr__ or hasattr(t, "__getattr__")
            or not all(n.isidentifier() and not n.startswith("__") and not keyword.iskeyword(n)
                       and type(inspect.getattr_static(t, n, None)) is types.MemberDescriptorType for n in slots)):
        return None
    lines = ["def copy(x, memo):", "    new = new_(T)", "    memo[id(x)] = new"]
    for n in slots:
        lines += ["    try:", f"        v = x.{n}", "    except AttributeError:", "        pass", "    else:",
                  f"        new.{n} = v if type(v) in atoms else (g if (g := memo.get(id(v))) is not None else c(v, memo))"]
    lines.append("    return new")
    env: dict[str, Any] = {"new_": object.__new__, "T": t, "atoms": _ATOMS, "c": _copy, "id": id}
    exec("\n".join(lines), env)   # noqa: S102  (code built from the class's own slot names)
    _ENVS.append(env)
    made: Callable[[Any, dict[int, Any]], Any] = env["copy"]
    _SLOTTED[t] = slots
    return made


#: tuples and frozensets met whose items are all shared (atoms, or such tuples and frozensets
#: themselves): they can never change, so every later copy shares them at once, without walking
#: their items again (``id -> object``: kept alive here, so an id never names another object)
_IMMUTABLE: dict[int, Any] = {}
#: at most this many kept (then forgotten, and found again as met)
IMMUTABLE_KEPT = 50_000


def _immutable(x: Any) -> None:
    """Remember ``x`` (a tuple or frozenset its copy shares) if each of its items is shared by
    every copy whatever the memo (an atom, or a tuple or frozenset remembered): not one shared
    only because this copy's memo maps an item to itself (the kubelet, the machine)."""
    if all(type(v) in _ATOMS or id(v) in _IMMUTABLE for v in x):
        if len(_IMMUTABLE) >= IMMUTABLE_KEPT:
            _IMMUTABLE.clear()
        _IMMUTABLE[id(x)] = x


#: the slot names of the classes with a generated copier (the C kernel's copy of them)
_SLOTTED: dict[type, tuple[str, ...]] = {}
#: the namespaces of the generated copiers (their ``c``: the copier of the values, rebound by :func:`use_native`)
_ENVS: list[dict[str, Any]] = []


def copy_state(obj: Any, memo: dict[int, Any]) -> Any:
    """A deep copy of ``obj`` (``memo``: ``id(original) -> copy``, as ``copy.deepcopy`` takes it;
    objects already in it are used as they are)."""
    return _copy(obj, memo)


def copy_detached(obj: Any, memo: dict[int, Any], base: dict[int, Any] | None = None, resizable: bool = True) -> Any:
    """:func:`copy_state` with the memo ``base`` updated with ``memo``, for a caller that throws the
    memo away after: the C kernel reads ``memo`` but fills it only for the Python copiers it calls
    (with what they read: the base's entries and the copies made so far), and keeps its own table
    of ``base`` (a dict given again and again unchanged: the objects every copy of a started node
    shares) from one call to the next (:data:`DETACHED`; else, and with the Python copier, a dict
    of both filled as ever). ``resizable`` False: neither ``obj`` nor its copy is ever resized in
    place, so their containers' memory parts and unified entries are shared
    (:data:`SHARE_UNRESIZED`)."""
    if not resizable and SHARE_UNRESIZED:
        return _copy_unresized(obj, memo, base)
    if base is None:
        return _copy_detached(obj, memo)
    if _copy_detached is not _copy:
        return _copy_detached(obj, memo, base)   # type: ignore[call-arg]
    merged = dict(base)
    merged.update(memo)
    return _copy(obj, merged)


def _copy_unresized(obj: Any, memo: dict[int, Any], base: dict[int, Any] | None) -> Any:
    """:func:`copy_detached` of a node never resized (:data:`SHARE_UNRESIZED`): the kernel given the
    shapes that share a container's memory part and unified entries, the Python copier told so."""
    global _UNRESIZED
    before = _UNRESIZED
    _UNRESIZED = True
    try:
        if _copy is not _py_copy:
            from .._kernel import _graphcopy

            if DETACHED:
                return _graphcopy.copy_detached(obj, memo, base, _SHAPES_UNRESIZED)
            merged = {**base, **memo} if base is not None else memo
            return _graphcopy.copy_detached(obj, merged, None, _SHAPES_UNRESIZED)
        return _copy(obj, {**base, **memo} if base is not None else memo)
    finally:
        _UNRESIZED = before


def _py_copy(x: Any, memo: dict[int, Any]) -> Any:
    """The copy of ``x`` in Python (the C kernel's twin, and its fallback for every kind but dicts,
    lists and plain objects)."""
    t = type(x)
    kind = _KIND.get(t)
    if kind is None:
        kind = _KIND[t] = _classify(t)
        if kind == _ATOM:
            _ATOMS.add(t)
    if kind == _ATOM:
        return x
    i = id(x)
    got = memo.get(i, memo)
    if got is not memo:
        return got
    c: Callable[[Any, dict[int, Any]], Any] = _copy
    atoms = _ATOMS
    if kind == _DICT:
        d: dict[Any, Any] = x.copy()   # atoms as they are; the rest replaced below
        memo[i] = d
        for k, v in x.items():
            if type(k) not in atoms:
                return _dict_keys(x, d, memo)
            tv = type(v)
            if tv not in atoms:
                got = memo.get(id(v))   # met already (a back reference): no call
                if got is None:
                    if not v and (tv is dict or tv is list):   # empty: made here, no call
                        got = memo[id(v)] = tv()
                    else:
                        got = c(v, memo)
                d[k] = got
        return d
    if kind == _LIST:
        lst: list[Any] = []
        memo[i] = lst
        lst.extend([v if type(v) in atoms else (g if (g := memo.get(id(v))) is not None else c(v, memo))
                    for v in x])
        return lst
    if kind == _OBJECT:
        new = object.__new__(t)
        memo[i] = new
        state = getattr(x, "__dict__", None)
        if state is not None:
            nd = state.copy()   # atoms as they are; the rest replaced below
            if t in _PLAIN_SET:
                new.__dict__ = nd   # a dict of its own given whole: faster than filling the new one
            else:
                new.__dict__.update(nd)
                nd = new.__dict__
            for k, v in state.items():
                tv = type(v)
                if tv not in atoms:
                    got = memo.get(id(v))
                    if got is None:
                        if not v and (tv is dict or tv is list):
                            got = memo[id(v)] = tv()
                        else:
                            got = c(v, memo)
                    nd[k] = got
        for s in _SLOTS[t]:
            try:
                v = object.__getattribute__(x, s)
            except AttributeError:
                continue
            object.__setattr__(new, s, v if type(v) in atoms else c(v, memo))
        return new
    if kind == _OWN:
        return _OWN_COPY[t](x, memo)
    if kind == _TUPLE:
        if i in _IMMUTABLE:
            return x
        items = [v if type(v) in atoms else c(v, memo) for v in x]
        got = memo.get(i, memo)   # a cycle through the tuple was copied meanwhile
        if got is not memo:
            return got
        if all(a is b for a, b in zip(items, x)):
            _immutable(x)
            out = x
        else:
            out = tuple(items)
        memo[i] = out
        return out
    if kind == _SET:
        st: set[Any] = set()
        memo[i] = st
        st.update([v if type(v) in atoms else c(v, memo) for v in x])
        return st
    if kind == _OWN_DEEPCOPY:
        y = x.__deepcopy__(memo)
        if y is not x:
            memo[i] = y
        return y
    if kind == _FROZENSET:
        if i in _IMMUTABLE:
            return x
        fitems = [v if type(v) in atoms else c(v, memo) for v in x]
        if all(a is b for a, b in zip(fitems, x)):
            _immutable(x)
            fout = x
        else:
            fout = frozenset(fitems)
        memo[i] = fout
        return fout
    return copy.deepcopy(x, memo)


def _dict_keys(x: dict[Any, Any], d: dict[Any, Any], memo: dict[int, Any]) -> dict[Any, Any]:
    """A dict with keys that are not atoms: ``d`` (already in the memo) filled again with a copy
    of every key and value, in ``x``'s order."""
    d.clear()
    atoms = _ATOMS
    for k, v in x.items():
        d[k if type(k) in atoms else _copy(k, memo)] = v if type(v) in atoms else _copy(v, memo)
    return d


def read_only_parts(rn: Any) -> list[Any]:
    """What a started runtime node never writes again, besides what every fork shares already
    (machine, sysfs view, policy resource): its copies share them too. The policy's
    configuration (read by the policies, never written), the resource manager's RDT and block
    I/O control (read), and topology-aware's CPU allocator (``NewCPUAllocator``: its topology
    cache is built with it, its answers read nothing else)."""
    rm = getattr(rn, "resmgr", None)
    if rm is None:
        return []
    out = [rm.rdt, rm.blockio]
    policy = rm.policy
    resource = getattr(rn, "policy_resource", None)
    if resource is not None and getattr(policy, "cfg", None) is resource.config:
        out.append(resource.config)
    from ..runtime.cpuallocator import CPUAllocator

    alloc = getattr(policy, "cpu_allocator", None)
    if type(alloc) is CPUAllocator:
        out.append(alloc)
    out.extend(_memory_topology(policy))
    if SHARE_UNWRITTEN:
        out.extend(_empty_lists(rn))
        out.extend(_balloon_types(policy))
    return out


def _balloon_types(policy: Any) -> list[Any]:
    """balloons' list of balloon types (``BalloonsPolicy.defs``): filled at start
    (``fillBuiltinBalloonDefs``), only read after; its types are shared already
    (``BalloonDef.__deepcopy__``). Shared, the copies of a node hold one list, so what is kept per
    list (:func:`.runtime_fig_balloons._type_positions`) is kept once per table, not per copy."""
    from ..runtime.policies.balloons.policy import BalloonsPolicy

    return [policy.defs] if isinstance(policy, BalloonsPolicy) and type(policy.defs) is list else []


def _empty_lists(rn: Any) -> list[Any]:
    """Empty lists of a started node that nothing fills later: the plugins subscribed to an event
    nobody subscribed to (:attr:`..runtime.nri.adaptation.Adaptation.subscribed`, a new dict of new
    lists at each registration, only read after) and the children of topology-aware's leaf pools
    (``Node.children``: filled as the pool tree is built at start-up, only read after)."""
    from ..runtime.nri.adaptation import Adaptation
    from ..runtime.policies.topologyaware.node import Node

    out: list[Any] = []
    ad = getattr(rn, "adaptation", None)
    if type(ad) is Adaptation:
        out += [lst for lst in ad.subscribed.values() if type(lst) is list and not lst]
    rm = getattr(rn, "resmgr", None)
    for pool in getattr(rm.policy, "pools", None) or () if rm is not None else ():
        if type(pool) is Node and type(pool.children) is list and not pool.children:
            out.append(pool.children)
    return out


def _memory_topology(policy: Any) -> list[Any]:
    """The memory topology a policy's libmem allocator (``pkg/resmgr/lib/memory``) builds when it
    starts and only reads after: its nodes (``MemNode``: distances, the nodes at each distance)
    and the nodes of each memory type; and topology-aware's memory supply of each pool (its
    DRAM, PMEM and HBM nodes, read by ``memset`` / ``memory_type`` into new sets). The zones,
    requests and users the allocator keeps are written, and copied."""
    from ..runtime.libmem import Allocator, MemNode

    out: list[Any] = []
    mem = getattr(policy, "mem_allocator", None)
    if type(mem) is Allocator and all(type(n) is MemNode for n in mem.nodes.values()):
        out += [mem.nodes, mem.by_types, *mem.nodes.values()]
    from ..runtime.policies.topologyaware.node import Node

    for pool in getattr(policy, "pools", None) or ():
        if type(pool) is Node:
            out += [pool.mem, pool.pmem, pool.hbm]
    return out


# --- pod and container messages kept by the runtime and the resource manager ----------------------
_new = object.__new__

#: share with the original what neither it nor its copy ever writes again (False: copied, as
#: before; :func:`share_unwritten`). A container's ``hugepage_limits`` and ``devices`` lists are
#: written in place only while the container is created (the merge of the plugins' adjustments,
#: :meth:`..runtime.nri.result.Result._merge_resources` with ``creating``, and
#: :func:`..runtime.nri.fastmerge.apply_adjustment`, both on the container being created); after
#: that an update replaces the hugepage limits with a new list
#: (:func:`..runtime.nri.adaptation.apply_update` and its fast twin) and never touches the devices;
#: nothing writes a device rule's fields. A cached container's ``tags`` and ``topology_hints``
#: (``pkg/resmgr/cache``) are made empty with it and never written (only read). The started
#: node's plugin lists per event, topology-aware's leaf pools' child lists and balloons' list of
#: balloon types are shared through :func:`read_only_parts`.
SHARE_UNWRITTEN = True
#: share a container's memory part (``LinuxMemory``) and ``unified`` entries between a node and its
#: copy when neither is ever resized in place (``copy_detached(..., resizable=False)``: the table's
#: nodes, :func:`.runtime_policies.clone_runtime_node`; fourteenth session; False: copied, as
#: before, :func:`share_unresized`). Once a container is created, both are written in place only by
#: an in-place resize: the resource manager's ``set_memory_limit`` / ``set_memory_swap`` (on the
#: cached message, called only by ``ResourceManager.update_container``, the NRI ``UpdateContainer``
#: of a resize) and the runtime's ``apply_update`` of the resized container's own request
#: (``RuntimeNode.update_container_resources``). The updates a creation or a deletion sends to the
#: other containers carry the policies' CPU fields only (the cache's setters ``set_cpu_*`` /
#: ``set_cpuset_*``: their memory part is an empty ``LinuxMemory``, nothing ``apply_update`` or
#: its fast twin writes from; no policy adds unified entries to an update, ``dst.unified.update``
#: of an empty dict writes nothing); the merge of the plugins' adjustments writes only the
#: container being created (new objects, never shared); ``ensure_memory`` on a container without
#: a memory part sets a new one on its resources (copied). The table's nodes see creations and
#: deletions only (a resize never reaches a runtime node in ``simulate``)
SHARE_UNRESIZED = True
#: the Python copier's twin of the kernel's shapes for unresized nodes: set during such a copy
_UNRESIZED = False
#: the attributes of a cached container never written after its creation
_CACHED_UNWRITTEN = frozenset({"tags", "topology_hints"})
#: the fields of a container's ``LinuxResources`` never written in place after its creation
_RESOURCES_UNWRITTEN = frozenset({"hugepage_limits", "devices"})


def _shallow(x: Any, memo: dict[int, Any]) -> Any:
    new = _new(type(x))
    memo[id(x)] = new
    new.__dict__ = x.__dict__.copy()
    return new


def _container_message(ctr: Any, memo: dict[int, Any]) -> Any:
    """A container message of which only ``state`` and ``linux.resources`` may change: a new
    message and ``linux`` around a copy of the resources, every other field shared."""
    got = memo.get(id(ctr))
    if got is not None:
        return got
    new = _new(type(ctr))
    memo[id(ctr)] = new
    new.__dict__ = ctr.__dict__.copy()
    linux = ctr.linux
    if linux is not None:
        lx = memo.get(id(linux))
        if lx is None:
            lx = _new(type(linux))
            memo[id(linux)] = lx
            lx.__dict__ = linux.__dict__.copy()
            lx.resources = _resources(linux.resources, memo)
        new.linux = lx
    return new


def _resources(res: Any, memo: dict[int, Any]) -> Any:
    """A container's ``LinuxResources``: a new message whose memory and CPU parts are new
    messages with the same values (their fields are scalars), its hugepage limits, unified
    entries and devices copied; the same graph :func:`_copy` gives, with fewer steps."""
    got = memo.get(id(res))
    if got is not None:
        return got
    if type(res) is not _LinuxResources:
        return _copy(res, memo)
    new = _new(_LinuxResources)
    memo[id(res)] = new
    nd = new.__dict__ = res.__dict__.copy()
    memory, cpu = res.memory, res.cpu
    if _UNRESIZED and memory is not None:   # never written in place on an unresized node: shared
        nd["memory"] = memo.get(id(memory), memory)
    elif memory is not None:
        part = memo.get(id(memory))
        if part is None:
            if type(memory) is _LinuxMemory:
                part = memo[id(memory)] = _new(_LinuxMemory)
                part.__dict__ = memory.__dict__.copy()
            else:
                part = _copy(memory, memo)
        nd["memory"] = part
    if cpu is not None:
        part = memo.get(id(cpu))
        if part is None:
            if type(cpu) is _LinuxCPU:
                part = memo[id(cpu)] = _new(_LinuxCPU)
                part.__dict__ = cpu.__dict__.copy()
            else:
                part = _copy(cpu, memo)
        nd["cpu"] = part
    if SHARE_UNWRITTEN:   # never written in place once the container is created: shared
        limits, devices = res.hugepage_limits, res.devices
        nd["hugepage_limits"] = limits if type(limits) in _ATOMS else memo.get(id(limits), limits)
        nd["devices"] = devices if type(devices) in _ATOMS else memo.get(id(devices), devices)
    else:
        nd["hugepage_limits"] = _flat(res.hugepage_limits, memo)
        nd["devices"] = _flat(res.devices, memo)
    unified = res.unified
    nd["unified"] = (memo.get(id(unified), unified) if _UNRESIZED and type(unified) not in _ATOMS
                     else _flat(unified, memo))
    if res.pids is not None:
        nd["pids"] = _copy(res.pids, memo)
    return new


def _flat(x: Any, memo: dict[int, Any]) -> Any:
    """A list or dict (a container's hugepage limits, devices, unified entries): copied at once
    when every item is an atom (the usual case), else by :func:`_copy`."""
    got = memo.get(id(x))
    if got is not None:
        return got
    t = type(x)
    atoms = _ATOMS
    if t is list:
        for v in x:
            if type(v) not in atoms:
                return _copy(x, memo)
    elif t is dict:
        for k, v in x.items():
            if type(k) not in atoms or type(v) not in atoms:
                return _copy(x, memo)
    else:
        return _copy(x, memo)
    got = memo[id(x)] = x.copy()
    return got


def _sandbox_message(sandbox: Any, memo: dict[int, Any]) -> Any:
    """A pod sandbox message never changes once it is sent: shared (or the copy made already
    where the graph met it first)."""
    return memo.get(id(sandbox), sandbox)


def _pod_record(x: Any, memo: dict[int, Any]) -> Any:
    new = _shallow(x, memo)
    new.sandbox = _sandbox_message(x.sandbox, memo)
    new.containers = [_container_record(r, memo) for r in x.containers]
    return new


def _container_record(x: Any, memo: dict[int, Any]) -> Any:
    got = memo.get(id(x))
    if got is not None:
        return got
    new = _shallow(x, memo)   # its adjustment, replies, CRI resources and owners are replaced, never changed
    new.ctr = _container_message(x.ctr, memo)
    return new


def _with_message(field: str, message: Callable[[Any, dict[int, Any]], Any], unwritten: frozenset[str] = frozenset()
                  ) -> Callable[[Any, dict[int, Any]], Any]:
    """A resource-manager cache object: every attribute copied, its message as above, those named
    ``unwritten`` shared (:data:`SHARE_UNWRITTEN`)."""
    def copy_one(x: Any, memo: dict[int, Any]) -> Any:
        new = object.__new__(type(x))
        memo[id(x)] = new
        nd = new.__dict__ = x.__dict__.copy()   # atoms as they are; the rest replaced below
        atoms = _ATOMS
        share = unwritten if SHARE_UNWRITTEN else frozenset()
        for k, v in x.__dict__.items():
            if k == field:
                nd[k] = message(v, memo)
            elif k in share:
                if type(v) not in atoms:
                    nd[k] = memo.get(id(v), v)
            elif (tv := type(v)) not in atoms:
                got = memo.get(id(v))
                if got is None:
                    if not v and (tv is dict or tv is list):   # its tags, hints, affinities: mostly empty
                        got = memo[id(v)] = tv()
                    else:
                        got = _copy(v, memo)
                nd[k] = got
        return new
    return copy_one


def _own_copies() -> dict[type, Callable[[Any, dict[int, Any]], Any]]:
    from ..runtime.node import ContainerRecord, PodRecord
    from ..runtime.resmgr.cache import CachedContainer
    from ..runtime.resmgr.cache import Pod as CachedPod

    return {PodRecord: _pod_record, ContainerRecord: _container_record,
            CachedContainer: _with_message("ctr", _container_message, _CACHED_UNWRITTEN),
            CachedPod: _with_message("sandbox", _sandbox_message)}


from ..runtime.nri.api import LinuxCPU as _LinuxCPU  # noqa: E402  (after the generic copy it builds on)
from ..runtime.nri.api import LinuxMemory as _LinuxMemory  # noqa: E402
from ..runtime.nri.api import LinuxResources as _LinuxResources  # noqa: E402

#: types copied by a function of their own (the records and messages above)
_OWN_COPY = _own_copies()
_KIND.update(dict.fromkeys(_OWN_COPY, _OWN))
_ATOMS.difference_update(_OWN_COPY)


def _never_written() -> tuple[type, ...]:
    """Message types whose instances nothing writes once made, shared by copies: a container's
    ``HugepageLimit`` entries (the kubelet's CRI resources, a plugin's adjustment or update) are
    put in or taken out of ``linux.resources.hugepage_limits`` as a whole
    (:func:`..runtime.nri.adaptation.apply_update` builds a new list), never changed in place."""
    from ..runtime.nri.api import HugepageLimit

    return (HugepageLimit,)


_KIND.update(dict.fromkeys(_never_written(), _ATOM))
_ATOMS.update(_never_written())


# --- the C kernel -----------------------------------------------------------------------------------
#: copy dicts, lists and plain objects with the C kernel ``kubetwin._kernel._graphcopy`` where it was
#: built (the same graph as :func:`_py_copy`, its twin; ``KUBETWIN_PURE_PYTHON`` set, or False:
#: Python only)
NATIVE = True


#: the interface of ``_graphcopy`` this module speaks (its ``INTERFACE``; bumped with every change
#: of what ``configure`` and the copies take)
GRAPHCOPY_INTERFACE = 5


def _load_native() -> Callable[[Any, dict[int, Any]], Any] | None:
    import os

    if os.environ.get("KUBETWIN_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from .._kernel import _graphcopy
    except ImportError:
        return None
    from .._kernel import current

    if not current(_graphcopy, GRAPHCOPY_INTERFACE):
        return None
    _graphcopy.configure(_ATOMS, _NATIVE_PLAIN, _OWN_COPY, _IMMUTABLE, _py_copy, *_native_shapes(), _SLOTTED,
                         _immutable)
    made: Callable[[Any, dict[int, Any]], Any] = _graphcopy.copy
    return made


def _native_shapes() -> tuple[set[type], dict[type, tuple[bool, frozenset[str]]]]:
    """What the C kernel does for the records and messages the Python copiers above copy (the
    same graph): pod sandbox messages are shared (:func:`_sandbox_message`: or the memo's copy,
    as the kernel reads a pod record's ``sandbox``, a name of its shape); a pod record, a
    container record, a container message and its ``linux`` are new objects sharing every
    attribute but the one named (:func:`_pod_record`, :func:`_container_record`,
    :func:`_container_message`); a container's resources are copied as a plain object, their
    memory and CPU parts are new objects with the same values (:func:`_resources`); the
    resource manager's cached containers and pods as plain objects (:func:`_with_message`)."""
    from ..runtime.node import ContainerRecord, PodRecord
    from ..runtime.nri.api import Container, LinuxContainer, PodSandbox
    from ..runtime.resmgr.cache import CachedContainer
    from ..runtime.resmgr.cache import Pod as CachedPod

    nothing: frozenset[str] = frozenset()
    shapes = {PodRecord: (True, frozenset({"containers", "sandbox"})), ContainerRecord: (True, frozenset({"ctr"})),
              Container: (True, frozenset({"linux"})), LinuxContainer: (True, frozenset({"resources"})),
              _LinuxResources: (False, nothing), _LinuxMemory: (True, nothing), _LinuxCPU: (True, nothing),
              CachedContainer: (False, nothing), CachedPod: (False, nothing)}
    _SHAPES.clear()
    _SHAPES.update(shapes)
    _shape_unwritten()
    _KEEP.add(PodSandbox)
    _NATIVE_PLAIN.difference_update(_KEEP)
    return _KEEP, _SHAPES


#: the C kernel's shapes (given to it once; :func:`share_unwritten` changes them in place)
_SHAPES: dict[type, tuple[bool, frozenset[str]]] = {}


#: the kernel's shapes for a copy of an unresized node (:data:`SHARE_UNRESIZED`): :data:`_SHAPES` with a
#: container's resources sharing their memory part and unified entries too
_SHAPES_UNRESIZED: dict[type, tuple[bool, frozenset[str]]] = {}
#: the fields of a container's ``LinuxResources`` an unresized node never writes in place
_RESOURCES_UNRESIZED = frozenset({"memory", "unified"})


def _shape_unwritten() -> None:
    """The kernel's shapes of a container's resources and of a cached container: what
    :data:`SHARE_UNWRITTEN` shares, shared (or, off, nothing shared); and those of unresized nodes."""
    from ..runtime.resmgr.cache import CachedContainer

    on = SHARE_UNWRITTEN
    _SHAPES[_LinuxResources] = (False, _RESOURCES_UNWRITTEN if on else frozenset())
    _SHAPES[CachedContainer] = (False, _CACHED_UNWRITTEN if on else frozenset())
    _SHAPES_UNRESIZED.clear()
    _SHAPES_UNRESIZED.update(_SHAPES)
    _SHAPES_UNRESIZED[_LinuxResources] = (False, _SHAPES[_LinuxResources][1] | _RESOURCES_UNRESIZED)


def share_unresized(on: bool) -> None:
    """:data:`SHARE_UNRESIZED` on or off (A/B runs, ``bench_runtime_sim.py --plain``)."""
    global SHARE_UNRESIZED
    SHARE_UNRESIZED = on


def share_unwritten(on: bool) -> None:
    """Share what is never written again (``on``, :data:`SHARE_UNWRITTEN`) or copy it, in both
    copiers (set before the run: the started nodes kept by :mod:`.runtime_policies` keep what
    they share)."""
    global SHARE_UNWRITTEN
    SHARE_UNWRITTEN = on
    _shape_unwritten()


_NATIVE_COPY = _load_native()
_copy: Callable[[Any, dict[int, Any]], Any] = _py_copy
_copy_detached: Callable[[Any, dict[int, Any]], Any] = _py_copy

#: :func:`copy_detached` leaves the memo unfilled under the C kernel (False: :func:`copy_state`).
#: The kernel keeps what it copies in a table keyed by address and writes it to the memo only
#: for a Python copier and at the end of :func:`copy_state`: an int object and a dict insertion
#: per object copied, and their release with the memo, are what this saves
DETACHED = True


def _detached() -> Callable[[Any, dict[int, Any]], Any]:
    if _copy is not _py_copy and DETACHED:
        from .._kernel import _graphcopy

        made: Callable[[Any, dict[int, Any]], Any] = _graphcopy.copy_detached
        return made
    return _copy


def use_native(on: bool) -> bool:
    """Copy with the C kernel (``on``, where it was built) or in Python only; True when the C
    kernel copies now."""
    global _copy, _copy_detached, NATIVE
    NATIVE = on
    _copy = _NATIVE_COPY if on and _NATIVE_COPY is not None else _py_copy
    _copy_detached = _detached()
    for env in _ENVS:
        env["c"] = _copy
    return _copy is not _py_copy


def use_detached(on: bool) -> None:
    """:data:`DETACHED` on or off (A/B runs)."""
    global DETACHED, _copy_detached
    DETACHED = on
    _copy_detached = _detached()


#: the C kernel allocates the plain objects it copies bare (fourteenth session): CPython 3.11's
#: ``object.__new__`` gives an instance of a class with a managed ``__dict__`` an array of inline
#: attribute values, which giving it its own ``__dict__`` (what every copy does at once) turns into
#: a dict and frees again — two allocations and two frees per object copied for nothing; the kernel
#: takes the type's ``tp_alloc`` instead (the same object, no values yet; 3.11 only, other versions
#: as ``object.__new__``). False: as ``object.__new__`` (A/B runs, ``bench_runtime_sim.py --plain``)
BARE_NEW = True


def use_bare_new(on: bool) -> bool:
    """:data:`BARE_NEW` on or off; True when the kernel now allocates bare."""
    global BARE_NEW
    BARE_NEW = on
    if _NATIVE_COPY is None:
        return False
    from .._kernel import _graphcopy

    return bool(_graphcopy.set_bare(on)) and on


#: the C kernel copies a slotted object's slots at their offsets (fourteenth session: the member
#: descriptor's own reading and writing, without an attribute lookup by name per slot; libmem's
#: requests and zones, the pools' supplies); slots that are not plain object slots of their class
#: are read and written by name as before. False: by name (A/B runs, ``bench_runtime_sim.py --plain``)
DIRECT_SLOTS = True


def use_direct_slots(on: bool) -> None:
    """:data:`DIRECT_SLOTS` on or off."""
    global DIRECT_SLOTS
    DIRECT_SLOTS = on
    if _NATIVE_COPY is not None:
        from .._kernel import _graphcopy

        _graphcopy.set_direct(on)


use_native(NATIVE)
use_bare_new(BARE_NEW)
use_direct_slots(DIRECT_SLOTS)
