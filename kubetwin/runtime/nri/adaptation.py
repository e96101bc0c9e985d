"""The runtime side of NRI: registered plugins, called in index order, their replies merged.

:class:`Adaptation` is what containerd (or CRI-O) embeds: it registers plugins (two-digit
index, name; a plugin subscribing to events outside ``ValidEvents`` is refused), relays each
pod and container lifecycle event to the plugins subscribed to it in ascending index order,
merges their replies with NRI's conflict rule (:mod:`.result`) and hands the runtime one
adjustment and the updates of other containers to apply. Evictions in replies are not acted
on (v0.12.2's ``result.apply`` drops them); they are kept in the trace.

Every call is recorded in :attr:`Adaptation.trace` (event, container, each plugin's reply), which
``kubetwin runtime`` reports as "the adjustments each NRI plugin made".

Upstream: containerd/nri v0.12.2 ``pkg/adaptation/adaptation.go``, ``plugin.go``, ``api/plugin.go``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ... import tracing as _tracing
from . import fastmerge, message_copy
from .api import (
    EVENT,
    EVENTS,
    VALID_EVENTS,
    Container,
    ContainerAdjustment,
    ContainerEviction,
    ContainerUpdate,
    LinuxResources,
    PodSandbox,
    clone,
    event_names,
    to_json,
)
from .owners import ConflictError
from .result import RequestError, Result
from .stub import Plugin

NRI_VERSION = "v0.12.2"
_NAME = re.compile(r"^[a-zA-Z0-9_.+-]+$")


class PluginError(Exception):
    """A request a plugin (or the merge of the plugins' replies) failed."""


def check_plugin_index(idx: str) -> None:
    """``CheckPluginIndex``."""
    if len(idx) != 2:
        raise PluginError(f'invalid plugin index "{idx}", must be 2 digits')
    if not (idx[0].isdigit() and idx[1].isdigit() and idx.isascii()):
        raise PluginError(f'invalid plugin index "{idx}" (not [0-9][0-9])')


def check_plugin_name(name: str) -> None:
    """``CheckPluginName``."""
    if not name:
        raise PluginError("invalid plugin name: name is empty")
    if not _NAME.match(name):
        raise PluginError(f'invalid plugin name "{name}": only [a-zA-Z0-9_.+-] allowed')


@dataclass
class Registered:
    plugin: Plugin
    idx: str
    base: str
    events: int
    #: events whose messages the plugin only reads (kubetwin's own plugins declare them as
    #: ``_nri_readonly_events``): it gets the runtime's messages, not copies — a fast path, the
    #: plugin neither keeps nor changes them, so what it sees is the same
    readonly: frozenset[str] = frozenset()
    #: events whose pod sandbox the plugin only reads, or keeps unchanged (``_nri_readonly_pods``):
    #: it gets the runtime's own sandbox — a fast path, the runtime never changes a sandbox
    #: message once it is sent, so what the plugin sees is the same
    readonly_pod: frozenset[str] = frozenset()
    #: events whose container the plugin keeps but writes nothing in except its ``linux.resources``
    #: (``_nri_resources_only``): it gets a copy sharing what neither side writes
    #: (:func:`.message_copy.resources_only_copy`) — a fast path, what it sees is the same
    resources_only: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return f"{self.idx}-{self.base}"

    def wants(self, event: str) -> bool:
        return bool(self.events & (1 << (EVENT[event] - 1)))


@dataclass
class TraceEntry:
    """One event the runtime relayed, and what each plugin answered."""

    event: str
    pod: str
    container: str = ""
    replies: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"event": self.event, "pod": self.pod}
        if self.container:
            out["container"] = self.container
        if self.replies:
            out["replies"] = self.replies
        if self.error:
            out["error"] = self.error
        return out


