"""The NodeResourceTopologyMatch NRT cache (scheduler-plugins v0.34.7 ``pkg/noderesourcetopology/cache``).

Cases after ``overreserve_test.go`` (``TestNodesMaybeOverReservedCount``,
``TestDirtyNodesMarkDiscarded``, ``TestDirtyNodesUnmarkedOnReserve``,
``TestOverreserveGetCachedNRTCopy``, ``TestResyncNoPodFingerprint``, ``TestResyncMatchFingerprint``),
``discardreserved_test.go`` (``TestDiscardReservedNodesGetNRTCopy``) and ``store_test.go``
(``TestResourceStoreUpdate``: requests off every zone, clamped at zero), and the plugin's
Filter answer "invalid node topology data".
"""

from __future__ import annotations

import pytest

from kubetwin.errors import InputError
from kubetwin.model import podfingerprint
from kubetwin.model.pod import pod_from_dict
from kubetwin.scheduler.plugins.noderesourcetopology.args import parse_node_resource_topology_match_args
from kubetwin.scheduler.plugins.noderesourcetopology.cache import DiscardReserved, OverReserve, Passthrough, new_cache
from kubetwin.scheduler.plugins.noderesourcetopology.nrt import nrt_from_dict


def nrt(name="node-1", cpu="8", memory="8Gi", fingerprint=None):
    attrs = [{"name": "topologyManagerPolicy", "value": "single-numa-node"},
             {"name": "topologyManagerScope", "value": "container"}]
    if fingerprint:
        attrs.append({"name": podfingerprint.ATTRIBUTE, "value": fingerprint})
    zones = [{"name": f"node-{i}", "type": "Node", "resources": [
        {"name": "cpu", "capacity": cpu, "allocatable": cpu, "available": cpu},
        {"name": "memory", "capacity": memory, "allocatable": memory, "available": memory}]} for i in (0, 1)]
    return nrt_from_dict({"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
                          "metadata": {"name": name}, "attributes": attrs, "zones": zones})


def pod(name, cpu="2", memory="1Gi"):
    r = {"cpu": cpu, "memory": memory}
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "uid": name},
                          "spec": {"containers": [{"name": "c", "image": "x",
                                                   "resources": {"requests": r, "limits": r}}]}})


def available(obj, resource="cpu"):
    return [str(next(r.available for r in z.resources if r.name == resource)) for z in obj.zones]


class API:
    """The API server's current objects."""

    def __init__(self, **objs):
        self.objs = objs

    def __call__(self, node):
        return self.objs.get(node)


def test_passthrough_reads_the_current_object():
    api = API(**{"node-1": nrt()})
    cache = Passthrough(api)
    api.objs["node-1"] = nrt(cpu="4")
    assert available(cache.get_cached_nrt_copy("node-1", pod("a"))[0]) == ["4", "4"]


def test_overreserve_keeps_the_start_up_copy_minus_reserved_pods_on_every_zone():
    api = API(**{"node-1": nrt()})
    cache = OverReserve(api, ["node-1"])
    cache.reserve_node_resources("node-1", pod("a", "3"))
    api.objs["node-1"] = nrt(cpu="1")   # the agent published: the cache does not look
    got, fresh = cache.get_cached_nrt_copy("node-1", pod("b"))
    assert fresh and available(got) == ["5", "5"]


def test_overreserve_clamps_an_over_reserved_zone_at_zero():
    cache = OverReserve(API(**{"node-1": nrt(cpu="4")}), ["node-1"])
    cache.reserve_node_resources("node-1", pod("a", "3"))
    cache.reserve_node_resources("node-1", pod("b", "3"))
    assert available(cache.get_cached_nrt_copy("node-1", pod("c"))[0]) == ["0", "0"]


def test_overreserve_unknown_node_is_fresh_without_data():
    assert OverReserve(API(), ["node-1"]).get_cached_nrt_copy("node-1", pod("a")) == (None, True)


def test_a_failed_filter_marks_the_node_and_a_reserve_unmarks_it():
    cache = OverReserve(API(**{"node-1": nrt()}), ["node-1"])
    cache.node_maybe_over_reserved("node-1", pod("a"))
    cache.node_maybe_over_reserved("node-1", pod("b"))
    assert cache.maybe_over_reserved == {"node-1": 2}
    cache.reserve_node_resources("node-1", pod("c"))
    assert cache.desynced == []


