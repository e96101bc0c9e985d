"""NRI as the runtime drives it: messages in protobuf JSON, plugins in index order, the conflict
rule, the Python plugin API."""

from __future__ import annotations

import pytest

from kubetwin.runtime.nri.adaptation import Adaptation, PluginError, apply_update
from kubetwin.runtime.nri.api import (
    EVENT,
    VALID_EVENTS,
    Container,
    ContainerAdjustment,
    ContainerEviction,
    ContainerUpdate,
    LinuxContainer,
    LinuxResources,
    PodSandbox,
    event_mask,
    to_json,
)
from kubetwin.runtime.nri.stub import Plugin


def pod() -> PodSandbox:
    return PodSandbox(id="pod-id", name="p", namespace="default")


def ctr(cid: str = "c1") -> Container:
    return Container(id=cid, pod_sandbox_id="pod-id", name=cid,
                     linux=LinuxContainer(resources=LinuxResources().ensure()))


class Pinner(Plugin):
    name, index = "pinner", "10"

    def __init__(self, cpus: str = "0-1", index: str = "10", name: str = "pinner"):
        self.cpus, self.index, self.name = cpus, index, name
        self.seen: list[str] = []

    def create_container(self, pod, container):
        self.seen.append(container.resources().cpu.cpus)
        adj = ContainerAdjustment()
        adj.set_linux_cpuset_cpus(self.cpus)
        return adj


class Watcher(Plugin):
    name, index = "watcher", "20"

    def __init__(self) -> None:
        self.events: list[str] = []

    def start_container(self, pod, container):
        self.events.append("start " + container.name)


def test_messages_are_written_in_protobuf_json_shape() -> None:
    adj = ContainerAdjustment()
    adj.set_linux_cpuset_cpus("2-3")
    adj.set_linux_memory_limit(1 << 30)
    adj.set_linux_rdt_class("")
    assert to_json(adj) == {"linux": {"resources": {"memory": {"limit": {"value": "1073741824"}},
                                                    "cpu": {"cpus": "2-3"}, "rdtClass": {}}}}


def test_event_masks_accept_nri_names() -> None:
    assert event_mask("CreateContainer,StopContainer") == (1 << 3) | (1 << 9)
    assert VALID_EVENTS == (1 << 14) - 1
    with pytest.raises(ValueError):
        event_mask("CreateContainers")


def test_a_plugin_subscribes_to_the_events_it_overrides() -> None:
    assert Watcher().implemented_events() == 1 << (EVENT["START_CONTAINER"] - 1)


def test_plugins_run_in_index_order_and_see_earlier_adjustments() -> None:
    r = Adaptation()
    late = Pinner("4-5", index="90", name="late")
    early = Watcher()
    r.register(late)
    r.register(early)
    assert [p.name for p in r.plugins] == ["20-watcher", "90-late"]
    adjust, _, _ = r.create_container(pod(), ctr())
    assert adjust.linux.resources.cpu.cpus == "4-5"


def test_two_plugins_setting_one_field_fail_the_creation_with_nris_error() -> None:
    r = Adaptation()
    r.register(Pinner("0-1", "10", "a"))
    r.register(Pinner("2-3", "20", "b"))
    with pytest.raises(PluginError, match='plugins "20-b" and "10-a" both tried to set CPUSetCPUs'):
        r.create_container(pod(), ctr())


def test_a_later_plugin_sees_the_container_as_adjusted_so_far() -> None:
    r = Adaptation()
    first, second = Pinner("0-1", "10", "a"), Pinner("0-1", "20", "b")
    r.register(first)
    r.register(second)
    with pytest.raises(PluginError):
        r.create_container(pod(), ctr())
    assert second.seen == ["0-1"]


def test_updating_the_container_being_created_is_an_error() -> None:
    class Bad(Plugin):
        name, index = "bad", "10"

        def create_container(self, pod, container):
            u = ContainerUpdate(container.id)
            u.set_linux_cpuset_cpus("1")
            return None, [u]

    r = Adaptation()
    r.register(Bad())
    with pytest.raises(PluginError, match='plugin "10-bad" asked update of "c1" during creation'):
        r.create_container(pod(), ctr())


def test_a_plugin_exception_is_the_requests_error() -> None:
    class Refuser(Plugin):
        name, index = "refuser", "10"

        def create_container(self, pod, container):
            raise ValueError("no room")

    r = Adaptation()
    r.register(Refuser())
    with pytest.raises(PluginError, match="^no room$"):
        r.create_container(pod(), ctr())


@pytest.mark.parametrize("index, message", [("1", "must be 2 digits"), ("ab", "not \\[0-9\\]\\[0-9\\]")])
def test_a_plugin_index_is_two_digits(index: str, message: str) -> None:
    with pytest.raises(PluginError, match=message):
        Adaptation().register(Pinner(index=index))


def test_a_plugin_name_is_checked() -> None:
    with pytest.raises(PluginError, match="only"):
        Adaptation().register(Pinner(name="has space"))


def test_subscribing_to_unknown_events_fails_registration() -> None:
    class Greedy(Plugin):
        name, index = "greedy", "10"

        def configure(self, config, runtime, version):
            return 1 << 20

    with pytest.raises(PluginError, match="invalid plugin events"):
        Adaptation().register(Greedy())