class Adaptation:
    """NRI's runtime adaptation, for one node."""

    def __init__(self, runtime_name: str = "containerd", runtime_version: str = "v2.1", *, traced: bool = True):
        self.runtime_name = runtime_name
        self.runtime_version = runtime_version
        self.plugins: list[Registered] = []
        #: the plugins subscribed to each event (by name), in index order
        self.subscribed: dict[str, list[Registered]] = {}
        self.trace: list[TraceEntry] = []
        #: keep every event and the plugins' replies as JSON (reports); ``simulate`` keeps none
        self.traced = traced
        #: :attr:`subscribed` and the lone plugin found for it (:func:`..fastpod.lone_plugin` keeps it)
        self.lone: tuple[dict[str, list[Registered]], Registered | None] | None = None

    # --- registration --------------------------------------------------------------------------
    def register(self, plugin: Plugin, config: str = "") -> Registered:
        idx, base = str(plugin.index), str(plugin.name)
        try:
            check_plugin_index(idx)
        except PluginError as exc:
            raise PluginError(f'plugin "{base}" registered with an invalid index: {exc}') from None
        check_plugin_name(base)
        for r in self.plugins:
            if r.idx == idx and r.base == base:
                raise PluginError(f'plugin "{idx}-{base}" is already registered')
        try:
            events = _call(plugin.configure, config, self.runtime_name, self.runtime_version)
        except PluginError as exc:
            raise PluginError(f"failed to configure plugin: {exc}") from None
        if events is None or events == 0:
            events = plugin.implemented_events()
        if not isinstance(events, int) or isinstance(events, bool):
            raise PluginError(f'plugin "{idx}-{base}": configure must return an event mask (int) or None')
        if events & ~VALID_EVENTS:
            raise PluginError(f"failed to configure plugin: invalid plugin events: 0x{events & ~VALID_EVENTS:x}")
        if events == 0:
            events = VALID_EVENTS
        readonly = frozenset(getattr(type(plugin), "_nri_readonly_events", ()))
        reg = Registered(plugin, idx, base, events, readonly,
                         readonly | frozenset(getattr(type(plugin), "_nri_readonly_pods", ())),
                         frozenset(getattr(type(plugin), "_nri_resources_only", ())))
        self.plugins.append(reg)
        # sort.Slice over a handful of plugins: an insertion sort, stable for equal indexes
        self.plugins.sort(key=lambda r: r.idx)
        self.subscribed = {EVENTS[e]: [r for r in self.plugins if r.events & (1 << (e - 1))]
                           for e in range(1, EVENT["LAST"])}
        return reg

    def plugin_list(self) -> list[dict[str, Any]]:
        return [{"name": r.name, "events": event_names(r.events), **({"class": type(r.plugin).__qualname__})}
                for r in self.plugins]

    def synchronize(self, pods: list[PodSandbox], containers: list[Container]) -> list[ContainerUpdate]:
        out: list[ContainerUpdate] = []
        for r in self.plugins:
            updates = _call(r.plugin.synchronize, [clone(p) for p in pods], [clone(c) for c in containers])
            out.extend(_updates(updates, r.name, "synchronize"))
        return out

    # --- pod events ----------------------------------------------------------------------------
    def _notify(self, event: str, method: str, pod: PodSandbox, container: Container | None = None,
                *extra: Any, fail: bool = False) -> None:
        subscribed = self.subscribed.get(event, ())
        # the event's trace entry, made only when someone reads it (a report, an active trace)
        if not (self.traced or _tracing.ACTIVE is not None):
            if not subscribed:
                return
            entry = None
        else:
            entry = TraceEntry(event, _pod_name(pod), container.name if container else "")
        for r in subscribed:
            if event in r.readonly:
                args = (pod,) + ((container,) if container is not None else ()) + extra
            else:
                args = ((pod if event in r.readonly_pod else clone(pod),)
                        + ((clone(container),) if container is not None else ()) + extra)
            try:
                _call(getattr(r.plugin, method), *args)
            except PluginError as exc:
                if entry is not None:
                    entry.error = str(exc)
                    self._record(entry)
                if fail:
                    raise
                return
        if entry is not None:
            self._record(entry)

    def _record(self, entry: TraceEntry) -> None:
        if self.traced:
            self.trace.append(entry)
        if _tracing.ACTIVE is not None:
            from ...tracing.runtime import nri_event

            nri_event(entry, self)

    def run_pod_sandbox(self, pod: PodSandbox) -> None:
        self._notify("RUN_POD_SANDBOX", "run_pod_sandbox", pod, fail=True)

    def stop_pod_sandbox(self, pod: PodSandbox) -> None:
        self._notify("STOP_POD_SANDBOX", "stop_pod_sandbox", pod)

    def remove_pod_sandbox(self, pod: PodSandbox) -> None:
        self._notify("REMOVE_POD_SANDBOX", "remove_pod_sandbox", pod)

    def update_pod_sandbox(self, pod: PodSandbox, overhead: LinuxResources | None,
                           resources: LinuxResources | None) -> None:
        self._notify("UPDATE_POD_SANDBOX", "update_pod_sandbox", pod, None, overhead, resources, fail=True)

    # --- container events ----------------------------------------------------------------------
    def create_container(self, pod: PodSandbox, container: Container
                         ) -> tuple[ContainerAdjustment, list[ContainerUpdate], Result]:
        """Every subscribed plugin in order; the merged adjustment (already applied to
        ``container``), the updates of other containers, and the merge (owners)."""
        result = Result(create=container)
        entry = (TraceEntry("CREATE_CONTAINER", _pod_name(pod), container.name)
                 if self.traced or _tracing.ACTIVE is not None else None)
        for r in self.plugins:
            if not r.events & _CREATE_CONTAINER:
                continue
            try:
                reply = _call(r.plugin.create_container, pod if "CREATE_CONTAINER" in r.readonly_pod else clone(pod),
                              _container_copy(r, "CREATE_CONTAINER", container))
                adjust, updates, evict = _create_reply(reply, r.name)
                if entry is not None:
                    entry.replies.append(_reply_json(r.name, adjust, updates, evict))
                result.apply_create(adjust, updates, r.name)
            except (PluginError, RequestError, ConflictError) as exc:
                if entry is not None:
                    entry.error = str(exc)
                    self._record(entry)
                raise PluginError(str(exc)) from None
        if entry is not None:
            self._record(entry)
        return result.adjustment, result.reply_updates, result

    def create_container_updates(self, pod: PodSandbox, container: Container,
                                 twin: Callable[[], Container | None] | None = None) -> list[ContainerUpdate]:
        """:meth:`create_container` for a runtime that reads neither the merged adjustment nor
        the field owners: the container adjusted, the updates of other containers returned.
        With one plugin subscribed and its reply of a plain shape (:mod:`.fastmerge`, a fast
        path) the merge is only its writes; otherwise :meth:`create_container`. ``twin``: the
        runtime's builder of the plugin's resources-only copy of the prepared container
        (:mod:`..fastcreate`, a fast path), used where that copy would be made."""
        subscribed = self.subscribed.get("CREATE_CONTAINER", [])
        if not fastmerge.ENABLED or self.traced or _tracing.ACTIVE is not None or len(subscribed) != 1:
            return self.create_container(pod, container)[1]
        r = subscribed[0]
        fastmerge.prepare(container)
        try:
            reply = _call(r.plugin.create_container, pod if "CREATE_CONTAINER" in r.readonly_pod else clone(pod),
                          _container_copy(r, "CREATE_CONTAINER", container, twin))
            adjust, updates, _ = _create_reply(reply, r.name)
            if fastmerge.plain_adjustment(adjust) and fastmerge.passable_updates(updates, container.id):
                if adjust is not None:
                    fastmerge.apply_adjustment(container, adjust)
                return updates
            result = Result(create=container)
            result.apply_create(adjust, updates, r.name)
        except (PluginError, RequestError, ConflictError) as exc:
            raise PluginError(str(exc)) from None
        return result.reply_updates

    def post_create_container(self, pod: PodSandbox, container: Container) -> None:
        self._notify("POST_CREATE_CONTAINER", "post_create_container", pod, container)

    def start_container(self, pod: PodSandbox, container: Container) -> None:
        self._notify("START_CONTAINER", "start_container", pod, container)

    def post_start_container(self, pod: PodSandbox, container: Container) -> None:
        self._notify("POST_START_CONTAINER", "post_start_container", pod, container)

    def update_container(self, pod: PodSandbox, container: Container, resources: LinuxResources
                         ) -> list[ContainerUpdate]:
        result = Result(update=container, update_resources=clone(resources))
        entry = TraceEntry("UPDATE_CONTAINER", _pod_name(pod), container.name)
        for r in self.plugins:
            if not r.wants("UPDATE_CONTAINER"):
                continue
            try:
                reply = _call(r.plugin.update_container, clone(pod), clone(container),
                              clone(result.update_resources))
                updates, evict = _update_reply(reply, r.name, "update_container")
                entry.replies.append(_reply_json(r.name, None, updates, evict))
                result.apply_updates(updates, r.name)
            except (PluginError, RequestError, ConflictError) as exc:
                entry.error = str(exc)
                self.trace.append(entry)
                raise PluginError(str(exc)) from None
        self.trace.append(entry)
        return result.update_response()

    def post_update_container(self, pod: PodSandbox, container: Container) -> None:
        self._notify("POST_UPDATE_CONTAINER", "post_update_container", pod, container)

    def stop_container(self, pod: PodSandbox, container: Container) -> list[ContainerUpdate]:
        entry = (TraceEntry("STOP_CONTAINER", _pod_name(pod), container.name)
                 if self.traced or _tracing.ACTIVE is not None else None)
        if entry is None and fastmerge.ENABLED:
            subscribed = self.subscribed.get("STOP_CONTAINER", [])
            if len(subscribed) == 1:
                return self._stop_lone(subscribed[0], pod, container)
        result = Result()
        for r in self.plugins:
            if not r.events & _STOP_CONTAINER:
                continue
            try:
                readonly = "STOP_CONTAINER" in r.readonly
                reply = _call(r.plugin.stop_container, pod if readonly else clone(pod),
                              container if readonly else clone(container))
                updates, _ = _update_reply(reply, r.name, "stop_container")
                if entry is not None:
                    entry.replies.append(_reply_json(r.name, None, updates, []))
                result.apply_updates(updates, r.name)
            except (PluginError, RequestError, ConflictError) as exc:
                if entry is not None:
                    entry.error = str(exc)
                    self._record(entry)
                raise PluginError(str(exc)) from None
        if entry is not None:
            self._record(entry)
        return result.reply_updates

    def _stop_lone(self, r: Registered, pod: PodSandbox, container: Container) -> list[ContainerUpdate]:
        """:meth:`stop_container` untraced with one plugin subscribed (:mod:`.fastmerge`): its
        updates of a plain shape are their own merge."""
        readonly = "STOP_CONTAINER" in r.readonly
        try:
            reply = _call(r.plugin.stop_container, pod if readonly else clone(pod),
                          container if readonly else clone(container))
            updates, _ = _update_reply(reply, r.name, "stop_container")
            if fastmerge.passable_updates(updates):
                return updates
            result = Result()
            result.apply_updates(updates, r.name)
        except (PluginError, RequestError, ConflictError) as exc:
            raise PluginError(str(exc)) from None
        return result.reply_updates

    def remove_container(self, pod: PodSandbox, container: Container) -> None:
        self._notify("REMOVE_CONTAINER", "remove_container", pod, container)


