"""Mistakes a new user makes, across commands (22, nine commands): each is refused with exit status 1 and one message
``error: FILE: PATH: MESSAGE (fix: ...)`` naming the input (a file, or the option), the field and
what to write instead — never a traceback, never a bare message without its fix."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from kubetwin.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(capsys, argv: list[str]) -> tuple[int, str]:
    try:
        main(argv)
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    return status, capsys.readouterr().err


def _edit(src: str, old: str, new: str, dest: Path) -> str:
    text = (EXAMPLES / src).read_text()
    assert old in text, (src, old)
    dest.write_text(text.replace(old, new))
    return str(dest)


KUBELET = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


@dataclass(frozen=True)
class Mistake:
    name: str
    named: str     # the input the message names first
    path: str      # the field path (or option) it names
    fix: str       # a part of the fix it suggests

    def argv(self, tmp: Path) -> list[str]:
        return MISTAKES_ARGV[self.name](tmp)


def _copy_autoscale(tmp: Path) -> Path:
    for f in (EXAMPLES / "autoscale").iterdir():
        (tmp / f.name).write_text(f.read_text())
    return tmp


TWO_PODS = str(EXAMPLES / "runtime/two-pods.yaml")
STATIC = str(EXAMPLES / "runtime/kubelet-static.yaml")

MISTAKES_ARGV = {
    "misspelt KubeletConfiguration field": lambda t: [
        "admit", "--machine", "2s1n8c2t", "--config", _w(t / "kubelet.yaml", KUBELET + "cpuManagerPolcy: static\n"),
        TWO_PODS],
    "KubeletConfiguration value in the wrong case": lambda t: [
        "admit", "--machine", "2s1n8c2t", "--config", _w(t / "kubelet.yaml", KUBELET + "cpuManagerPolicy: Static\n"),
        TWO_PODS],
    "KubeletConfiguration duration with a space": lambda t: [
        "admit", "--machine", "2s1n8c2t", "--config",
        _w(t / "kubelet.yaml", KUBELET + "cpuManagerReconcilePeriod: 10 s\n"), TWO_PODS],
    "KubeletConfiguration number as a string": lambda t: [
        "admit", "--machine", "2s1n8c2t", "--config", _w(t / "kubelet.yaml", KUBELET + 'maxPods: "110"\n'),
        TWO_PODS],
    "bad quantity in a pod": lambda t: [
        "admit", "--machine", "2s1n8c2t", "--config", STATIC,
        _edit("runtime/two-pods.yaml", "memory: 4Gi", "memory: 4GB2", t / "pods.yaml")],
    "misspelt kind": lambda t: [
        "admit", "--machine", "2s1n8c2t", "--config", STATIC,
        _edit("runtime/two-pods.yaml", "kind: Pod", "kind: Pd", t / "pods.yaml")],
    "missing machine file": lambda t: ["admit", "--machine", str(t / "machine.json"), "--config", STATIC, TWO_PODS],
    "a KubeletConfiguration given as the Node": lambda t: [
        "explain", "-f", str(EXAMPLES / "explain/web.yaml"), "--node", str(EXAMPLES / "explain/kubelet.yaml")],
    "wrong --variant key": lambda t: [
        "simulate", "-f", str(EXAMPLES / "autoscale/daily.yaml"), "--no-progress",
        "--variant", "x:kubelet.topologyManagerPolcy=none"],
    "scenario key typo": lambda t: [
        "simulate", "--no-progress",
        "-f", _edit("autoscale/daily.yaml", "  nodeGroups:", "  nodeGroup:", _copy_autoscale(t) / "s.yaml")],
    "scenario duration in days": lambda t: [
        "simulate", "--no-progress",
        "-f", _edit("autoscale/daily.yaml", "horizon: 24h", "horizon: 1day", _copy_autoscale(t) / "s.yaml")],
    "Deployment replicas as a word": lambda t: [
        "simulate", "--no-progress", "-f", _with_objects(t, "web.yaml", "replicas: 4", "replicas: four")],
    "misspelt field of a ResourceClaimTemplate": lambda t: [
        "simulate", "--no-progress", "-f",
        _with_objects(t, "gpu-claims.yaml", "deviceClassName: gpu.example.com", "deviceClassNam: gpu.example.com",
                      scenario="gpu-jobs.yaml")],
    "bad CEL in a DeviceClass": lambda t: [
        "dra", "allocate", "--node", str(EXAMPLES / "dra/node.yaml"), str(EXAMPLES / "dra/claims.yaml"),
        "-f", _edit("dra/objects.yaml", "device.driver == ", "device.driverr == ", t / "objects.yaml")],
    "bad policy CR field": lambda t: [
        "runtime", "--machine", "2s1n8c2t", TWO_PODS, "--policy", _w(t / "policy.yaml", (
            "apiVersion: config.nri/v1alpha1\nkind: TopologyAwarePolicy\nmetadata: {name: default}\n"
            "spec:\n  reservedResources: {cpu: '1'}\n  preferIsolatedCpus: true\n"))],
    "misspelt policy name": lambda t: ["runtime", "--machine", "2s1n8c2t", TWO_PODS, "--policy", "balloon"],
    "misspelt scoring strategy": lambda t: [
        "simulate", "-f", str(EXAMPLES / "autoscale/daily.yaml"), "--no-progress",
        "--variant", "packed:scheduler.scoringStrategy=MostAlocated"],
    "misspelt scheduler plugin": lambda t: [
        "simulate", "-f", str(EXAMPLES / "autoscale/daily.yaml"), "--no-progress", "--scheduler-config",
        _w(t / "sched.yaml", ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                              "profiles:\n- plugins: {score: {disabled: [{name: NodeResourcesBalancedAlocation}]}}\n"))],
    "misspelt feature gate": lambda t: [
        "schedule", "--nodes", str(EXAMPLES / "schedule/nodes.yaml"), "--feature-gates", "PodLevelResource=true",
        str(EXAMPLES / "schedule/pod.yaml")],
    "unmodelled Kubernetes version": lambda t: [
        "--kubernetes-version", "1.99", "admit", "--machine", "2s1n8c2t", "--config", STATIC, TWO_PODS],
    "misspelt plan node-type key": lambda t: [
        "plan", str(EXAMPLES / "plan/web.yaml"), "--no-progress", "--node-type", "numa=1s2n4c2t,prize=1"],
    "eviction timeline step in words": lambda t: [
        "evict", "--config", str(EXAMPLES / "evict/kubelet.yaml"), str(EXAMPLES / "evict/pods.yaml"),
        "--timeline", _edit("evict/timeline.yaml", "after: 0s", "after: 10 seconds", t / "timeline.yaml")],
}


def _w(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def _with_objects(tmp: Path, objects: str, old: str, new: str, scenario: str = "daily.yaml") -> str:
    _copy_autoscale(tmp)
    _edit(f"autoscale/{objects}", old, new, tmp / objects)
    return str(tmp / scenario)


MISTAKES = [
    Mistake("misspelt KubeletConfiguration field", "kubelet.yaml", 'unknown field "cpuManagerPolcy"',
            'did you mean "cpuManagerPolicy"?'),
    Mistake("KubeletConfiguration value in the wrong case", "kubelet.yaml", "cpuManagerPolicy", "none, static"),
    Mistake("KubeletConfiguration duration with a space", "kubelet.yaml", "cpuManagerReconcilePeriod",
            '"1h30m"'),
    Mistake("KubeletConfiguration number as a string", "kubelet.yaml", '"maxPods"', 'write "maxPods" as an integer'),
    Mistake("bad quantity in a pod", "pods.yaml", "spec.containers[0].resources.requests.memory", '"1Gi"'),
    Mistake("misspelt kind", "pods.yaml", "kind", 'did you mean "Pod"?'),
    Mistake("missing machine file", "machine.json", "no such file", "a spec like"),
    Mistake("a KubeletConfiguration given as the Node", "kubelet.yaml", "kind", "this input takes Node objects"),
    Mistake("wrong --variant key", "--variant[0]", "kubelet.topologyManagerPolcy",
            'did you mean "kubelet.topologyManagerPolicy"?'),
    Mistake("scenario key typo", "s.yaml", '"spec.nodeGroup"', 'did you mean "spec.nodeGroups"?'),
    Mistake("scenario duration in days", "s.yaml", "spec.horizon", '"24h"'),
    Mistake("Deployment replicas as a word", "web.yaml", '"spec.replicas"', 'write "spec.replicas" as an integer'),
    Mistake("misspelt field of a ResourceClaimTemplate", "gpu-claims.yaml", "exactly.deviceClassNam",
            'exactly.deviceClassName"?'),
    Mistake("bad CEL in a DeviceClass", "objects.yaml", "spec.selectors[0].cel.expression",
            'did you mean "driver"?'),
    Mistake("bad policy CR field", "policy.yaml", '"spec.preferIsolatedCpus"',
            'did you mean "spec.preferIsolatedCPUs"?'),
    Mistake("misspelt policy name", "balloon", "not a policy name", 'did you mean "balloons"?'),
    Mistake("misspelt scoring strategy", "--variant[0].scheduler.scoringStrategy", '"MostAlocated"',
            'did you mean "MostAllocated"?'),
    Mistake("misspelt scheduler plugin", "sched.yaml", "profiles[0].plugins.score.disabled[0].name",
            'did you mean "NodeResourcesBalancedAllocation"?'),
    Mistake("misspelt feature gate", "--feature-gates.PodLevelResource", "PodLevelResource",
            'did you mean "PodLevelResources"?'),
    Mistake("unmodelled Kubernetes version", "--kubernetes-version", "1.99", "use one of"),
    Mistake("misspelt plan node-type key", "--node-type[0].prize", "prize", 'did you mean "price"?'),
    Mistake("eviction timeline step in words", "timeline.yaml", "[0].after", '"90s"'),
]


def test_every_mistake_has_its_command():
    assert {m.name for m in MISTAKES} == set(MISTAKES_ARGV) and len(MISTAKES) >= 15


@pytest.mark.parametrize("mistake", MISTAKES, ids=lambda m: m.name)
def test_a_mistake_is_refused_naming_input_field_and_fix(mistake: Mistake, tmp_path, capsys):
    status, err = _run(capsys, mistake.argv(tmp_path))
    assert status == 1, err
    assert "Traceback" not in err
    text = err.strip()
    errors = [line for line in text.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, text
    text = text[text.index("error: "):]
    m = re.fullmatch(r"error: (\S+?): (.+) \(fix: (.+)\)", text, re.S)
    assert m is not None, text
    assert m.group(1).endswith(mistake.named), text
    assert mistake.path in m.group(2), text
    assert mistake.fix in m.group(3), text