def test_evictions_in_replies_are_recorded_but_not_acted_on() -> None:
    class Evictor(Plugin):
        name, index = "evictor", "10"

        def create_container(self, pod, container):
            return None, [], [ContainerEviction("other", "because")]

    r = Adaptation()
    r.register(Evictor())
    adjust, updates, _ = r.create_container(pod(), ctr())
    assert updates == [] and r.trace[-1].replies[0]["evict"] == [{"containerId": "other", "reason": "because"}]


def test_updates_of_other_containers_are_merged_per_container() -> None:
    class Shrinker(Plugin):
        name, index = "shrinker", "10"

        def create_container(self, pod, container):
            u = ContainerUpdate("other")
            u.set_linux_cpuset_cpus("3")
            return None, [u]

    r = Adaptation()
    r.register(Shrinker())
    _, updates, _ = r.create_container(pod(), ctr())
    other = ctr("other")
    apply_update(other, updates[0])
    assert [u.container_id for u in updates] == ["other"] and other.resources().cpu.cpus == "3"


def test_notifications_reach_subscribed_plugins_only() -> None:
    r = Adaptation()
    w = Watcher()
    r.register(w)
    r.register(Pinner())
    r.start_container(pod(), ctr())
    assert w.events == ["start c1"]


class _Keeper(Plugin):
    """Keeps the messages it is sent (``readonly``: declares the start event read-only)."""

    name, index = "keeper", "30"

    def __init__(self) -> None:
        self.kept: list[Container] = []

    def start_container(self, pod, container):
        self.kept.append(container)


class _ReadOnlyKeeper(_Keeper):
    _nri_readonly_events = frozenset({"START_CONTAINER"})


def test_a_plugin_gets_copies_of_the_runtimes_messages() -> None:
    r = Adaptation()
    k = _Keeper()
    r.register(k)
    c = ctr()
    r.start_container(pod(), c)
    assert k.kept[0] is not c and k.kept[0] == c


def test_events_a_kubetwin_plugin_reads_only_get_the_runtimes_own_messages() -> None:
    r = Adaptation()
    k = _ReadOnlyKeeper()
    r.register(k)
    c = ctr()
    r.start_container(pod(), c)
    assert k.kept[0] is c


def test_the_resource_manager_neither_keeps_nor_changes_the_messages_of_its_read_only_events(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import copy

    from kubetwin.runtime.resmgr.manager import ResourceManager

    from .. import fastpath_runs as runs

    seen: list[str] = []
    for event in sorted(ResourceManager._nri_readonly_events):
        method = event.lower()
        plain = getattr(ResourceManager, method)

        def checked(self, *args, _plain=plain, _method=method):
            before = copy.deepcopy(args)
            out = _plain(self, *args)
            assert args == before
            kept = [c.ctr for c in self.cache.containers.values()]   # sandboxes: see the next test
            assert not any(k is a for k in kept for a in args)
            seen.append(_method)
            return out

        monkeypatch.setattr(ResourceManager, method, checked)
    runs.run(runs.nodes(runs.MACHINES[1], 2, runs.topology_aware()),
             runs.arrivals(41, 40, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert set(seen) == {e.lower() for e in ResourceManager._nri_readonly_events}


def test_the_resource_manager_keeps_the_sandboxes_of_its_read_only_pod_events_unchanged_as_the_runtime_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``_nri_readonly_pods``: the sandbox is passed uncopied; neither the resource manager nor
    the runtime changes it afterwards, so what the cache holds is what a copy would hold."""
    import copy

    from kubetwin.runtime.resmgr.manager import ResourceManager

    from .. import fastpath_runs as runs

    sent: list[tuple[PodSandbox, PodSandbox]] = []
    seen: list[str] = []
    for event in sorted(ResourceManager._nri_readonly_pods):
        method = event.lower()
        plain = getattr(ResourceManager, method)

        def checked(self, sandbox, *args, _plain=plain, _method=method):
            sent.append((sandbox, copy.deepcopy(sandbox)))
            seen.append(_method)
            return _plain(self, sandbox, *args)

        monkeypatch.setattr(ResourceManager, method, checked)
    runs.run(runs.nodes(runs.MACHINES[1], 2, runs.topology_aware()),
             runs.arrivals(41, 40, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert set(seen) == {e.lower() for e in ResourceManager._nri_readonly_pods}
    assert sent and all(now == then for now, then in sent)


class _SandboxKeeper(Plugin):
    name, index = "sandbox-keeper", "30"

    def __init__(self) -> None:
        self.kept: list[PodSandbox] = []

    def run_pod_sandbox(self, pod):
        self.kept.append(pod)

    def create_container(self, pod, container):
        self.kept.append(pod)


class _ReadOnlyPodKeeper(_SandboxKeeper):
    _nri_readonly_pods = frozenset({"RUN_POD_SANDBOX"})


def test_a_plugin_gets_a_copy_of_the_sandbox_unless_it_declares_the_event_read_only_for_pods() -> None:
    r = Adaptation()
    k, ro = _SandboxKeeper(), _ReadOnlyPodKeeper()
    ro.index = "40"
    r.register(k)
    r.register(ro)
    p, c = pod(), ctr()
    r.run_pod_sandbox(p)
    r.create_container(p, c)
    assert k.kept[0] is not p and k.kept[0] == p
    assert ro.kept[0] is p
    assert ro.kept[1] is not p and ro.kept[1] == p   # CREATE_CONTAINER not declared: a copy
