"""Every command's output, in every format, is plain: no Python repr, no YAML anchors.

A table cell like ``{'nodeSelectorTerms': [...]}`` or a YAML ``&id001`` anchor is an
implementation detail leaking out; `-o json` must be JSON and `-o yaml` plain YAML. Each command
(and each subcommand of a group) is run here on the shipped examples in each of its formats; a
command without an entry in :data:`RUNS` fails :func:`test_every_command_has_its_outputs_checked`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
import yaml

from kubetwin.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"

POD_WITH_CLAIM = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml, uid: 1f1e1d1c-0000-4000-8000-000000000001}
spec:
  resourceClaims:
  - {name: gpus, resourceClaimName: training}
  containers:
  - name: app
    image: registry.example.com/train:1
    resources:
      claims: [{name: gpus}]
"""

TIMELINE = """\
- after: 0s
  summary: {node: {nodeName: n, memory: {availableBytes: 50000000, workingSetBytes: 4000000000}}, pods: []}
"""

#: command path -> argument lists (formats are added by the test); {tmp} is a scratch folder
RUNS: dict[str, list[list[str]]] = {
    "runtime": [["--machine", "2s2n8c2t", "--policy", "topology-aware", f"{EX}/nri/pods.yaml"],
                ["--machine", "2s2n8c2t", "--policy", "none", "--plugin", f"{EX}/nri/numa_spread.py",
                 f"{EX}/nri/pods.yaml"]],
    "explain": [["-f", f"{EX}/explain/web.yaml", "--node", f"{EX}/explain/node.yaml",
                 "--config", f"{EX}/explain/kubelet.yaml"]],
    "discover": [[]],
    "topology": [["2s2n4c2t:mem=64Gi:gpus=2"]],
    "admit": [["--machine", f"{EX}/pod-level/machine.json", "--config", f"{EX}/pod-level/kubelet-pod-scope.yaml",
               "--explain", f"{EX}/pod-level/tightly-coupled-database.yaml"],
              ["--machine", f"{EX}/pod-level/machine.json", "--config",
               f"{EX}/pod-level/kubelet-container-scope.yaml", "-f", f"{EX}/admit/numa-conflict.yaml"],
              ["--machine", "1s1n4c1t:mem=8Gi", "--config", f"{EX}/resize/kubelet.yaml", "-f", f"{EX}/resize/pods.yaml",
               "--resize", f"web={EX}/resize/grow-web.yaml", "--resize", f"db={EX}/resize/grow-db.yaml"]],
    "schedule": [["--nodes", f"{EX}/schedule/nodes.yaml", "--pods", f"{EX}/schedule/running.yaml",
                  f"{EX}/schedule/pod.yaml"],
                 ["--nodes", f"{EX}/schedule/nodes.yaml", "--plugin", "NodeResourcesFit", f"{EX}/schedule/pod.yaml"]],
    "dra allocate": [["-f", f"{EX}/dra/objects.yaml", "--node", f"{EX}/dra/node.yaml", f"{EX}/dra/claims.yaml"],
                     ["-f", f"{EX}/dra/objects.yaml", "--node", f"{EX}/dra/node.yaml",
                      f"{EX}/dra/claims-too-many.yaml"],
                     ["-f", f"{EX}/dra/objects.yaml", "-f", f"{EX}/dra/claims.yaml", "--node",
                      f"{EX}/dra/node.yaml", "--pod", "{tmp}/pod.yaml"]],
    "dra explain": [["-f", f"{EX}/dra/objects.yaml", "--node", f"{EX}/dra/node.yaml",
                     f"{EX}/dra/claims-too-many.yaml"]],
    "dra prepare": [["-f", "{tmp}/allocated.yaml", "--node", f"{EX}/dra/node.yaml", "{tmp}/pod.yaml"]],
    "dra unprepare": [["-f", "{tmp}/allocated.yaml", "{tmp}/pod.yaml"]],
    "dra slices": [["--machine", "2s2n4c2t:gpus=2", "--driver", "gpu.example.com", "--partitions", "2"]],
    "evict": [["--signal", "memory.available", "--summary", f"{EX}/evict/summary.json", "--oom",
               f"{EX}/evict/pods.yaml"],
              ["--timeline", "{tmp}/timeline.yaml", "-f", f"{EX}/evict/pods.yaml"]],
    "gates": [["--changed"]],
    # -o names the folder it writes (no output format): checked in tests/sim/test_snapshot.py
    "snapshot": [["-f", f"{EX}/snapshot", "-o", "{tmp}/snapshot"]],
    "simulate": [["-f", "{tmp}/scenario.yaml", "--pods", "--no-progress"]],
    "plan": [[f"{EX}/plan/web.yaml", "--node-type", f"numa=1s2n4c2t:mem=64Gi,kubelet={EX}/plan/kubelet-numa.yaml",
              "--no-progress"]],
    # -o is the format of what --check prints (serving runs until stopped: tests/serve)
    "serve": [["--cluster", "{tmp}/scenario.yaml", "--check"]],
}

