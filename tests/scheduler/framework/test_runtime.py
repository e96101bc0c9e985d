"""The framework runtime sorts a profile's plugins by the protocols they satisfy, once, and the
long-running scheduler reaches kubetwin's own hooks through those lists, never by looking for a
method on every plugin."""

from __future__ import annotations

from kubetwin.model.features import gates_for
from kubetwin.scheduler.backend.cache import Cache
from kubetwin.scheduler.framework.interface import CycleState, Plugin
from kubetwin.scheduler.framework.runtime import Framework
from kubetwin.scheduler.framework.status import SUCCESS, Status
from kubetwin.scheduler.profile import load_profile
from kubetwin.scheduler.scheduler import Scheduler
from tests.scheduler.builders import node


class _Labels(Plugin):
    name = "LabelsWatcher"

    def __init__(self, args, handle):
        super().__init__(args, handle)
        self.heard: list[str] = []

    def node_changed(self, name: str) -> None:
        self.heard.append(name)


class _Binder(Plugin):
    name = "OwnBinder"

    def bind(self, state: CycleState, pod, node: str) -> Status:
        return SUCCESS


def _framework(plugin_cls):
    cache = Cache([node("a")], gates_for())
    return Framework.for_plugin(plugin_cls(None, cache.handle), cache.handle)


def test_the_default_profile_filters_in_profile_order():
    sched = Scheduler(load_profile(None), [node("a")], gates_for())
    names = [p.name for p in sched.framework.filter_plugins]
    assert names[0] == "NodeUnschedulable" and len(names) == len(set(names)) > 5


def test_a_plugin_with_node_changed_is_told_of_label_changes_and_takes_no_extension_point():
    fwk = _framework(_Labels)
    assert [p.name for p in fwk.node_labels_listeners] == ["LabelsWatcher"]
    assert fwk.filter_plugins == [] and fwk.bind_plugins == []


def test_a_bind_plugin_binds_on_its_own_unless_it_says_the_cache_binds():
    fwk = _framework(_Binder)
    assert [p.binds_through_cache for p in fwk.bind_plugins] == [False]
    default = Scheduler(load_profile(None), [node("a")], gates_for()).framework
    assert all(p.binds_through_cache for p in default.bind_plugins)


def test_the_scheduler_tells_label_listeners_only_when_labels_changed():
    sched = Scheduler(load_profile(None), [node("a")], gates_for())
    listener = _Labels(None, sched.handle)
    sched.framework.node_labels_listeners.append(listener)
    sched.update_node(node("a", cpu="8"))
    relabelled = node("a")
    relabelled.metadata.labels["zone"] = "z1"
    sched.update_node(relabelled)
    assert listener.heard == ["a"]
