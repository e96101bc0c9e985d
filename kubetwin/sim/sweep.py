"""Runs of several configurations × workloads: variants (compare) and parallel execution (sweeps).

A run is described by a small picklable :class:`RunSpec`. Local process pools load each
scenario in the worker (loading is cheap next to simulating and keeps the messages small); a Dask
cluster gets the loaded scenario itself (:func:`execute_loaded`), since its workers may run on
machines that do not see the scenario's files.

Not an upstream module: kubetwin's own run orchestration.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..errors import InputError

_SCHEDULER_KEYS = ("scoringStrategy", "percentageOfNodesToScore")
_SCOPES = ("kubelet", "scheduler", "gates", "whatif", "runtime", "autoscaler")
#: what-ifs that are not upstream behaviour (kubetwin.sim.whatif_psi)
_WHATIF_KEYS = ("evictionPolicy", "psiThreshold")
_RUNTIME_KEYS = ("policy", "config")
#: the Cluster Autoscaler's settings a variant may change (``autoscaler.estimator=kubelet-aware``)
_AUTOSCALER_KEYS = ("estimator", "expander")


@dataclass(frozen=True)
class Variant:
    """One ``--variant NAME:KEY=VALUE[,KEY=VALUE]``: KubeletConfiguration fields (as a path into
    the object, ``("evictionHard", "memory.available")``), scheduler settings, feature gates."""

    name: str
    kubelet: tuple[tuple[tuple[str, ...], Any], ...] = ()
    scheduler: tuple[tuple[str, Any], ...] = ()
    gates: tuple[tuple[str, bool], ...] = ()
    whatif: tuple[tuple[str, Any], ...] = ()
    #: ``runtime.policy`` / ``runtime.config``: the runtime policy of every node with a machine
    runtime: tuple[tuple[str, str], ...] = ()
    autoscaler: tuple[tuple[str, Any], ...] = ()

    def changes(self) -> tuple[str, ...]:
        """What the variant changes, as given: ``kubelet.topologyManagerPolicy=none``, ..."""
        import json

        def text(v: Any) -> str:
            return v if isinstance(v, str) else json.dumps(v)

        def key(k: Any) -> str:  # a setting's path: a name, or a tuple of names for nested fields
            return ".".join(map(str, k)) if isinstance(k, tuple) else str(k)

        return (tuple(f"kubelet.{key(k)}={text(v)}" for k, v in self.kubelet)
                + tuple(f"scheduler.{key(k)}={text(v)}" for k, v in self.scheduler)
                + tuple(f"gates.{k}={str(v).lower()}" for k, v in self.gates)
                + tuple(f"whatif.{k}={v}" for k, v in self.whatif)
                + tuple(f"runtime.{k}={v}" for k, v in self.runtime)
                + tuple(f"autoscaler.{k}={','.join(v) if isinstance(v, tuple) else v}" for k, v in self.autoscaler))


@dataclass(frozen=True)
class RunSpec:
    source: tuple[Any, ...]           # ("file", path) or ("alibaba", folder, pods, deletions)
    variant: Variant | None = None
    scheduler_config: str | None = None
    version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _split_settings(body: str) -> list[str]:
    """``a=1,b=[x,y],c={k: v}`` → its settings: commas inside brackets or braces stay."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(depth - 1, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def _typed(text: str, spec: Any, path: str) -> Any:
    """A setting's value read as the field's JSON type: strings verbatim (``0-3``, ``static``),
    ``true``/``false``, numbers; lists and objects in YAML flow style (``[pods,kube-reserved]``)."""
    import yaml

    from ..model.strict import BOOLEAN, INTEGER, NUMBER, STRING, STRING_OR_NUMBER, Obj, find_problems

    if spec == STRING or spec == STRING_OR_NUMBER:
        return text
    if spec == BOOLEAN:
        if text not in ("true", "false"):
            raise InputError(f"Invalid value: {text!r}: must be true or false", path=path)
        return text == "true"
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        raise InputError(f"Invalid value: {text!r}: not a YAML value", path=path) from None
    if spec in (INTEGER, NUMBER) and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise InputError(f"Invalid value: {text!r}: must be a number", path=path)
    problems = find_problems({"v": value}, Obj({"v": spec}))
    if problems:
        p = problems[0]
        inner = p.path[1:].lstrip(".")
        what = (f'unknown field "{inner}"' if p.kind == "unknown" else
                f"{inner + ': ' if inner else ''}{p.detail}")
        raise InputError(f"Invalid value: {text!r}: {what}", path=path)
    return value


