"""A fast path for one pod's creation on an untraced node whose lone NRI plugin is the resource manager.

:meth:`.node.RuntimeNode.start_pod` relays every step of a creation through the NRI adaptation
(:mod:`.nri.adaptation`): ``RunPodSandbox``, then per container ``CreateContainer`` (the
container prepared, the plugin's copy, its reply checked and merged), ``PostCreateContainer``,
``StartContainer``, ``PostStartContainer`` — each a lookup of the subscribed plugins, a trace
decision, a per-plugin loop, argument tuples and copies decided per event. On the nodes
``simulate`` runs (untraced, no active trace, the kubelet's CRI resources given once per pod
shape) the only plugin is the resource manager (:class:`.resmgr.manager.ResourceManager`), and
what each event does is known before the pod comes:

* ``RunPodSandbox`` and ``StartContainer``: the resource manager alone, with the runtime's own
  messages (it declares both read-only for them): called directly, its errors handled as the
  adaptation handles them (``RunPodSandbox`` fails the pod, ``StartContainer``'s are dropped);
* ``PostCreateContainer`` / ``PostStartContainer``: nobody subscribed, nothing to relay (the
  runtime's ``CONTAINER_CREATED`` state is seen by no one before it becomes ``CONTAINER_RUNNING``);
* ``CreateContainer``: the container built as the adaptation prepares it (empty hooks, ``linux``
  and its resources present) with the resource manager's resources-only copy beside it
  (:func:`.fastcreate.prepared`), the reply of a plain shape written as :mod:`.nri.fastmerge`
  writes it — any other reply through the plain merge (:class:`.nri.result.Result`), with its
  owners and errors, as :meth:`.nri.adaptation.Adaptation.create_container_updates` does. The
  runtime's records are lent to the resource manager for the call
  (:meth:`.resmgr.manager.ResourceManager.create_container_held`): its reply is applied as it is
  or merged alone, so the cache skips a re-pinning value the runtime holds already
  (:data:`.resmgr.cache.SAME_SKIPPED`).

The records, the rejections, the undo of a failed creation and the updates of other containers
are the runtime's own (:class:`.node.RuntimeNode`). Any other node — traced, another plugin
registered or subscribed to a post-event, the resource manager subclassed or declaring other
events read-only, one of the fast paths it builds on switched off — takes the plain path.

:data:`ENABLED` off: :meth:`.node.RuntimeNode.start_pod`'s plain relay (equivalence tests,
``--plain`` benchmark runs).

Not an upstream module: a kubetwin fast path for containerd ``internal/cri``'s NRI hooks and
containerd/nri v0.12.2 ``pkg/adaptation`` as :mod:`.node` models them, with nri-plugins v0.14.0
``pkg/resmgr`` as the lone plugin.
"""

from __future__ import annotations

from hashlib import sha256
from typing import TYPE_CHECKING, Any

from .. import tracing as _tracing
from ..model.pod import Pod, is_sidecar
from . import fastcreate
from .nri import fastmerge, message_copy
from .nri.adaptation import PluginError, Registered, _call, _create_reply
from .nri.api import Container, ContainerAdjustment, ContainerUpdate, PodSandbox
from .nri.owners import ConflictError
from .nri.result import RequestError, Result
from .resmgr.manager import ResourceManager

if TYPE_CHECKING:
    from .node import Rejection, RuntimeNode

#: create a pod with the resource manager called directly (False: the adaptation's relay)
ENABLED = True

#: the runtime's record of a container created here holds one shared empty adjustment, list of
#: replies and map of owners: only a traced node fills them, and it replaces them, never writes
#: them in place (:meth:`.node.RuntimeNode.start_pod`, ``update_container_resources``; node copies
#: share them already, :mod:`..sim.runtime_copy`). Three objects fewer made and kept per container
#: (False: its own empty ones, as before)
SHARED_EMPTIES = True
_NO_ADJUSTMENT: dict[str, Any] = {}
_NO_REPLIES: list[dict[str, Any]] = []
_NO_OWNERS: dict[str, Any] = {}


def lone_plugin(node: RuntimeNode) -> Registered | None:
    """The resource manager's registration when it is the node's lone plugin for a creation's
    events and this fast path applies (see the module's docstring); None otherwise. The answer
    for the adaptation's registrations is kept with it (:attr:`.nri.adaptation.Adaptation.lone`)."""
    if (node.traced or _tracing.ACTIVE is not None or not fastcreate.ENABLED or not fastmerge.ENABLED
            or not message_copy.SHARED_CONTAINER):
        return None
    ad = node.adaptation
    kept = ad.lone
    if kept is not None and kept[0] is ad.subscribed:
        return kept[1]
    r = _lone(ad.subscribed)
    ad.lone = (ad.subscribed, r)
    return r


def _lone(sub: dict[str, list[Registered]]) -> Registered | None:
    got = sub.get("CREATE_CONTAINER")
    if not got or len(got) != 1:
        return None
    r = got[0]
    if type(r.plugin) is not ResourceManager or sub.get("POST_CREATE_CONTAINER") or sub.get("POST_START_CONTAINER"):
        return None
    for event in ("RUN_POD_SANDBOX", "START_CONTAINER"):
        got = sub.get(event)
        if not got or len(got) != 1 or got[0] is not r:
            return None
    if ("CREATE_CONTAINER" not in r.readonly_pod or "CREATE_CONTAINER" not in r.resources_only
            or "RUN_POD_SANDBOX" not in r.readonly_pod or "START_CONTAINER" not in r.readonly):
        return None
    return r