SCENARIO = {"apiVersion": "kubetwin.io/v1alpha1", "kind": "Simulation", "metadata": {"name": "plain"},
            "spec": {"nodeGroups": [{"name": "n", "count": 1, "machine": "1s2n4c2t",
                                     "kubeletConfig": {"cpuManagerPolicy": "static",
                                                       "topologyManagerPolicy": "single-numa-node",
                                                       "kubeReserved": {"cpu": "1"}}}],
                     "workloads": [{"name": "w", "count": 4, "arrival": {"interval": "10s"},
                                    "template": {"spec": {"containers": [{"name": "c", "resources": {
                                        "requests": {"cpu": "3", "memory": "1Gi"},
                                        "limits": {"cpu": "3", "memory": "1Gi"}}}]}}}]}}

#: Python reprs and YAML anchors: never in output
LEAKS = [
    (re.compile(r"\{'[^']*': "), "a Python dict repr"),
    (re.compile(r"\['[^']*'[,\]]"), "a Python list repr"),
    (re.compile(r"(^|\s)[&*]id\d{3}\b", re.M), "a YAML anchor or alias"),
    (re.compile(r"<[\w.]+ object at 0x[0-9a-f]+>"), "a Python object repr"),
    (re.compile(r"\b[A-Z][A-Za-z]+\((?:[a-z_]+=|'|\")"), "a dataclass / named tuple repr"),
    (re.compile(r"\b(?:frozenset|dict_items|dict_keys|mappingproxy)\("), "a Python container repr"),
]


def _commands() -> list[str]:
    out = []
    ctx = click.Context(cli_main.cli)
    for name in cli_main.cli.list_commands(ctx):
        cmd = cli_main.cli.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            out += [f"{name} {sub}" for sub in cmd.list_commands(ctx)]
        else:
            out.append(name)
    return out


def _formats(path: str) -> list[str]:
    ctx = click.Context(cli_main.cli)
    cmd: click.Command | None = cli_main.cli
    for part in path.split():
        cmd = cmd.get_command(ctx, part) if isinstance(cmd, click.Group) else None
    assert cmd is not None
    opt = next(p for p in cmd.params if "-o" in getattr(p, "opts", ()))
    if not isinstance(opt.type, click.Choice):  # snapshot: -o is the folder written, not a format
        return []
    return list(opt.type.choices)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("plain")
    (tmp / "pod.yaml").write_text(POD_WITH_CLAIM)
    (tmp / "timeline.yaml").write_text(TIMELINE)
    (tmp / "scenario.yaml").write_text(yaml.safe_dump(SCENARIO))
    from click.testing import CliRunner

    got = CliRunner().invoke(cli_main.cli, ["dra", "allocate", "-f", f"{EX}/dra/objects.yaml", "-f",
                                            f"{EX}/dra/claims.yaml", "--node", f"{EX}/dra/node.yaml",
                                            "--pod", str(tmp / "pod.yaml"), "-o", "json"])
    assert got.exit_code == 0, got.output
    (tmp / "allocated.yaml").write_text(yaml.safe_dump_all(json.loads(got.stdout)["claims"]))
    return tmp


def _run(args: list[str]) -> tuple[int, str, str]:
    from click.testing import CliRunner

    result = CliRunner().invoke(cli_main.cli, args)
    return result.exit_code, result.stdout, result.stderr if result.stderr_bytes is not None else ""