def _kubelet_setting(key: str, text: str, where: str) -> tuple[tuple[str, ...], Any]:
    """``kubelet.FIELD[.KEY]``: a KubeletConfiguration field; a map field takes the rest as its
    key (``kubelet.evictionHard.memory.available``), an object field a path of its fields."""
    from ..model.features import KNOWN_VERSIONS
    from ..model.kubelet_fields import all_fields, fields_at
    from ..model.strict import MapOf, Obj, suggest, unknown_key_error

    specs = fields_at(KNOWN_VERSIONS[-1])
    name, _, rest = key.partition(".")
    if name not in all_fields() or name in ("apiVersion", "kind"):
        err = unknown_key_error(f"kubelet.{name}", [f"kubelet.{f}" for f in specs if f not in ("apiVersion", "kind")],
                                path=where, what="variant setting")
        raise err
    spec = specs[name]
    path: tuple[str, ...] = (name,)
    sub = spec
    while rest:
        if isinstance(sub, MapOf):
            path += (rest,)
            sub = sub.value
            rest = ""
        elif isinstance(sub, Obj):
            part, _, rest = rest.partition(".")
            if part not in sub.fields:
                near = suggest(part, sub.fields)
                raise InputError(f'unknown variant setting "kubelet.{key}"', path=where,
                                 fix=f'did you mean "kubelet.{".".join(path + (near,))}"?' if near else
                                 f"{'.'.join(path)} has the fields {', '.join(sorted(sub.fields))}")
            path += (part,)
            sub = sub.fields[part]
        else:
            raise InputError(f'unknown variant setting "kubelet.{key}": {name} is not an object or a map',
                             path=where, fix=f"write kubelet.{name}=VALUE")
    return path, _typed(text, sub, f"{where}.kubelet.{key}")