def start_pod(node: RuntimeNode, r: Registered, pod: Pod, cri: Any) -> Rejection | None:
    """:meth:`.node.RuntimeNode.start_pod` with the kubelet's CRI resources ``cri`` given and
    ``r`` (:func:`lone_plugin`) the only plugin: the same records, messages, cache and answer."""
    ContainerRecord, PodRecord = _NODE or _node()
    rm: ResourceManager = r.plugin   # type: ignore[assignment]
    sandbox = fastcreate.sandbox(node, pod, cri[0][1]) if cri else node._sandbox(pod)
    rec = PodRecord(pod, sandbox, [])
    try:
        _call(rm.run_pod_sandbox, sandbox)
    except PluginError as exc:
        node.kubelet.remove(pod)
        return node._reject(pod, "CreatePodSandboxError", f"NRI RunPodSandbox failed: {exc}")
    node.pods[pod.key] = rec
    uid = sandbox.uid
    for j, (c, init) in enumerate(pod.all_containers()):
        kind = ("sidecar" if is_sidecar(c) else "init") if init else "app"
        resources, qos = cri[j]
        cname = c.name
        cid = sha256(f"container\x00{uid}\x00{cname}".encode()).hexdigest()   # as node._hex_id makes it
        ctr, mine = fastcreate.prepared(sandbox, cname, cid, resources)
        if SHARED_EMPTIES:
            record = ContainerRecord(cname, kind, ctr, "created", _NO_ADJUSTMENT, _NO_REPLIES, resources, qos, _NO_OWNERS)
        else:
            record = ContainerRecord(cname, kind, ctr, "created", {}, [], resources, qos, {})
        try:
            updates = _create(r, rm, sandbox, ctr, mine, _records(node))
        except PluginError as exc:
            node._undo_create(sandbox, ctr)
            node._teardown(rec)
            return node._reject(pod, "CreateContainerError", str(exc))
        rec.containers.append(record)
        node.index(record)
        if updates:
            node._apply_updates(updates)
        # CONTAINER_CREATED, then PostCreateContainer to nobody: running at once
        ctr.state = "CONTAINER_RUNNING"
        record.state = "running"
        try:
            _call(rm.start_container, sandbox, ctr)
        except PluginError:
            pass   # a failed StartContainer notification is only logged
        if kind == "init":
            node._stop(rec, record)
    return None


_NODE: tuple[Any, Any] | None = None


def _node() -> tuple[Any, Any]:
    """:mod:`.node`'s records (read once: :mod:`.node` imports this module)."""
    global _NODE
    from .node import ContainerRecord, PodRecord

    _NODE = (ContainerRecord, PodRecord)
    return _NODE


def _reply(reply: Any, name: str) -> tuple[ContainerAdjustment | None, list[ContainerUpdate]]:
    """:func:`.nri.adaptation._create_reply` without the evictions (not acted on, as in
    :meth:`.nri.adaptation.Adaptation.create_container_updates`): the resource manager's own
    shape, an adjustment and a list of updates, taken as it is (the list not copied: nobody else
    keeps it); any other through the adaptation's checks."""
    if type(reply) is tuple and len(reply) == 2:
        adjust, updates = reply
        if type(updates) is list and (adjust is None or type(adjust) is ContainerAdjustment):
            for u in updates:
                if type(u) is not ContainerUpdate:
                    break
            else:
                return adjust, updates
    adjust, updates, _ = _create_reply(reply, name)
    return adjust, updates


def _records(node: RuntimeNode) -> dict[str, Any]:
    """The runtime's records by container id as :meth:`.node.RuntimeNode._apply_updates` finds
    them (:attr:`.node.RuntimeNode.by_container`, rebuilt here when a pod left: the same table)."""
    records = node.by_container
    if records is None:
        records = node.by_container = {c.ctr.id: c for p in node.pods.values() for c in p.containers}
    return records


def _create(r: Registered, rm: ResourceManager, pod: PodSandbox, ctr: Container, mine: Container,
            records: dict[str, Any]) -> list[ContainerUpdate]:
    """:meth:`.nri.adaptation.Adaptation.create_container_updates` for the lone resource manager,
    ``ctr`` prepared and ``mine`` its copy: the container adjusted, the other containers' updates.
    The runtime's ``records`` are lent to the resource manager
    (:meth:`.resmgr.manager.ResourceManager.create_container_held`): its reply is applied as it is
    or merged alone, so an update of values the runtime holds already changes nothing."""
    try:
        reply = _call(rm.create_container_held, pod, mine, records)
        adjust, updates = _reply(reply, r.name)
        if fastmerge.plain_adjustment(adjust) and (not updates or fastmerge.passable_updates(updates, ctr.id)):
            if adjust is not None:
                fastmerge.apply_adjustment(ctr, adjust)
            return updates
        fastcreate.unshare(ctr)   # the merge writes parts of it in place
        result = Result(create=ctr)
        result.apply_create(adjust, updates, r.name)
    except (PluginError, RequestError, ConflictError) as exc:
        raise PluginError(str(exc)) from None
    return result.reply_updates
