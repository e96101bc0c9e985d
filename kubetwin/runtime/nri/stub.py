"""The public Python plugin API: an NRI plugin is a class with the event methods.

Shaped like NRI's Go stub (``pkg/stub``): subclass :class:`Plugin`, set its ``name`` and
two-digit ``index`` (plugins run in ascending index order, as NRI orders them), and define
the event methods you need — a plugin subscribes to exactly the events whose methods it
overrides (or to the mask :meth:`Plugin.configure` returns). ``create_container`` returns a
:class:`ContainerAdjustment` for the new container and :class:`ContainerUpdate`\\ s for others;
``update_container`` and ``stop_container`` return updates. Raising an exception fails the
request with its message, as a Go plugin returning an error does.

kubetwin runs such a plugin in ``kubetwin runtime --plugin FILE.py`` next to (or instead of)
the nri-plugins resource policies; see docs/runtime.md and examples/nri/.

Upstream: containerd/nri v0.12.2 ``pkg/stub/stub.go``.
"""

from __future__ import annotations

from typing import Any

from .api import (
    EVENT,
    Container,
    ContainerAdjustment,
    ContainerEviction,
    ContainerUpdate,
    LinuxResources,
    PodSandbox,
    event_mask,
)

__all__ = ["Container", "ContainerAdjustment", "ContainerEviction", "ContainerUpdate", "LinuxResources",
           "Plugin", "PodSandbox", "event_mask"]

# method name -> the event it handles
EVENT_METHODS: dict[str, str] = {
    "run_pod_sandbox": "RUN_POD_SANDBOX",
    "update_pod_sandbox": "UPDATE_POD_SANDBOX",
    "post_update_pod_sandbox": "POST_UPDATE_POD_SANDBOX",
    "stop_pod_sandbox": "STOP_POD_SANDBOX",
    "remove_pod_sandbox": "REMOVE_POD_SANDBOX",
    "create_container": "CREATE_CONTAINER",
    "post_create_container": "POST_CREATE_CONTAINER",
    "start_container": "START_CONTAINER",
    "post_start_container": "POST_START_CONTAINER",
    "update_container": "UPDATE_CONTAINER",
    "post_update_container": "POST_UPDATE_CONTAINER",
    "stop_container": "STOP_CONTAINER",
    "remove_container": "REMOVE_CONTAINER",
}


class Plugin:
    """Base class of a Python NRI plugin (the Go stub's ``Plugin`` interfaces in one class)."""

    #: the plugin's name ([a-zA-Z0-9_.+-], as NRI's ``CheckPluginName``)
    name: str = ""
    #: two digits; plugins are called in ascending index order
    index: str = ""
    #: the node's hardware (a :class:`kubetwin.machine.model.Machine`), set by kubetwin before
    #: ``configure``: what a plugin on a real node reads from /sys
    machine: Any = None

    # --- lifecycle -----------------------------------------------------------------------------
    def configure(self, config: str, runtime: str, version: str) -> int | None:
        """Called once at registration; return an event mask (:func:`event_mask`) or None for
        "the events my overridden methods handle"."""
        return None

    def synchronize(self, pods: list[PodSandbox], containers: list[Container]) -> list[ContainerUpdate]:
        """The pods and containers already running when the plugin registers."""
        return []

    def shutdown(self) -> None:
        """The runtime is going away."""

    # --- events (override the ones you need) ----------------------------------------------------
    def run_pod_sandbox(self, pod: PodSandbox) -> None: ...

    def update_pod_sandbox(self, pod: PodSandbox, overhead: LinuxResources | None,
                           resources: LinuxResources | None) -> None: ...

    def post_update_pod_sandbox(self, pod: PodSandbox) -> None: ...

    def stop_pod_sandbox(self, pod: PodSandbox) -> None: ...

    def remove_pod_sandbox(self, pod: PodSandbox) -> None: ...

    def create_container(self, pod: PodSandbox, container: Container
                         ) -> tuple[ContainerAdjustment | None, list[ContainerUpdate]] | ContainerAdjustment | None:
        return None

    def post_create_container(self, pod: PodSandbox, container: Container) -> None: ...

    def start_container(self, pod: PodSandbox, container: Container) -> None: ...

    def post_start_container(self, pod: PodSandbox, container: Container) -> None: ...

    def update_container(self, pod: PodSandbox, container: Container,
                         resources: LinuxResources) -> list[ContainerUpdate]:
        return []

    def post_update_container(self, pod: PodSandbox, container: Container) -> None: ...

    def stop_container(self, pod: PodSandbox, container: Container) -> list[ContainerUpdate]:
        return []

    def remove_container(self, pod: PodSandbox, container: Container) -> None: ...

    # --- helpers for the runtime ---------------------------------------------------------------
    def implemented_events(self) -> int:
        """The events this class handles: the methods it overrides (the stub's type assertions)."""
        mask = 0
        for method, event in EVENT_METHODS.items():
            if getattr(type(self), method) is not getattr(Plugin, method):
                mask |= 1 << (EVENT[event] - 1)
        return mask

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "index": self.index, "class": type(self).__qualname__}