def parse_variant(text: str, index: int = 0) -> Variant:
    """``NAME:kubelet.topologyManagerPolicy=restricted,scheduler.scoringStrategy=MostAllocated,gates.X=true``.

    Every key is checked here, before any run starts: an unknown one is refused with the
    nearest valid key (``kubelet.topologyManagerPolcy`` → ``kubelet.topologyManagerPolicy``)."""
    from ..model.features import FEATURE_GATES, unknown_gate_error
    from ..model.strict import suggest, unknown_key_error

    where = f"--variant[{index}]"
    name, sep, body = text.partition(":")
    if not sep or not name or not body:
        raise InputError(f"Invalid value: {text!r}: expected NAME:KEY=VALUE[,KEY=VALUE]", path=where)
    kubelet: list[tuple[tuple[str, ...], Any]] = []
    sched: list[tuple[str, Any]] = []
    gates: list[tuple[str, bool]] = []
    whatif: list[tuple[str, Any]] = []
    runtime: list[tuple[str, str]] = []
    autoscaler: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for part in _split_settings(body):
        key, eq, val = part.partition("=")
        if not eq or not key:
            raise InputError(f"Invalid value: {part!r}: expected KEY=VALUE", path=where)
        if not val:  # an empty value would read as the field's default: a variant that changes nothing
            raise InputError(f"Invalid value: {part!r}: the setting has no value", path=where,
                             fix=f"write {key}=VALUE")
        if key in seen:
            raise InputError(f'duplicate variant setting "{key}"', path=where, fix="give each setting once")
        seen.add(key)
        scope, _, field_ = key.partition(".")
        if scope not in _SCOPES or not field_:
            near = suggest(scope, _SCOPES)
            raise InputError(f'unknown variant setting "{key}"', path=where,
                             fix=f'did you mean "{near}.{field_}"?' if near and field_ else
                             "settings are kubelet.<KubeletConfiguration field>, scheduler.scoringStrategy, "
                             "scheduler.percentageOfNodesToScore, gates.<FeatureGate>, whatif.evictionPolicy, "
                             "whatif.psiThreshold, runtime.policy, runtime.config, autoscaler.estimator, "
                             "autoscaler.expander")
        if scope == "kubelet":
            kubelet.append(_kubelet_setting(field_, val, where))
        elif scope == "autoscaler":
            from .autoscaling_config import parse_estimator, parse_expander

            if field_ not in _AUTOSCALER_KEYS:
                raise unknown_key_error(key, [f"autoscaler.{k}" for k in _AUTOSCALER_KEYS], path=where,
                                        what="variant setting")
            parse = parse_estimator if field_ == "estimator" else parse_expander
            autoscaler.append((field_, parse(val, f"{where}.{key}")))
        elif scope == "scheduler":
            if field_ not in _SCHEDULER_KEYS:
                raise unknown_key_error(key, [f"scheduler.{k}" for k in _SCHEDULER_KEYS], path=where,
                                        what="variant setting")
            sched.append((field_, _scheduler_value(field_, val, f"{where}.{key}")))
        elif scope == "whatif":
            whatif.append((field_, _whatif_value(key, field_, val, f"{where}.{key}")))
        elif scope == "runtime":
            if field_ not in _RUNTIME_KEYS:
                raise unknown_key_error(key, [f"runtime.{k}" for k in _RUNTIME_KEYS], path=where,
                                        what="variant setting")
            runtime.append((field_, _runtime_value(field_, val, f"{where}.{key}")))
        else:
            if field_ not in FEATURE_GATES:
                from ..model.upstream_gates import UPSTREAM_GATES

                if field_ in UPSTREAM_GATES:  # a real gate, but the variant would equal the baseline
                    raise InputError(f"feature gate {field_} is not modelled by kubetwin: a variant setting it "
                                     "would change nothing", path=f"{where}.{key}")
                raise unknown_gate_error(field_, "", path=f"{where}.{key}")
            if val not in ("true", "false"):
                raise InputError(f"Invalid value: {val!r}: a gate is true or false", path=f"{where}.{key}")
            gates.append((field_, val == "true"))
    if runtime and "policy" not in dict(runtime):
        raise InputError("runtime.config needs runtime.policy (the policy the resource configures)", path=where,
                         fix="add runtime.policy=topology-aware or runtime.policy=balloons")
    if runtime:
        from pathlib import Path

        from .runtime_policies import resolve_policy

        rt = dict(runtime)
        resolve_policy(rt["policy"], rt.get("config"), f"{where}.runtime", Path.cwd())  # checked now
    return Variant(name, tuple(kubelet), tuple(sched), tuple(gates), tuple(whatif), tuple(runtime),
                   tuple(autoscaler))


def _whatif_value(key: str, field_: str, text: str, path: str) -> Any:
    from ..model.strict import unknown_key_error
    from .whatif_psi import POLICIES

    if field_ not in _WHATIF_KEYS:
        raise unknown_key_error(key, [f"whatif.{k}" for k in _WHATIF_KEYS], path=path, what="variant setting")
    if field_ == "evictionPolicy":
        if text not in POLICIES:
            raise InputError(f'Unsupported value: "{text}": supported values: {", ".join(POLICIES)}', path=path)
        return text
    try:
        pct = float(text)
    except ValueError:
        pct = -1.0
    if not 0 < pct <= 100:
        raise InputError(f"Invalid value: {text!r}: a cpu.pressure some avg10 percentage in (0, 100]", path=path)
    return pct


def _runtime_value(key: str, text: str, path: str) -> str:
    if not text:
        raise InputError(f"Required value: runtime.{key}", path=path,
                         fix="runtime.policy=topology-aware|balloons|none|FILE.py[:Class]" if key == "policy" else
                         "runtime.config=POLICY.yaml")
    return text