#: (command, run, format) that is refused by design, with where the refusal is tested
REFUSED = {("runtime", 1, "nrt"): "--policy none publishes no NodeResourceTopology (tests/runtime/test_nrt.py)"}
CASES = [(path, i, fmt) for path, runs in RUNS.items() for i in range(len(runs)) for fmt in _formats(path)
         if (path, i, fmt) not in REFUSED]


@pytest.mark.parametrize("path,index,fmt", CASES, ids=[f"{p}#{i}-o{f}" for p, i, f in CASES])
def test_output_is_plain(path: str, index: int, fmt: str, scratch: Path, tmp_path: Path):
    if path == "discover" and not Path("/sys/devices/system/cpu").is_dir():
        pytest.skip("no sysfs on this machine")
    args = [a.replace("{tmp}", str(scratch)) for a in RUNS[path][index]]
    if path == "dra prepare":  # writes its checkpoint: a fresh state folder per run
        state = tmp_path / "state"
        state.mkdir()
        args += ["--state-dir", str(state)]
    if path == "dra unprepare":  # unprepares what a prepare into a fresh state folder left
        state = tmp_path / "state"
        state.mkdir()
        code, _, err = _run(["dra", "prepare", "-f", str(scratch / "allocated.yaml"), "--node", f"{EX}/dra/node.yaml",
                             "--state-dir", str(state), str(scratch / "pod.yaml")])
        assert code == 0, err
        args += ["--state-dir", str(state)]
    code, out, err = _run(path.split() + args + ["-o", fmt])
    assert code == 0, f"{path} {' '.join(args)} -o {fmt}: exit {code}\n{out[-1500:]}\n{err[-1500:]}"
    assert out.strip(), "no output"
    for pattern, what in LEAKS:
        m = pattern.search(out)
        assert m is None, f"{what} in `{path} -o {fmt}`: ...{out[max(0, m.start() - 80):m.end() + 80]}..."
    if fmt == "json" or (path == "topology" and fmt == "machineinfo"):
        json.loads(out)
    elif fmt in ("yaml", "nrt"):
        list(yaml.safe_load_all(out))


def test_every_command_has_its_outputs_checked():
    missing = [c for c in _commands() if c not in RUNS]
    assert not missing, f"add an entry to RUNS for: {missing}"


def test_yaml_output_repeats_shared_values_instead_of_anchoring_them():
    from kubetwin.cli.common import to_yaml

    shared = {"a": 1}
    text = to_yaml({"x": shared, "y": shared, "z": [shared, shared]})
    assert "&" not in text and "*" not in text
    assert yaml.safe_load(text) == {"x": {"a": 1}, "y": {"a": 1}, "z": [{"a": 1}, {"a": 1}]}


def test_a_structure_in_a_text_line_is_written_as_json():
    from kubetwin.cli.common import inline

    assert inline({"nodeSelectorTerms": [{"matchFields": []}]}) == '{"nodeSelectorTerms": [{"matchFields": []}]}'


def test_leak_patterns_catch_what_they_are_for():
    samples = {"{'nodeSelectorTerms': []}": 0, "['a', 'b']": 1, "x: &id001\n": 2,
               "<kubetwin.x.Y object at 0x7f00aa>": 3, "Quantity('1')": 4, "Check(name='x')": 4,
               "frozenset({1})": 5}
    for text, index in samples.items():
        assert LEAKS[index][0].search(text), text
    assert not any(p.search('nodeSelector: field metadata.name in (node-1)') for p, _ in LEAKS)


def test_html_report_is_plain(scratch: Path, tmp_path: Path):
    import html

    report = tmp_path / "r.html"
    code, out, err = _run(["simulate", "-f", str(scratch / "scenario.yaml"), "--variant", "x:kubelet.cpuManagerPolicy=none",
                           "-j", "1", "--no-progress", "--report", str(report)])
    assert code == 0, out + err
    text = html.unescape(re.sub(r"<[^>]+>", " ", report.read_text()))
    for pattern, what in LEAKS:
        m = pattern.search(text)
        assert m is None, f"{what} in the HTML report: ...{text[max(0, m.start() - 80):m.end() + 80]}..."
