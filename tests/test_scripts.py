"""scripts/conformance.py: the conformance run selected by -k and paths, with progress."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FAKE_RUNNER = '''#!/usr/bin/env python3
import sys
from pathlib import Path
args = [a for a in sys.argv[1:] if a != "--verbose"]
names = []
for a in args:
    p = Path(a)
    names += [p] if p.is_file() else sorted(p.rglob("*.yaml"))
for p in names:
    print(("FAIL " if "bad" in p.name else "ok   ") + p.stem)
print(f"conformance: {sum('bad' not in p.name for p in names)} passed, {sum('bad' in p.name for p in names)} failed")
sys.exit(1 if any("bad" in p.name for p in names) else 0)
'''


def suite(tmp: Path, names: dict[str, str]) -> Path:
    conf = tmp / "shared" / "conformance"
    for rel, kind in names.items():
        f = conf / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"kind: {kind}\nname: {f.stem}\n")
    (conf / "machines").mkdir(exist_ok=True)
    (conf / "machines" / "m.yaml").write_text("not a case\n")
    run = conf / "run"
    run.write_text(FAKE_RUNNER)
    run.chmod(0o755)
    return tmp / "shared"


def conformance(shared: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, KUBETWIN_SHARED=str(shared))
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "conformance.py"), *args], env=env,
                          capture_output=True, text=True, timeout=60)


def test_k_selects_cases_by_path_or_name_with_pytest_syntax(tmp_path):
    shared = suite(tmp_path, {"dra/alloc-one.yaml": "DRAAllocation", "dra/alloc-two.yaml": "DRAAllocation",
                              "kubelet/cpu-one.yaml": "KubeletAdmission"})
    out = conformance(shared, "-k", "one and not kubelet")
    assert out.returncode == 0, out.stderr
    assert "running 1 conformance case(s) matching -k 'one and not kubelet'" in out.stdout
    assert "conformance: 1 passed, 0 failed" in out.stdout


def test_paths_select_cases_and_machine_files_are_not_cases(tmp_path):
    shared = suite(tmp_path, {"dra/a.yaml": "DRAAllocation", "kubelet/b.yaml": "KubeletAdmission"})
    out = conformance(shared, str(shared / "conformance" / "kubelet"))
    assert "running 1 conformance case(s)" in out.stdout and "1 passed" in out.stdout


def test_no_matching_case_runs_nothing_and_passes(tmp_path):
    shared = suite(tmp_path, {"dra/a.yaml": "DRAAllocation"})
    out = conformance(shared, "-k", "nothing-like-this")
    assert out.returncode == 0 and "no case matches" in out.stdout


def test_progress_is_shown_and_failures_fail_the_run(tmp_path):
    cases = {f"dra/c{i:03d}.yaml": "DRAAllocation" for i in range(120)}
    cases["dra/z-bad.yaml"] = "DRAAllocation"
    out = conformance(suite(tmp_path, cases))
    assert out.returncode == 1
    assert "conformance: 50/121" in out.stdout and "conformance: 100/121" in out.stdout
    assert "FAIL z-bad" in out.stdout and "1 failed" in out.stdout