def _scheduler_value(key: str, text: str, path: str) -> Any:
    if key == "scoringStrategy":
        from ..scheduler.plugins.noderesources.args import SCORING_STRATEGIES

        if text not in SCORING_STRATEGIES:
            from ..model.strict import suggest

            near = suggest(text, SCORING_STRATEGIES)
            raise InputError(f'Unsupported value: "{text}": supported values: {", ".join(SCORING_STRATEGIES)}',
                             path=path, fix=f'did you mean "{near}"?' if near else "use one of the supported values")
        return text
    if not text.isascii() or not text.isdigit() or not 0 <= int(text) <= 100:
        raise InputError(f"Invalid value: {text!r}: not in valid range [0-100]", path=path,
                         fix="a whole percentage from 0 (kube-scheduler's adaptive default) to 100")
    return int(text)


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
        sc = load_scenario(spec.source[1], kubernetes_version=spec.version)
    if spec.version:
        sc.settings.kubernetes_version = spec.version
    if spec.scheduler_config:
        from ..model.loader import load_one

        d = load_one(spec.scheduler_config, "KubeSchedulerConfiguration")
        sc.profile = parse_scheduler_config(d.obj, d.where)
    if spec.variant is not None:
        apply_variant(sc, spec.variant)
    return sc


def _set_path(obj: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        sub = obj.get(key)
        obj[key] = sub = dict(sub) if isinstance(sub, dict) else {}
        obj = sub
    obj[path[-1]] = value


def apply_variant(sc: Any, v: Variant) -> None:
    """Change the scenario as the variant says; a setting that would change nothing is refused
    (or, where only some nodes are affected, reported), never silently dropped."""
    import copy
    import dataclasses

    from ..diagnostics import warn
    from ..model.kubelet_config import KubeletConfiguration
    from ..model.meta import to_builtins
    from ..model.node import node_from_dict
    from .scenario import node_resources

    where = f"--variant {v.name}"
    sc.name = f"{sc.name}:{v.name}" if sc.name else v.name
    if v.gates:
        from ..model.features import gates_for

        sc.settings.feature_gates = {**sc.settings.feature_gates, **dict(v.gates)}
        try:
            gates_for(sc.settings.kubernetes_version, sc.settings.feature_gates)
        except InputError as exc:
            raise exc.within(where).in_file(sc.source or None) from None
    if v.kubelet or v.gates:
        # the template nodes of autoscaled groups too: the nodes the Cluster Autoscaler adds are theirs
        groups = sc.autoscaling.groups.values() if sc.autoscaling is not None else ()
        present = {id(n) for n in sc.nodes}
        nodes = list(sc.nodes) + [g.template for g in groups if id(g.template) not in present]
        with_kubelet = [n for n in nodes if n.kubelet is not None]
        if v.kubelet and not with_kubelet:
            keys = ", ".join("kubelet." + ".".join(p) for p, _ in v.kubelet)
            raise InputError(f"{keys}: no node of the scenario has a kubelet to change", path=where,
                             file=sc.source or None, fix="give a node group a machine or a kubeletConfig")
        without = sorted({n.group or n.node.metadata.name for n in nodes if n.kubelet is None})
        if v.kubelet and without:
            warn(InputError(f"nodes of {', '.join(without)} have no kubelet configuration (no machine, no "
                            "kubeletConfig): the variant's kubelet settings do not change them", path=where,
                            file=sc.source or None))
        cache: dict[int, tuple[Any, dict[str, Any]]] = {}
        for n in with_kubelet:
            key = id(n.kubelet)
            if key not in cache:
                raw = copy.deepcopy(dict(n.kubelet_raw or {}))
                for path, value in v.kubelet:
                    _set_path(raw, path, value)
                if v.gates:
                    raw["featureGates"] = {**(raw.get("featureGates") or {}), **dict(v.gates)}
                try:
                    cache[key] = (KubeletConfiguration.from_dict(raw, sc.settings.kubernetes_version), raw)
                except InputError as exc:
                    exc.file = None
                    raise exc.within(where) from None
            n.kubelet, n.kubelet_raw = cache[key]
            cap, alloc = node_resources(n.machine, n.kubelet, n.extra_capacity, n.gpus)
            obj = {**to_builtins(n.node), "apiVersion": "v1", "kind": "Node"}
            obj["status"] = {**(obj.get("status") or {}), "capacity": cap, "allocatable": alloc}
            n.node = node_from_dict(obj, checked=True)  # the scenario's node, new figures
    if v.whatif:
        _apply_whatif(sc, dict(v.whatif), where)
    if v.runtime:
        _apply_runtime(sc, dict(v.runtime), where)
    if v.autoscaler:
        a = sc.autoscaling
        if a is None or a.ca is None:
            raise InputError(f"autoscaler settings ({where}): the scenario has no Cluster Autoscaler to change",
                             file=sc.source, path="spec.autoscaling.clusterAutoscaler",
                             fix="add spec.autoscaling.clusterAutoscaler and a node group with minSize/maxSize")
        a.ca = dataclasses.replace(a.ca, **dict(v.autoscaler))
        if "priority" in a.ca.expander and a.ca.priorities is None:
            raise InputError(f"autoscaler.expander ({where}): the priority expander needs its ConfigMap's "
                             "priorities", file=sc.source, path="spec.autoscaling.clusterAutoscaler.priorities",
                             fix="set spec.autoscaling.clusterAutoscaler.priorities in the scenario")
    if v.scheduler:
        prof = sc.profile
        args = {k: dict(a) for k, a in prof.plugin_args.items()}
        pct = prof.percentage_of_nodes_to_score
        for k, val in v.scheduler:
            if k == "scoringStrategy":
                from ..scheduler.plugins.noderesources import FIT

                if FIT not in dict(prof.plugins):
                    raise InputError(f"scheduler.scoringStrategy: the scheduler profile has no {FIT} "
                                     "plugin to score with it", path=where, file=sc.source or None)
                fit = args.setdefault(FIT, {})
                fit["scoringStrategy"] = {**(fit.get("scoringStrategy") or {}), "type": val}
            else:
                pct = val
                if len(sc.nodes) <= 100:
                    warn(InputError(f"scheduler.percentageOfNodesToScore: kube-scheduler scores every node of a "
                                    f"cluster of {len(sc.nodes)} nodes (at least 100 nodes are always searched: "
                                    "minFeasibleNodesToFind); the setting changes nothing here", path=where,
                                    file=sc.source or None))
        sc.profile = dataclasses.replace(prof, plugin_args=args, percentage_of_nodes_to_score=pct)


def _apply_whatif(sc: Any, whatif: dict[str, Any], where: str) -> None:
    st = sc.settings
    st.eviction_policy = whatif.get("evictionPolicy", st.eviction_policy)
    st.psi_threshold = whatif.get("psiThreshold", st.psi_threshold)
    if "psiThreshold" in whatif and st.eviction_policy != "psi-aware":
        raise InputError("whatif.psiThreshold is read by the psi-aware eviction policy only", path=where,
                         fix="add whatif.evictionPolicy=psi-aware")
    if st.eviction_policy == "psi-aware" and not any(
            u is not None and u.cpu for u in [a.usage for a in sc.arrivals] + [c.usage for c in sc.controllers]):
        raise InputError("whatif.evictionPolicy=psi-aware: no pod of the scenario has a CPU curve, so no node "
                         "ever reports CPU pressure", path=where, fix="give workloads usage.cpu curves")


def execute(spec: RunSpec, progress: bool = False) -> Any:
    """One run; its result says which variant it is and what the variant changed."""
    from .loop import simulate

    sc = load_run(spec)
    sc.want_end_state = bool(spec.extra.get("end_state"))
    if not progress or not _stderr_is_terminal():
        result = simulate(sc)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), transient=True, console=_stderr_console()) as bar:
            task = bar.add_task(f"simulating {sc.name}", total=max(len(sc.arrivals), 1))

            def tick(done: int, total: int) -> None:
                bar.update(task, completed=done, total=max(total, 1))

            result = simulate(sc, progress=tick)
    return _labelled(result, spec.variant)


