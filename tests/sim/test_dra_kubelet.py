"""The nodes' kubelet DRA managers in the loop: the in-place path (``FAST``) leaves every node's
checkpoint bytes, CDI spec files, events and mismatches as the plain whole-checkpoint path does."""

from __future__ import annotations

import pytest

from kubetwin.dra.checkpoint import encode_checkpoint
from kubetwin.sim import dra_kubelet

from .test_dra import DEVICE_CLASS, TEMPLATE, claiming, gpu_group


def _node_side(sc, fast: bool, monkeypatch):
    from kubetwin.sim.loop import Simulator

    monkeypatch.setattr(dra_kubelet, "FAST", fast)
    s = Simulator(sc)
    s.run()
    nd = s.node_dra
    assert nd.fast is fast
    return ([encode_checkpoint(st) for st in nd.state],
            [[(name, spec.to_json()) for name, spec in cdi.items()] for cdi in nd.cdi],
            s.events, nd.mismatches)


@pytest.mark.parametrize("gpus", [1, 3])
def test_pods_coming_and_going_leave_each_node_as_the_plain_path_does(tmp_path, kit, monkeypatch, gpus):
    sc = kit.scenario(tmp_path, {"nodeGroups": [gpu_group(count=3, gpus=gpus)],
                                 "workloads": [claiming("w", 6, duration="1m"),
                                               claiming("x", 5, arrival={"start": "30s", "interval": "7s"}, duration="2m"),
                                               claiming("y", 4, arrival={"start": "50s", "interval": "3s"})]},
                      DEVICE_CLASS, TEMPLATE)
    fast = _node_side(sc, True, monkeypatch)
    plain = _node_side(sc, False, monkeypatch)
    assert fast == plain
    assert any(len(st) > 100 for st in fast[0])   # some claims are still prepared at the end


def test_a_node_that_joins_starts_with_nothing_prepared(tmp_path, kit):
    from kubetwin.sim.loop import Simulator

    sc = kit.scenario(tmp_path, {"nodeGroups": [gpu_group(count=2)], "workloads": [claiming("w", 2)]},
                      DEVICE_CLASS, TEMPLATE)
    s = Simulator(sc)
    s.run()
    nd = s.node_dra
    kept = nd.state
    nd.reindex(["g-0", "g-1"], ["g-1", "g-new"])
    assert nd.state == [kept[1], []]