# --- helpers -----------------------------------------------------------------------------------
_CREATE_CONTAINER = 1 << (EVENT["CREATE_CONTAINER"] - 1)
_STOP_CONTAINER = 1 << (EVENT["STOP_CONTAINER"] - 1)


def _container_copy(r: Registered, event: str, container: Container,
                    twin: Callable[[], Container | None] | None = None) -> Container:
    """The container message plugin ``r`` gets for ``event``: its own copy (NRI sends each plugin
    its own message), sharing what neither side writes when the plugin writes only resources
    (``twin``: the runtime's builder of that copy, when it has one)."""
    if event in r.resources_only:
        if twin is not None and message_copy.SHARED_CONTAINER:
            made = twin()
            if made is not None:
                return made
        copied: Container = message_copy.resources_only_copy(container, clone)
        return copied
    return clone(container)


def _pod_name(pod: PodSandbox) -> str:
    return f"{pod.namespace}/{pod.name}"


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """Run plugin code; anything it raises becomes the request's error (never a traceback)."""
    try:
        return fn(*args)
    except PluginError:
        raise
    except (KeyboardInterrupt, SystemExit, MemoryError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - plugin code: its error is the request's error
        text = str(exc) or type(exc).__name__
        if type(exc) not in (Exception, ValueError, RuntimeError) and str(exc):
            text = f"{type(exc).__name__}: {text}"  # a programming error in the plugin: name it
        raise PluginError(text) from None


def _create_reply(reply: Any, name: str) -> tuple[ContainerAdjustment | None, list[ContainerUpdate], list]:
    evict: list = []
    if reply is None:
        return None, [], evict
    if isinstance(reply, ContainerAdjustment):
        return reply, [], evict
    if isinstance(reply, tuple) and len(reply) in (2, 3):
        adjust, updates = reply[0], reply[1]
        if len(reply) == 3:
            evict = list(reply[2] or [])
        if adjust is not None and not isinstance(adjust, ContainerAdjustment):
            raise PluginError(f'plugin "{name}": create_container returned {type(adjust).__name__}, '
                              f"not a ContainerAdjustment")
        return adjust, _updates(updates, name, "create_container"), _evictions(evict, name)
    raise PluginError(f'plugin "{name}": create_container must return a ContainerAdjustment, '
                      f"(adjustment, updates) or None, not {type(reply).__name__}")


def _update_reply(reply: Any, name: str, method: str) -> tuple[list[ContainerUpdate], list]:
    if isinstance(reply, tuple) and len(reply) == 2:
        return _updates(reply[0], name, method), _evictions(reply[1], name)
    return _updates(reply, name, method), []


def _updates(updates: Any, name: str, method: str) -> list[ContainerUpdate]:
    if updates is None:
        return []
    if not isinstance(updates, (list, tuple)) or not all(isinstance(u, ContainerUpdate) for u in updates):
        raise PluginError(f'plugin "{name}": {method} must return a list of ContainerUpdate')
    return list(updates)


def _evictions(evict: Any, name: str) -> list[ContainerEviction]:
    if evict is None:
        return []
    if not isinstance(evict, (list, tuple)) or not all(isinstance(e, ContainerEviction) for e in evict):
        raise PluginError(f'plugin "{name}": evictions must be a list of ContainerEviction')
    return list(evict)


def _reply_json(name: str, adjust: ContainerAdjustment | None, updates: list[ContainerUpdate],
                evict: list) -> dict[str, Any]:
    out: dict[str, Any] = {"plugin": name}
    if adjust is not None:
        out["adjust"] = to_json(adjust)
    if updates:
        out["update"] = [to_json(u) for u in updates]
    if evict:
        out["evict"] = [to_json(e) for e in evict]
    return out


def apply_update(container: Container, update: ContainerUpdate) -> None:
    """The runtime applying an NRI update: every field the update sets replaces the container's."""
    if update.linux is None or update.linux.resources is None:
        return
    src, dst = update.linux.resources, container.resources()
    if src.memory is not None:
        for attr in ("limit", "reservation", "swap", "kernel", "kernel_tcp", "swappiness", "disable_oom_killer",
                     "use_hierarchy"):
            v = getattr(src.memory, attr)
            if v is not None:
                setattr(dst.ensure_memory(), attr, v)
    if src.cpu is not None:
        for attr in ("shares", "quota", "period", "realtime_runtime", "realtime_period"):
            v = getattr(src.cpu, attr)
            if v is not None:
                setattr(dst.ensure_cpu(), attr, v)
        if src.cpu.cpus:
            dst.ensure_cpu().cpus = src.cpu.cpus
        if src.cpu.mems:
            dst.ensure_cpu().mems = src.cpu.mems
    for lim in src.hugepage_limits:
        dst.hugepage_limits = [h for h in dst.hugepage_limits if h.page_size != lim.page_size] + [lim]
    dst.unified.update(src.unified)
    if src.blockio_class is not None:
        dst.blockio_class = src.blockio_class
    if src.rdt_class is not None:
        dst.rdt_class = src.rdt_class
    if src.pids is not None:
        dst.pids = src.pids