def execute_loaded(sc: Any, variant: Variant | None) -> Any:
    """One run of a scenario loaded by the caller: what a Dask worker runs. The scenario's
    content travels with the task (nodes, pods, machines, profiles, variant applied), so a
    worker on another machine needs kubetwin installed, not the scenario's files."""
    from .loop import simulate

    return _labelled(simulate(sc), variant)


def _labelled(result: Any, variant: Variant | None) -> Any:
    """The result says which variant it is and what the variant changed."""
    if variant is not None:
        result.variant = variant.name
        result.changes = variant.changes()
    return result


def _stderr_is_terminal() -> bool:
    import sys

    return sys.stderr.isatty()


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


class _RunProgress:
    """Progress of several runs on stderr: a bar on a terminal, else one line per finished run."""

    def __init__(self, specs: Sequence[RunSpec], enabled: bool):
        self.total = len(specs)
        self.done = 0
        self.enabled = enabled
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> "_RunProgress":
        if self.enabled and _stderr_is_terminal():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), transient=True, console=_stderr_console())
            self.bar.__enter__()
            self.task = self.bar.add_task(f"simulating {self.total} runs", total=self.total)
        return self

    def finished(self, result: Any) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done, description=f"finished {result.scenario}")
        elif self.enabled:
            import sys

            print(f"run {self.done}/{self.total} finished: {result.scenario} ({result.wall_seconds:.1f} s)",
                  file=sys.stderr, flush=True)

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def run_all(specs: Sequence[RunSpec], *, jobs: int | None = None, dask_address: str | None = None,
            progress: bool = False) -> list[Any]:
    """Every run, results in the order given: in-process for one, else a process pool or Dask."""
    # load once in the parent to report input errors before starting workers
    if len(specs) == 1:
        return [execute(specs[0], progress)]
    if not dask_address:
        for s in specs:
            if s.source[0] == "file":
                load_run(s)   # input errors surface here, with their file and field, before workers start
    results: list[Any] = [None] * len(specs)
    from .. import tracing

    if tracing.ACTIVE is not None:   # spans are made in this process only: the runs one after another
        if dask_address:
            raise InputError("--trace cannot collect the spans of runs on Dask workers", path="--dask",
                             fix="trace without --dask (the runs then go one after another in this process)")
        jobs = 1
    with _RunProgress(specs, progress) as shown:
        if dask_address:
            try:
                from dask.distributed import Client, as_completed
            except ImportError:
                raise InputError("--dask needs the dask[distributed] package", path="--dask",
                                 fix="pip install 'dask[distributed]'") from None
            with Client(dask_address) as client:
                # each scenario is loaded here (input errors surface before any task starts) and
                # sent as content: workers on other machines do not see this machine's paths
                futures = [client.submit(execute_loaded, load_run(s), s.variant, pure=False) for s in specs]
                index = {f.key: i for i, f in enumerate(futures)}
                for fut in as_completed(futures):
                    results[index[fut.key]] = fut.result()
                    shown.finished(results[index[fut.key]])
            return results
        workers = min(jobs or os.cpu_count() or 1, len(specs))
        if workers <= 1:
            for i, s in enumerate(specs):
                results[i] = execute(s)
                shown.finished(results[i])
            return results
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures import as_completed as done_in_order

        with ProcessPoolExecutor(max_workers=workers) as pool:
            pending = {pool.submit(execute, s): i for i, s in enumerate(specs)}
            for fut in done_in_order(pending):
                results[pending[fut]] = fut.result()
                shown.finished(results[pending[fut]])
        return results


