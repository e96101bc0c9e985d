"""The balloons policy's pinning fast path (``kubetwin.runtime.policies.balloons.fastpin``) and the
fill-method chain on remembered sums (``fast.REMEMBER_REQUESTS``) answer as the plain policy:
whole runs of random balloon types (min/max CPUs and balloons, preferNewBalloons,
preferSpreadingPods, per-namespace balloons, CPU classes, hidden hyperthreads, memory pinning,
shared idle CPUs, groups) and random pods (QoS classes, sizes, namespaces, the balloon,
hide-hyperthreads, memory-type and memory.preserve annotations) on conformance machines, with
reserved and isolated CPUs — every NRI event and reply, container, pool and export after every
step, with each switch on and off."""

from __future__ import annotations

import random
from typing import Any, Iterator

import pytest

from kubetwin.model.cpuset import CPUSet
from kubetwin.model.pod import pod_from_dict
from kubetwin.runtime.policies.balloons import fast, fastpin
from kubetwin.runtime.sysfs import System

from .test_fast import MACHINE_FILES, NAMESPACES, _machine, _policy_doc, _run

SWITCHES = [(True, True), (True, False), (False, True)]


def _pod(rng: random.Random, k: int, type_names: list[str]) -> Any:
    """As ``test_fast._pod``, with more annotations (memory.preserve among them) and
    BestEffort/Burstable containers beside Guaranteed ones."""
    qos = rng.choice(("guaranteed", "guaranteed", "burstable", "burstable", "besteffort"))
    containers = []
    for j in range(rng.choice((1, 1, 2, 3))):
        res: dict[str, Any] = {}
        if qos != "besteffort":
            cpu = rng.choice(("100m", "250m", "500m", "1", "1", "2", "3"))
            res = {"requests": {"cpu": cpu, "memory": rng.choice(("64Mi", "256Mi", "1Gi", "4Gi"))}}
            if qos == "guaranteed":
                res["limits"] = dict(res["requests"])
            elif rng.random() < 0.3:
                res["limits"] = {"cpu": "4", "memory": "8Gi"}
        containers.append({"name": f"c{j}", "resources": res})
    meta: dict[str, Any] = {"name": f"p{k}", "uid": f"uid-{k}", "namespace": rng.choice(NAMESPACES)}
    if rng.random() < 0.4:
        meta["labels"] = {"app": rng.choice(("a", "b")), "tier": rng.choice(("web", "db"))}
    ann: dict[str, str] = {}
    if rng.random() < 0.2:
        ann["balloon.balloons.resource-policy.nri.io"] = rng.choice(type_names + ["default"])
    if rng.random() < 0.15:
        key = rng.choice(("hide-hyperthreads.resource-policy.nri.io",
                          "hide-hyperthreads.resource-policy.nri.io/container.c0"))
        ann[key] = rng.choice(("true", "false", "1", "bad"))
    if rng.random() < 0.08:
        ann["memory-type.resource-policy.nri.io"] = rng.choice(("dram", "pmem", "hbm", "dram,pmem"))
    if rng.random() < 0.04:
        ann["memory.preserve.resource-policy.nri.io"] = rng.choice(("true", "false"))
    if ann:
        meta["annotations"] = ann
    return pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": containers}})


def _steps(rng: random.Random, count: int, type_names: list[str]) -> Iterator[tuple[str, Any]]:
    live: list[str] = []
    for k in range(count):
        if live and rng.random() < 0.3:
            yield "delete", live.pop(rng.randrange(len(live)))
        pod = _pod(rng, k, type_names)
        live.append(pod.key)
        yield "create", pod


def _switched(pin: bool, remember: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastpin, "ENABLED", pin)
    monkeypatch.setattr(fast, "REMEMBER_REQUESTS", remember)


@pytest.mark.parametrize("pin,remember", SWITCHES)
@pytest.mark.parametrize("machine", MACHINE_FILES)
@pytest.mark.parametrize("seed", range(3))
def test_random_runs_pin_and_fill_as_the_plain_policy(machine: str, seed: int, pin: bool, remember: bool,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    m = _machine(machine)
    rng = random.Random(f"fastpin/{machine}/{seed}")
    cpus = System(m).cpu_set.size()
    doc = _policy_doc(rng, cpus)
    names = [bt["name"] for bt in doc["spec"]["balloonTypes"]]
    isolated = CPUSet([cpus - 1]) if rng.random() < 0.3 else CPUSet()
    steps = list(_steps(rng, 40, names))
    plain = _run(m, doc, steps, isolated, False, monkeypatch)
    _switched(pin, remember, monkeypatch)
    quick = _run(m, doc, steps, isolated, True, monkeypatch)
    assert len(quick) == len(plain)
    for i, (a, b) in enumerate(zip(plain, quick)):
        assert b == a, f"step {i}: {steps[i][0]} {getattr(steps[i][1], 'key', steps[i][1])}"


@pytest.mark.parametrize("pin,remember", SWITCHES)
@pytest.mark.parametrize("machine", MACHINE_FILES[:3])
def test_the_charts_policy_pins_and_fills_as_the_plain_policy(machine: str, pin: bool, remember: bool,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # simulate's policy: Guaranteed pods in balloons of their own, the others in two balloons
    # sharing the idle CPUs of their package (re-pinned whenever another balloon inflates)
    from kubetwin.runtime.config import load_policy

    m = _machine(machine)
    doc = {"apiVersion": "config.nri/v1alpha1", "kind": "BalloonsPolicy", "metadata": {"name": "default"},
           "spec": load_policy("balloons").spec}
    steps = list(_steps(random.Random(f"chart/{machine}"), 60, []))
    plain = _run(m, doc, steps, CPUSet(), False, monkeypatch)
    _switched(pin, remember, monkeypatch)
    quick = _run(m, doc, steps, CPUSet(), True, monkeypatch)
    assert quick == plain
    assert any('"cpuset_mems"' in s or '"mems"' in s for s in quick)


def test_shares_are_the_kubelets_shares_remembered() -> None:
    from kubetwin.runtime.kubernetes import milli_cpu_to_shares

    for milli in (0, 1, 2, 100, 999, 1000, 1500, 262144000):
        assert fastpin.shares(milli) == milli_cpu_to_shares(milli)
        assert fastpin.shares(milli) == milli_cpu_to_shares(milli)
