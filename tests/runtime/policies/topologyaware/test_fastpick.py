"""The topology-aware policy's exclusive-CPU pick with the ranking's pool figures (``fastpick``):
the figures a ranking leaves are taken once, by the pick of its own request on its own policy;
at every placement of random workloads the pick is the plain one; random create/delete
sequences give the same containers, NRI replies and exports with it on and off."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace
from typing import Any

import pytest

from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.node import RuntimeNode
from kubetwin.runtime.nri.api import to_json
from kubetwin.runtime.nrt import export
from kubetwin.runtime.policies.topologyaware import fastpick, fastscore, fastslice

from ... import fastpath_runs as runs


def _supply_of(policy: object) -> SimpleNamespace:
    return SimpleNamespace(node=SimpleNamespace(policy=policy))


def test_the_figures_of_a_ranking_are_taken_once_by_the_pick_of_its_request_on_its_policy() -> None:
    policy, other, req = object(), object(), object()
    fastpick.remember(policy, req, [1000])   # type: ignore[arg-type]
    assert fastpick.scored(_supply_of(policy), object()) is None      # another request
    assert fastpick.scored(_supply_of(policy), req) is None           # dropped by that pick
    fastpick.remember(policy, req, [1000])   # type: ignore[arg-type]
    assert fastpick.scored(_supply_of(other), req) is None            # another policy
    fastpick.remember(policy, req, [2000])   # type: ignore[arg-type]
    assert fastpick.scored(_supply_of(policy), req) == [2000]
    assert fastpick.scored(_supply_of(policy), req) is None           # taken


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_every_pick_with_the_ranking_figures_is_the_plain_pick(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast_pick = fastpick.pick
    picks: list[int] = []

    def both(supply: Any, r: Any, cnt: int, shared: list[int]) -> Any:
        got = fast_pick(supply, r, cnt, shared)
        monkeypatch.setattr(fastpick, "ENABLED", False)
        monkeypatch.setattr(fastslice, "ENABLED", False)
        monkeypatch.setattr(fastscore, "ENABLED", False)   # the supplies' own figures
        try:
            assert shared == [n.free_supply().allocatable_shared_cpu() for n in supply.node.policy.pools]
            if got is not None:
                assert got == supply.pick_exclusive_cpus(r, cnt, dry_run=True)   # the plain pick, no change
                picks.append(cnt)
        finally:
            monkeypatch.setattr(fastpick, "ENABLED", True)
            monkeypatch.setattr(fastslice, "ENABLED", True)
            monkeypatch.setattr(fastscore, "ENABLED", True)
        return got

    monkeypatch.setattr(fastpick, "pick", both)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(41, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0 and sum(1 for c in picks if c > 0) > 10


def _trace(machine: str, seed: int) -> str:
    rn = RuntimeNode(load_machine(str(runs.SHARED / "machines" / machine)), runs.topology_aware().resource,
                     KubeletConfiguration.from_dict(runs.NONE), traced=False)
    rng = random.Random(seed)
    live: list[str] = []
    out: list[Any] = []
    for k in range(80):
        if live and rng.random() < 0.35:
            key = live.pop(rng.randrange(len(live)))
            out.append(["delete", key, rn.delete_pod(key)])
        else:
            doc = runs.pod_doc(rng, runs.TOPOLOGY_AWARE_ANNOTATIONS)
            doc["metadata"].update(name=f"p{k}", uid=f"uid-{k}")
            pod = pod_from_dict(doc)
            refused = rn.create_pod(pod)
            out.append(["create", pod.key, None if refused is None else [refused.reason, refused.message]])
            live.append(pod.key)
        out.append({f"{p.key}/{r.name}": [r.state, to_json(r.ctr.resources()), r.replies, r.owners]
                    for p, r in rn.running()})
        out.append(export(rn, "node"))
    return json.dumps(out, sort_keys=True, default=str)


@pytest.mark.parametrize("machine", runs.MACHINES)
@pytest.mark.parametrize("seed", (5, 6))
def test_random_sequences_give_the_plain_containers_replies_and_exports(machine: str, seed: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _trace(machine, seed)
    monkeypatch.setattr(fastpick, "ENABLED", False)
    plain = _trace(machine, seed)
    assert fast == plain
    assert '"cpus"' in plain


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_every_grant_accounted_by_masks_leaves_the_pools_as_the_plain_walks(machine: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """At every grant with exclusive CPUs of random workloads, the pools' isolated and sharable
    CPUs after the accounting by masks equal those after the plain walks (run from the same
    supplies)."""
    real = fastpick.account_allocate
    seen = [0]

    def both(g: Any) -> None:
        pools = g.node.policy.pools
        before = [(n.freeres.isolated, n.freeres.sharable) for n in pools]
        real(g)
        fast = [(n.freeres.isolated.mask, n.freeres.sharable.mask) for n in pools]
        for n, (iso, sh) in zip(pools, before):
            n.freeres.isolated, n.freeres.sharable = iso, sh
        monkeypatch.setattr(fastpick, "ACCOUNTED", False)
        try:
            g.account_allocate_cpu()
        finally:
            monkeypatch.setattr(fastpick, "ACCOUNTED", True)
        assert [(n.freeres.isolated.mask, n.freeres.sharable.mask) for n in pools] == fast
        seen[0] += 1

    monkeypatch.setattr(fastpick, "account_allocate", both)
    result = runs.run(runs.nodes(machine, 4, runs.topology_aware()),
                      runs.arrivals(23, 150, runs.TOPOLOGY_AWARE_ANNOTATIONS))
    assert runs.placed(result) > 0 and seen[0] > 10


@pytest.mark.parametrize("machine", runs.MACHINES)
def test_random_sequences_accounted_by_masks_give_the_plain_containers_replies_and_exports(
        machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _trace(machine, 7)
    monkeypatch.setattr(fastpick, "ACCOUNTED", False)
    plain = _trace(machine, 7)
    assert fast == plain and '"cpus"' in plain