def _apply_runtime(sc: Any, settings: dict[str, str], where: str) -> None:
    """``runtime.policy`` (and ``runtime.config``) on every node with a machine and a kubelet."""
    from pathlib import Path

    from ..diagnostics import warn
    from .runtime_policies import resolve_policy

    with_machine = [n for n in sc.nodes if n.machine is not None and n.kubelet is not None]
    if not with_machine:
        raise InputError("runtime.policy: no node of the scenario has a machine and a kubelet for a runtime policy "
                         "to run on", path=where, fix="give a node group a machine")
    without = sorted({n.group or n.node.metadata.name for n in sc.nodes if n.machine is None or n.kubelet is None})
    if without:
        warn(InputError(f"nodes of {', '.join(without)} have no machine: the variant's runtime policy does not "
                        "change them", path=where))
    policy = resolve_policy(settings["policy"], settings.get("config"), f"{where}.runtime", Path.cwd())
    if policy is None and all(n.runtime is None for n in with_machine):
        raise InputError("runtime.policy=none: no node of the scenario has a runtime policy to remove", path=where)
    from .runtime_policies import check_starts

    started: set[tuple[int, int]] = set()
    for n in with_machine:
        n.runtime = policy
        if (id(n.machine), id(n.kubelet)) not in started:
            started.add((id(n.machine), id(n.kubelet)))
            check_starts(n.machine, n.kubelet, policy, f"{where}.runtime.policy")
