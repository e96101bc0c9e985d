"""The NUMA cells of NodeResourceTopologyMatch's twin as columns (``columns.py``): amounts held
exactly, rows re-read only for nodes that changed and whose cached object changed, irregular
NUMA numbering left to the plugin's own functions."""

from __future__ import annotations

import pytest

from kubetwin.model.features import gates_for
from kubetwin.model.meta import convert
from kubetwin.model.pod import Pod
from kubetwin.model.quantity import Quantity
from kubetwin.scheduler.plugins.noderesourcetopology import NAME
from kubetwin.scheduler.plugins.noderesourcetopology.columns import NRTColumns, milli
from kubetwin.scheduler.plugins.noderesourcetopology.nrt import nrt_from_dict
from kubetwin.scheduler.profile import profile_from_config
from kubetwin.scheduler.scheduler import Scheduler

from .test_vector import random_node


def _nrt(node, zones=("node-0", "node-1")):
    res = [{"name": "cpu", "available": "4"}, {"name": "memory", "available": "8Gi"}]
    return nrt_from_dict({"apiVersion": "topology.node.k8s.io/v1alpha2", "kind": "NodeResourceTopology",
                          "metadata": {"name": node},
                          "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"}],
                          "zones": [{"name": z, "type": "Node", "resources": res} for z in zones]})


def _scheduler(args):
    import random

    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}},
                         "pluginConfig": [{"name": NAME, "args": args}]}]}
    nodes = [random_node(random.Random(i), i) for i in range(3)]
    s = Scheduler(profile_from_config(cfg), nodes, gates_for())
    published = {"n0": _nrt("n0"), "n1": _nrt("n1"), "n2": _nrt("n2", ("node-1", "node-0"))}
    plugin = s.framework.plugin(NAME)
    plugin.use_source(published.get, sorted(published))
    cols = NRTColumns(s.cluster, plugin)
    return s, cols


POD = convert({"metadata": {"name": "p", "namespace": "ns", "uid": "p"},
               "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                   "requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}]}}, Pod)


@pytest.mark.parametrize("text, expected", [("1", 1000), ("1500m", 1500), ("2Gi", 2 * 2**30 * 1000),
                                            ("1n", None), ("1500001n", None), ("0", 0)])
def test_amounts_are_held_in_thousandths_only_when_exact(text, expected):
    assert milli(Quantity.parse(text)) == expected


def test_the_first_sync_reads_every_row():
    _, cols = _scheduler({})
    cols.sync(POD)
    assert cols.rebuilt_rows == 3 and cols.ncells.tolist() == [2, 2, 0]


def test_zones_out_of_numa_order_make_a_node_irregular():
    _, cols = _scheduler({})
    cols.sync(POD)
    assert cols.regular.tolist() == [True, True, False]


def test_an_overreserve_reservation_rereads_its_node_only():
    s, cols = _scheduler({"cacheResyncPeriodSeconds": 5})
    cols.sync(POD)
    s.bind(POD, "n0")
    cols.sync(POD)
    assert cols.rebuilt_rows == 4
    r = cols.rindex["cpu"]
    assert cols.milli[r][0].tolist() == [3000, 3000] and cols.milli[r][1].tolist() == [4000, 4000]


def test_a_passthrough_bind_rereads_nothing_as_the_object_is_the_same():
    s, cols = _scheduler({})
    cols.sync(POD)
    s.bind(POD, "n0")
    cols.sync(POD)
    assert cols.rebuilt_rows == 3
