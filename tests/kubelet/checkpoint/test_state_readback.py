"""kubetwin reads back every state file it writes (``admit --write-state`` then ``--state-dir``).

After every conformance ``KubeletAdmission`` case (kubelet and memory areas) and after random
admissions, the checkpoints written are read into a new kubelet on the same machine and
configuration — which must start (the kubelet's ``validateState`` checks pass) — and written
again byte for byte the same.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.cli.admit import write_checkpoints
from kubetwin.errors import InputError
from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.checkpoint.cpu_manager_state import cpu_state_from_json, read_cpu_manager_state
from kubetwin.kubelet.checkpoint.device_manager_state import read_device_manager_state
from kubetwin.kubelet.checkpoint.memory_manager_state import memory_state_from_json, read_memory_manager_state
from kubetwin.machine import load_machine
from kubetwin.machine.machineinfo import machine_from_machineinfo
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

SHARED = Path(os.environ.get("KUBETWIN_SHARED", Path(__file__).resolve().parents[3] / ".." / "shared"))
CONFORMANCE = SHARED / "conformance"


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def write_and_read_back(node: NodeAdmission, tmp: Path) -> None:
    """Write ``node``'s checkpoints, start a kubelet from them, and write them again: same bytes."""
    first, second = tmp / "first", tmp / "second"
    write_checkpoints(node, first)
    memory = first / "memory_manager_state"
    warnings: list[str] = []
    again = NodeAdmission(node.machine, node.config, read_cpu_manager_state(first / "cpu_manager_state"),
                          read_memory_manager_state(memory) if memory.exists() else None,
                          devices=node.devices,
                          device_state=read_device_manager_state(
                              first / "device-plugins" / "kubelet_internal_checkpoint", warnings.append))
    assert warnings == []
    write_checkpoints(again, second)
    assert _files(second) == _files(first)


# --- every conformance KubeletAdmission case ---------------------------------------------------------
def _cases() -> list[Path]:
    out = []
    for area in ("kubelet", "memory"):
        for p in sorted((CONFORMANCE / area).rglob("*.yaml")):
            if "bad-input" in p.parts:
                continue
            case = yaml.safe_load(p.read_text())
            if isinstance(case, dict) and case.get("kind") == "KubeletAdmission":
                out.append(p)
    return out


def _machine(case: dict, path: Path):
    if "machine" in case:
        return machine_from_machineinfo(case["machine"], file=str(path))
    return load_machine(str(path.parent / case["machineRef"]))


def _case_kubelet(case: dict, path: Path) -> NodeAdmission | None:
    """The kubelet of a case after its pods, or None when the case expects the kubelet not to start."""
    cfg_obj = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
               **(case.get("kubeletConfig") or {})}
    state = case.get("state") or {}
    try:
        cfg = KubeletConfiguration.from_dict(cfg_obj, file=str(path))
        cpu = cpu_state_from_json(state["cpu_manager_state"]) if "cpu_manager_state" in state else None
        mem = memory_state_from_json(state["memory_manager_state"]) if "memory_manager_state" in state else None
        node = NodeAdmission(_machine(case, path), cfg, cpu, mem)
    except InputError:
        return None
    for pod in case.get("pods") or []:
        node.admit(pod_from_dict(pod))
    return node


@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="the conformance suite (../shared/conformance) is not here")
@pytest.mark.parametrize("path", _cases() if CONFORMANCE.is_dir() else [], ids=lambda p: p.stem)
def test_state_after_a_conformance_case_is_read_back(path, tmp_path):
    node = _case_kubelet(yaml.safe_load(path.read_text()), path)
    if node is None:
        pytest.skip("the case's kubelet does not start (an expected refusal)")
    write_and_read_back(node, tmp_path)


# --- random admissions -------------------------------------------------------------------------------
MACHINE_SPEC = "1s2n4c2t:mem=32Gi:hugepages-2Mi=256"
GI = 1 << 30


def _kubelet(topology: str, scope: str) -> NodeAdmission:
    cfg = KubeletConfiguration.from_dict({
        "cpuManagerPolicy": "static", "memoryManagerPolicy": "Static", "reservedSystemCPUs": "0",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1100Mi"}}],
        "kubeReserved": {"memory": "500Mi"}, "systemReserved": {"memory": "500Mi"},
        "topologyManagerPolicy": topology, "topologyManagerScope": scope})
    return NodeAdmission(load_machine(MACHINE_SPEC), cfg)


def _container(name: str, cpu: int, mem_gi: int, hugepages: int, restart: str | None = None) -> dict:
    r = {"cpu": str(cpu), "memory": f"{mem_gi}Gi"}
    if hugepages:
        r["hugepages-2Mi"] = f"{2 * hugepages}Mi"
    c = {"name": name, "image": "x", "resources": {"requests": dict(r), "limits": dict(r)}}
    if restart:
        c["restartPolicy"] = restart
    return c


@st.composite
def pod(draw, index: int) -> dict:
    """A Guaranteed pod: app containers, regular init containers and sidecars of random sizes."""
    size = st.tuples(st.integers(1, 4), st.integers(1, 12), st.sampled_from([0, 0, 8, 64]))
    inits = [_container(f"i{k}", *draw(size), restart=draw(st.sampled_from([None, None, "Always"])))
             for k in range(draw(st.integers(0, 3)))]
    apps = [_container(f"c{k}", *draw(size)) for k in range(draw(st.integers(1, 3)))]
    spec = {"containers": apps, **({"initContainers": inits} if inits else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{index}", "uid": f"uid-{index}"}, "spec": spec}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(topology=st.sampled_from(["none", "best-effort", "restricted", "single-numa-node"]),
       scope=st.sampled_from(["container", "pod"]), data=st.data())
def test_state_after_random_admissions_is_read_back(topology, scope, data, tmp_path_factory):
    node = _kubelet(topology, scope)
    for i in range(data.draw(st.integers(1, 6))):
        node.admit(pod_from_dict(data.draw(pod(i))))
    write_and_read_back(node, tmp_path_factory.mktemp("state"))
