"""The RuntimePolicy cases translated from nri-plugins' own tests (tests/runtime/cases/), run
in-process the way ../shared/conformance/run runs them through the CLI: each step a call of
``kubetwin runtime`` continuing from the state folder the previous step wrote, its expectations
checked as exact values or the e2e suites' ``verify`` predicates (FORMAT.md, kind RuntimePolicy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubetwin.runtime.run import RuntimeInputs, run_runtime

CASES = Path(__file__).parent / "cases"
FILES = sorted(p for p in CASES.rglob("*.yaml") if "machines" not in p.parts)


def _cpuset(text: str) -> set[int]:
    out: set[int] = set()
    for part in (text or "").split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _disjoint(*sets: set[int]) -> bool:
    seen: set[int] = set()
    for s in sets:
        if seen & set(s):
            return False
        seen |= set(s)
    return True


_BUILTINS = {"len": len, "set": set, "range": range, "all": all, "any": any, "min": min, "max": max, "sum": sum,
             "sorted": sorted, "frozenset": frozenset, "True": True, "False": False}


def _where(machine: dict) -> dict[int, tuple[int, int, int]]:
    out = {}
    for node in machine["topology"]:
        for core in node.get("cores") or []:
            for cpu in core["thread_ids"]:
                out[cpu] = (node["node_id"], core["socket_id"], core.get("die_id", core["socket_id"]))
    return out


def run_case(path: Path, tmp: Path) -> list[str]:
    case = yaml.safe_load(path.read_text())
    machine = case.get("machine") or json.loads((path.parent / case["machineRef"]).read_text())
    (tmp / "machine.json").write_text(json.dumps(machine))
    (tmp / "policy.yaml").write_text(yaml.safe_dump(case["policy"]))
    where = _where(machine)
    problems = []
    for k, step in enumerate(case["steps"], 1):
        pods = []
        if step.get("create"):
            (tmp / f"step{k}.yaml").write_text(yaml.safe_dump_all(step["create"]))
            pods = [str(tmp / f"step{k}.yaml")]
        out = run_runtime(RuntimeInputs(machine=str(tmp / "machine.json"), policy=str(tmp / "policy.yaml"),
                                        pods=pods, state_dir=str(tmp / "state") if k > 1 else None,
                                        write_state=str(tmp / "state"), delete=list(step.get("delete") or [])))
        got = {}
        for c in out["containers"]:
            got[f"{c['pod']}/{c['name']}"] = c
            got.setdefault(c["name"], c)
        want = step.get("expect") or {}
        for cname, fields in (want.get("containers") or {}).items():
            c = got.get(cname)
            if c is None:
                problems.append(f"step {k}: container {cname} missing")
                continue
            for key, value in fields.items():
                have = c.get(key)
                ok = _cpuset(str(value)) == _cpuset(have or "") if key in ("cpus", "mems") else value == have
                if not ok:
                    problems.append(f"step {k}: {cname}.{key} want {value!r} got {have!r}")
        if "rejected" in want:
            have = {r["pod"] for r in out["rejected"]}
            if set(want["rejected"]) != have:
                problems.append(f"step {k}: rejected want {sorted(want['rejected'])} got {sorted(have)}")
        if want.get("verify"):
            cpus, mems, nodes, packages, dies = {}, {}, {}, {}, {}
            for name, c in got.items():
                cs = _cpuset(c["cpus"])
                cpus[name] = cs
                mems[name] = _cpuset(c["mems"])
                nodes[name] = {where[x][0] for x in cs if x in where}
                packages[name] = {where[x][1] for x in cs if x in where}
                dies[name] = {where[x][2] for x in cs if x in where}
            env = {"__builtins__": _BUILTINS, "cpus": cpus, "mems": mems, "nodes": nodes, "packages": packages,
                   "dies": dies, "disjoint_sets": _disjoint}
            for expr in want["verify"]:
                try:
                    ok = bool(eval(expr, env))  # noqa: S307 - the case's own predicate
                except Exception as exc:  # noqa: BLE001
                    ok, expr = False, f"{expr} ({type(exc).__name__}: {exc})"
                if not ok:
                    problems.append(f"step {k}: verify failed: {expr}; cpus={ {n: sorted(v) for n, v in cpus.items() if '/' not in n} }")
    return problems


def test_there_are_at_least_thirty_topology_aware_cases() -> None:
    assert sum(1 for p in FILES if "topology-aware" in p.parts) >= 30


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CASES)) for p in FILES])
def test_case(path: Path, tmp_path: Path) -> None:
    problems = run_case(path, tmp_path)
    assert not problems, "\n".join(problems)
