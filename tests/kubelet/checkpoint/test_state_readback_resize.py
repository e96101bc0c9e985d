"""State files written after in-place resizes are read back (``admit --resize ... --write-state``).

Random admissions, then random resizes through the kubelet's allocation manager (with the
``InPlacePodVerticalScalingExclusiveCPUs`` / ``ExclusiveMemory`` gates on, so Guaranteed resizes
reach the static CPU and Memory Managers): the checkpoints must start a new kubelet and be
written again byte for byte the same (:func:`test_state_readback.write_and_read_back`).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetwin.kubelet.admission import NodeAdmission
from kubetwin.kubelet.resize import ResizeManager
from kubetwin.machine import load_machine
from kubetwin.model.kubelet_config import KubeletConfiguration
from kubetwin.model.pod import pod_from_dict

from .test_state_readback import MACHINE_SPEC, write_and_read_back


def _kubelet(topology: str) -> NodeAdmission:
    cfg = KubeletConfiguration.from_dict({
        "cpuManagerPolicy": "static", "memoryManagerPolicy": "Static", "reservedSystemCPUs": "0",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1100Mi"}}],
        "kubeReserved": {"memory": "500Mi"}, "systemReserved": {"memory": "500Mi"},
        "topologyManagerPolicy": topology,
        "featureGates": {"InPlacePodVerticalScalingExclusiveCPUs": True,
                         "InPlacePodVerticalScalingExclusiveMemory": True}})
    return NodeAdmission(load_machine(MACHINE_SPEC), cfg)


def _pod(index: int, cpu: int, mem_gi: int, guaranteed: bool) -> dict:
    r = {"cpu": str(cpu), "memory": f"{mem_gi}Gi"}
    res = {"requests": dict(r), "limits": dict(r) if guaranteed else {}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{index}", "uid": f"uid-{index}"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": res}]}}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(topology=st.sampled_from(["none", "best-effort", "restricted"]), data=st.data())
def test_state_after_random_resizes_is_read_back(topology, data, tmp_path_factory):
    node = _kubelet(topology)
    shapes = {}
    for i in range(data.draw(st.integers(1, 5))):
        shape = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 8)), data.draw(st.booleans()))
        if node.admit(pod_from_dict(_pod(i, *shape))).admitted:
            shapes[i] = shape
    manager = ResizeManager(node)
    for _ in range(data.draw(st.integers(1, 4))):
        if not shapes:
            break
        i = data.draw(st.sampled_from(sorted(shapes)))
        _, _, guaranteed = shapes[i]
        manager.request(pod_from_dict(_pod(i, data.draw(st.integers(1, 6)), data.draw(st.integers(1, 12)),
                                           guaranteed)))
    write_and_read_back(node, tmp_path_factory.mktemp("state"))