def test_resync_without_a_fingerprint_keeps_the_node_dirty():
    api = API(**{"node-1": nrt()})
    cache = OverReserve(api, ["node-1"])
    cache.pods_on_node = lambda node: [("ns", "a", True)]
    cache.reserve_node_resources("node-1", pod("a"))
    cache.node_maybe_over_reserved("node-1", pod("b"))
    assert cache.resync() == [] and cache.desynced == ["node-1"]


def test_resync_with_a_matching_fingerprint_takes_the_current_object_and_drops_reservations():
    api = API(**{"node-1": nrt()})
    cache = OverReserve(api, ["node-1"])
    cache.pods_on_node = lambda node: [("ns", "a", True)]
    cache.reserve_node_resources("node-1", pod("a", "3"))
    cache.node_maybe_over_reserved("node-1", pod("b"))
    api.objs["node-1"] = nrt(cpu="6", fingerprint=podfingerprint.sign([("ns", "a")]))
    assert cache.resync() == ["node-1"]
    assert available(cache.get_cached_nrt_copy("node-1", pod("b"))[0]) == ["6", "6"] and cache.desynced == []


def test_resync_with_a_stale_fingerprint_waits_for_the_agent():
    api = API(**{"node-1": nrt(fingerprint=podfingerprint.sign([]))})
    cache = OverReserve(api, ["node-1"])
    cache.pods_on_node = lambda node: [("ns", "a", True)]
    cache.node_maybe_over_reserved("node-1", pod("b"))
    assert cache.resync() == []


def test_discard_reserved_has_no_data_between_reserve_and_post_bind():
    cache = DiscardReserved(API(**{"node-1": nrt()}))
    cache.reserve_node_resources("node-1", pod("a"))
    assert cache.get_cached_nrt_copy("node-1", pod("b")) == (None, False)
    cache.post_bind("node-1", pod("a"))
    assert cache.get_cached_nrt_copy("node-1", pod("b"))[1]


@pytest.mark.parametrize("raw,kind", [({}, Passthrough), ({"cacheResyncPeriodSeconds": 5}, OverReserve),
                                      ({"discardReservedNodes": True, "cacheResyncPeriodSeconds": 5}, DiscardReserved)])
def test_the_args_choose_the_cache_as_init_node_topology_informer_does(raw, kind):
    args = parse_node_resource_topology_match_args(raw)
    assert type(new_cache(args, API(), [])) is kind


def test_a_misspelt_cache_mode_is_an_error():
    with pytest.raises(InputError, match='did you mean "Dedicated"'):
        parse_node_resource_topology_match_args({"cache": {"informerMode": "Dedicate"}})


def test_filter_on_a_node_without_fresh_data_is_invalid_node_topology_data():
    from kubetwin.scheduler.framework.interface import CycleState
    from kubetwin.scheduler.plugins.noderesourcetopology.plugin import NodeResourceTopologyMatch

    class Handle:
        objects = {"NodeResourceTopology": []}
        gates = None

    plugin = NodeResourceTopologyMatch(parse_node_resource_topology_match_args({"discardReservedNodes": True}),
                                       Handle())
    plugin.use_source(API(**{"node-1": nrt()}), ["node-1"])
    plugin.cache.reserve_node_resources("node-1", pod("a"))

    class Node:
        name = "node-1"

    status = plugin.filter(CycleState(), pod("b"), Node())  # type: ignore[arg-type]
    assert not status.is_success and "invalid node topology data" in status.message


def test_overreserve_view_after_reserves_is_the_copy_minus_all_of_them_clamped_at_zero():
    # the view kept current one reservation at a time equals the subtraction from the copy
    api = API(**{"node-1": nrt(cpu="5")})
    cache = OverReserve(api, ["node-1"])
    cache.get_cached_nrt_copy("node-1", pod("a"))
    for name in ("a", "b", "c"):
        cache.reserve_node_resources("node-1", pod(name, cpu="2"))
        cache.get_cached_nrt_copy("node-1", pod(name))
    kept = cache.get_cached_nrt_copy("node-1", pod("a"))[0]
    cache._views.clear()
    assert kept == cache.get_cached_nrt_copy("node-1", pod("a"))[0]
    assert available(kept) == ["0", "0"]


def test_overreserve_reserving_a_pod_again_takes_its_request_off_once():
    api = API(**{"node-1": nrt(cpu="8")})
    cache = OverReserve(api, ["node-1"])
    cache.reserve_node_resources("node-1", pod("a", cpu="2"))
    cache.get_cached_nrt_copy("node-1", pod("a"))
    cache.reserve_node_resources("node-1", pod("a", cpu="3"))
    assert available(cache.get_cached_nrt_copy("node-1", pod("a"))[0]) == ["5", "5"]
