"""DefaultBinder: the default profile's Bind plugin."""

from __future__ import annotations

from kubetwin.scheduler.framework.interface import BindPlugin, CycleState
from kubetwin.scheduler.plugins.defaultbinder.default_binder import DefaultBinder
from kubetwin.scheduler.scheduler import Scheduler

from ...builders import GATES, node, pod


def test_the_default_profile_binds_with_the_default_binder():
    fwk = Scheduler(None, [node("n1")], GATES).framework
    assert [type(p) for p in fwk.bind_plugins] == [DefaultBinder]
    assert isinstance(fwk.bind_plugins[0], BindPlugin)


def test_bind_succeeds_and_the_framework_names_the_binder():
    fwk = Scheduler(None, [node("n1")], GATES).framework
    st = fwk.run_bind_plugins(CycleState(), pod("p"), "n1")
    assert st.is_success and st.plugin == DefaultBinder.name


def test_binding_through_the_scheduler_puts_the_pod_on_its_node_in_the_cache():
    s = Scheduler(None, [node("n1")], GATES)
    s.bind(pod("p"), "n1")
    assert [pi.pod.metadata.name for pi in s.cluster.infos[s.cluster.index["n1"]].pods] == ["p"]


def test_the_long_running_scheduler_needs_no_bind_phase_for_the_default_binder():
    assert Scheduler(None, [node("n1")], GATES)._permit_or_bind is False
