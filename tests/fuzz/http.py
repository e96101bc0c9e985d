"""Hostile requests to ``kubetwin serve``'s HTTP API: each POST endpoint's valid body mutated as
the CLI's inputs are (``mutations.py``: unknown, misspelt and retyped fields, extreme numbers,
duplicated keys, broken text, ...), plus requests no client should send (no body, a body that
is not JSON or not UTF-8, an array for an object, deep nesting, odd names in the path).

    .venv/bin/python -m tests.fuzz.http --cases 2000 --seed 101

The oracle: every answer is a JSON object; a refusal is a 4xx naming the problem (``error``);
never a 500 (an exception that escaped: a traceback), a 503 from the request's time limit (a
hang), an answer to a known-invalid body, or a 404 to a POST whose body names nothing missing.
The app runs in this process (``fastapi.testclient``) over the serve tests' small clusters.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .mutations import STRUCTURAL, TEXTUAL, NotApplicable


def _pod(name: str, cpu: str) -> dict[str, Any]:
    res = {"requests": {"cpu": cpu, "memory": "1Gi"}, "limits": {"cpu": cpu, "memory": "1Gi"}}
    return {"metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": res}]}}


def _claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


#: (cluster, path, a valid body): "base" is the serve tests' NUMA cluster, "dra" the GPU one
SEEDS: list[tuple[str, str, Any]] = [
    ("base", "/api/v1/schedule", {"pod": _pod("p", "2")}),
    ("base", "/api/v1/admit", {"node": "numa-1", "pods": [_pod("a", "2"), _pod("b", "1")]}),
    ("base", "/api/v1/explain", {"node": "numa-1", "pod": _pod("a", "2")}),
    ("base", "/api/v1/runtime", {"node": "numa-1", "policy": "topology-aware", "pods": [_pod("r", "1")]}),
    ("base", "/extender/filter", {"Pod": _pod("p", "2"), "NodeNames": ["numa-0", "numa-1", "plain-0"]}),
    ("base", "/extender/prioritize", {"Pod": _pod("p", "2"), "NodeNames": ["numa-1", "plain-0"]}),
    ("base", "/extender/preempt", {"Pod": _pod("p", "4"), "NodeNameToMetaVictims": {
        "numa-0": {"Pods": [{"UID": "running-uid"}], "NumPDBViolations": 1}}}),
    ("base", "/extender/bind", {"PodName": "waiting", "PodNamespace": "default", "PodUID": "waiting-uid",
                                "Node": "numa-1"}),
    ("dra", "/api/v1/dra", {"node": "gpu-0", "claims": [_claim("x")]}),
]
#: GET paths with odd names: each must be a 404 or an answer, never a 500
ODD_NAMES = ["..", "%2e%2e", "a%00b", "x" * 5000, "%ff%fe", "numa-0%20", "NUMA-0", "default/../running", "１", "%"]


@dataclass(frozen=True)
class Request:
    cluster: str
    method: str
    path: str
    body: bytes | None
    known_invalid: bool
    what: str
    headers: tuple[tuple[str, str], ...] = (("content-type", "application/json"),)


def _hostile(rng: random.Random, body: Any) -> tuple[bytes, bool, str]:
    """A body no client should send."""
    raw = json.dumps(body).encode()
    choices: list[tuple[bytes, bool, str]] = [
        (b"", True, "no body"), (b"null", True, "null"), (b"[]", True, "an array"), (b'"pod"', True, "a string"),
        (raw[: len(raw) // 2], True, "cut in half"), (b"\xff\xfe" + raw, True, "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, True, "nested 100,000 deep"),
        (b'{"a": NaN}', True, "NaN"), (b"{" + b'"k": 1, ' * 200_000 + b'"k": 2}', True, "200,000 duplicate keys"),
        (json.dumps([body] * 2).encode(), True, "the body twice in an array"),
        (raw.replace(b"{", b"{\n", 1) + b"\n\n", False, "trailing lines"),
    ]
    return rng.choice(choices)


def generate(number: int, base_seed: int) -> Request:
    rng = random.Random(f"http:{base_seed}:{number}")
    r = rng.random()
    if r < 0.08:
        kind = rng.choice(["nodes", "pods", "simulations", "delete-simulation"])
        name = rng.choice(ODD_NAMES)
        if kind == "nodes":
            return Request("base", "GET", f"/api/v1/nodes/{name}", None, False, f"GET node {name[:40]!r}")
        if kind == "pods":
            return Request("base", "GET", f"/api/v1/pods/{name}/{rng.choice(ODD_NAMES)}", None, False,
                           f"GET pod {name[:40]!r}")
        method = "GET" if kind == "simulations" else "DELETE"
        return Request("base", method, f"/api/v1/simulations/{name}", None, False, f"{method} job {name[:40]!r}")
    cluster, path, body = rng.choice(SEEDS)
    body = json.loads(json.dumps(body))
    if r < 0.25:
        data, known, what = _hostile(rng, body)
        headers = (("content-type", rng.choice(["application/json", "text/plain", "application/x-www-form-urlencoded"])),)
        return Request(cluster, "POST", path, data, known, f"{path} {what}", headers)
    for _ in range(20):
        name = rng.choice([*STRUCTURAL, *TEXTUAL])
        try:
            if name in TEXTUAL:
                data, known, detail = TEXTUAL[name](rng, json.dumps(body, indent=1).encode())
            else:
                docs, known, detail = STRUCTURAL[name](rng, [body])
                if name == "wrong-kind" and len(docs) != 1:
                    continue
                data = json.dumps(docs[0]).encode()
        except (NotApplicable, UnicodeDecodeError, ValueError, RecursionError):
            continue
        return Request(cluster, "POST", path, data, known, f"{path} {name}: {detail[:80]}")
    return Request(cluster, "POST", path, json.dumps(body).encode(), False, f"{path} unchanged")


@dataclass
class Failure:
    kind: str
    request: Request
    detail: str


def judge(req: Request, status: int, body: bytes, seconds: float, timeout: float) -> Failure | None:
    if seconds > timeout:
        return Failure("hang", req, f"{seconds:.1f}s")
    try:
        data = json.loads(body) if body else None
    except ValueError:
        return Failure("not-json", req, f"{status}: {body[:200]!r}")
    if status >= 500:
        kind = "hang" if status == 503 and "time" in str(data) else "internal"
        return Failure(kind, req, f"{status}: {str(data)[:300]}")
    if not isinstance(data, (dict, list)):
        return Failure("not-json", req, f"{status}: {body[:200]!r}")
    if status >= 400:
        if status == 404 and req.method != "POST" and data == {"detail": "Not Found"}:
            return None   # no route matched (the router's own answer)
        # the extender protocol's results carry upstream's "Error" field
        if not isinstance(data, dict) or not (data.get("error") or (req.path.startswith("/extender/")
                                                                    and data.get("Error"))):
            return Failure("bad-error", req, f"{status}: {str(data)[:300]}")
        if status == 404 and req.method == "POST" and "served cluster" not in str(data.get("error")):
            return Failure("lookup-404", req, f"{status}: {str(data)[:300]}")   # a LookupError escaped
        return None
    if req.known_invalid:
        return Failure("answered-invalid", req, f"{status}: {str(data)[:300]}")
    return None


def clients(folder: Path) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from kubetwin.serve.app import create_app
    from kubetwin.serve.cluster import load_cluster
    from kubetwin.serve.limits import ServeLimits

    from ..serve.cluster_fixture import write_scenario
    from ..serve.dra_fixture import SCENARIO as DRA

    dra = folder / "dra.yaml"
    dra.write_text(DRA)
    limits = ServeLimits(request_timeout=30.0)
    return {"base": TestClient(create_app(load_cluster([str(write_scenario(folder))]), limits),
                               raise_server_exceptions=False),
            "dra": TestClient(create_app(load_cluster([str(dra)]), limits), raise_server_exceptions=False)}


def campaign(cases: int, base_seed: int = 0, start: int = 0, timeout: float = 30.0,
             verbose: bool = False) -> tuple[collections.Counter, list[Failure]]:
    statuses: collections.Counter = collections.Counter()
    failures: list[Failure] = []
    with tempfile.TemporaryDirectory(prefix="kubetwin-fuzz-http-") as tmp:
        cs = clients(Path(tmp))
        for number in range(start, start + cases):
            req = generate(number, base_seed)
            c = cs[req.cluster]
            t0 = time.monotonic()
            r = c.request(req.method, req.path, content=req.body, headers=dict(req.headers))
            seconds = time.monotonic() - t0
            statuses[r.status_code] += 1
            f = judge(req, r.status_code, r.content, seconds, timeout)
            if verbose:
                print(f"case {number}: {req.what}\n  {req.method} {req.path[:100]} -> {r.status_code} in {seconds:.2f}s"
                      f"\n  {r.content[:500]!r}")
            if f is not None:
                failures.append(f)
    return statuses, failures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.http", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--only", type=int, default=None, help="run only this case number (verbose)")
    p.add_argument("--timeout", type=float, default=30.0)
    args = p.parse_args(argv)
    if args.only is not None:
        statuses, failures = campaign(1, args.seed, args.only, args.timeout, verbose=True)
    else:
        statuses, failures = campaign(args.cases, args.seed, args.start, args.timeout)
    print(f"http fuzz: {sum(statuses.values())} requests; statuses {dict(sorted(statuses.items()))}; "
          f"{len(failures)} failures")
    by_kind: dict[str, list[Failure]] = collections.defaultdict(list)
    for f in failures:
        by_kind[f"[{f.kind}] {f.request.what.split(':')[0]}"].append(f)
    for k, fs in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(fs):5d} x {k}\n          e.g. {fs[0].request.what[:200]}\n               {fs[0].detail[:300]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
