"""Runs of several configurations × workloads: variants (compare) and parallel execution (sweeps).

A run is described by a small picklable :class:`RunSpec`, so it can go to a local process pool
or to a Dask cluster; each worker loads its scenario itself (loading is cheap next to simulating
and keeps the messages small).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..errors import InputError

_SCHEDULER_KEYS = ("scoringStrategy", "percentageOfNodesToScore")


@dataclass(frozen=True)
class Variant:
    name: str
    kubelet: tuple[tuple[str, Any], ...] = ()
    scheduler: tuple[tuple[str, Any], ...] = ()
    gates: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class RunSpec:
    source: tuple[Any, ...]           # ("file", path) or ("alibaba", folder, pods, deletions)
    variant: Variant | None = None
    scheduler_config: str | None = None
    version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _value(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)


def parse_variant(text: str, index: int = 0) -> Variant:
    """``NAME:kubelet.topologyManagerPolicy=restricted,scheduler.scoringStrategy=MostAllocated,gates.X=true``."""
    where = f"--variant[{index}]"
    name, sep, body = text.partition(":")
    if not sep or not name or not body:
        raise InputError(f"Invalid value: {text!r}: expected NAME:KEY=VALUE[,KEY=VALUE]", path=where)
    kubelet, sched, gates = [], [], []
    for part in body.split(","):
        key, eq, val = part.partition("=")
        if not eq:
            raise InputError(f"Invalid value: {part!r}: expected KEY=VALUE", path=where)
        scope, _, field_ = key.partition(".")
        if scope == "kubelet" and field_:
            kubelet.append((field_, _value(val)))
        elif scope == "scheduler" and field_ in _SCHEDULER_KEYS:
            sched.append((field_, _value(val)))
        elif scope == "gates" and field_:
            v = _value(val)
            if not isinstance(v, bool):
                raise InputError(f"Invalid value: {val!r}: a gate is true or false", path=f"{where}.{key}")
            gates.append((field_, v))
        else:
            raise InputError(f"unknown setting {key!r}", path=where,
                             fix="kubelet.<KubeletConfiguration field>, scheduler.scoringStrategy, "
                                 "scheduler.percentageOfNodesToScore, gates.<FeatureGate>")
    return Variant(name, tuple(kubelet), tuple(sched), tuple(gates))


def load_run(spec: RunSpec) -> Any:
    """The scenario of one run, with its variant applied."""
    from .scenario import Scenario, load_scenario, parse_scheduler_config

    if spec.source[0] == "alibaba":
        from .traces import read_alibaba_gpu

        _, folder, pods, deletions = spec.source
        tr = read_alibaba_gpu(folder, pods=pods, deletions=deletions)
        sc = Scenario(name="alibaba-gpu-v2023", nodes=tr.nodes, arrivals=tr.arrivals, source=str(folder),
                      profile=parse_scheduler_config(None))
        sc.settings.sample_interval = 3600.0
        sc.settings.kubelet_admission = False
    else:
        sc = load_scenario(spec.source[1])
    if spec.version:
        sc.settings.kubernetes_version = spec.version
    if spec.scheduler_config:
        from ..model.loader import load_one

        d = load_one(spec.scheduler_config, "KubeSchedulerConfiguration")
        sc.profile = parse_scheduler_config(d.obj, d.where)
    if spec.variant is not None:
        apply_variant(sc, spec.variant)
    return sc


def apply_variant(sc: Any, v: Variant) -> None:
    import dataclasses

    from ..model.kubelet_config import KubeletConfiguration
    from ..model.node import node_from_dict
    from .scenario import _machine_resources

    sc.name = f"{sc.name}:{v.name}" if sc.name else v.name
    if v.gates:
        sc.settings.feature_gates = {**sc.settings.feature_gates, **dict(v.gates)}
    if v.kubelet or v.gates:
        cache: dict[int, Any] = {}
        for n in sc.nodes:
            if n.kubelet is None:
                continue
            key = id(n.kubelet)
            if key not in cache:
                raw = dict(n.kubelet_raw or {})
                raw.update(dict(v.kubelet))
                if v.gates:
                    raw["featureGates"] = {**(raw.get("featureGates") or {}), **dict(v.gates)}
                try:
                    cache[key] = KubeletConfiguration.from_dict(raw, sc.settings.kubernetes_version)
                except InputError as exc:
                    raise exc.within(f"--variant {v.name}") from None
            n.kubelet = cache[key]
            if n.machine is not None:
                cap, alloc = _machine_resources(n.machine, n.kubelet, None)
                from ..model.meta import to_builtins

                obj = {**to_builtins(n.node), "apiVersion": "v1", "kind": "Node"}
                obj["status"] = {"capacity": cap, "allocatable": alloc}
                n.node = node_from_dict(obj)
    if v.scheduler:
        prof = sc.profile
        args = {k: dict(a) for k, a in prof.plugin_args.items()}
        pct = prof.percentage_of_nodes_to_score
        for k, val in v.scheduler:
            if k == "scoringStrategy":
                from ..scheduler.plugins.noderesources import FIT

                fit = args.setdefault(FIT, {})
                fit["scoringStrategy"] = {**(fit.get("scoringStrategy") or {}), "type": str(val)}
            else:
                pct = int(val)
        sc.profile = dataclasses.replace(prof, plugin_args=args, percentage_of_nodes_to_score=pct)


def execute(spec: RunSpec, progress: bool = False) -> Any:
    from .loop import simulate

    sc = load_run(spec)
    if not progress:
        return simulate(sc)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=True) as bar:
        task = bar.add_task(f"simulating {sc.name}", total=max(len(sc.arrivals), 1))

        def tick(done: int, total: int) -> None:
            bar.update(task, completed=done, total=max(total, 1))

        return simulate(sc, progress=tick)


def run_all(specs: Sequence[RunSpec], *, jobs: int | None = None, dask_address: str | None = None,
            progress: bool = False) -> list[Any]:
    """Every run, results in the order given: in-process for one, else a process pool or Dask."""
    # load once in the parent to report input errors before starting workers
    if len(specs) == 1:
        return [execute(specs[0], progress)]
    for s in specs:
        if s.source[0] == "file":
            load_run(s)   # input errors surface here, with their file and field, before workers start
    if dask_address:
        try:
            from dask.distributed import Client
        except ImportError:
            raise InputError("--dask needs the dask[distributed] package", path="--dask",
                             fix="pip install 'dask[distributed]'") from None
        with Client(dask_address) as client:
            futures = client.map(execute, list(specs), pure=False)
            return client.gather(futures)
    workers = min(jobs or os.cpu_count() or 1, len(specs))
    if workers <= 1:
        return [execute(s) for s in specs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(execute, specs))
