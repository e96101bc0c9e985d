"""A node's eviction timeline: steps of (advance the clock, report a Summary, change the active
pods, offer pods for admission), driven through :class:`EvictionManager` one synchronize per step.

The file is YAML/JSON: a list of steps (or ``{steps: [...]}``), each
``{after: 1m, summary: {...}, afterReclaim: {...}, pods: [...], admit: [...]}``; an absent
``summary`` repeats the previous one, an absent ``afterReclaim`` means garbage collection frees nothing.

Not an upstream module: kubetwin's own driver of the eviction manager over time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ... import limits
from ...errors import InputError
from ...model.duration import DurationError, parse_go_duration
from ...model.kinds import check_object
from ...model.loader import parse_documents, read_text
from ...model.pod import Pod, pod_from_dict
from ...model.strict import unknown_key_error
from ...model.summary import Summary, summary_from_dict
from .manager import AdmitResult, EvictionManager, ReclaimFunc, SyncResult

_STEP_KEYS = ("after", "summary", "afterReclaim", "pods", "admit", "expect", "name", "notes")


@dataclass(frozen=True, slots=True)
class Step:
    after: int = 0  # nanoseconds
    summary: Summary | None = None
    after_reclaim: Summary | None = None
    pods: tuple[Pod, ...] | None = None
    admit: tuple[Pod, ...] = ()


@dataclass(frozen=True, slots=True)
class StepResult:
    at: int
    sync: SyncResult
    admission: tuple[AdmitResult, ...]


def load_timeline(path: str | Path, warn: Callable[[InputError], None] | None = None) -> list[Step]:
    name = "<stdin>" if str(path) == "-" else str(path)
    docs = parse_documents(read_text(path), name)
    if len(docs) == 1 and isinstance(docs[0], dict) and "steps" in docs[0]:
        for key in docs[0]:
            if key not in ("steps", "name", "notes"):
                raise unknown_key_error(key, ("steps", "name", "notes"), path=key, file=name)
        raw = docs[0]["steps"]
        prefix = "steps"
    elif len(docs) == 1 and isinstance(docs[0], list):
        raw, prefix = docs[0], ""
    elif len(docs) == 1 and docs[0] is None:
        raw, prefix = [], ""
    else:
        raw, prefix = docs, ""
    if not isinstance(raw, list):
        raise InputError("expected a list of steps", path=prefix or "steps", file=name)
    limits.MAX_TIMELINE_STEPS.check(len(raw), file=name, path=prefix or "steps", what="the number of steps")
    return [parse_step(s, f"{prefix}[{i}]", name, warn) for i, s in enumerate(raw)]


def parse_step(raw: Any, path: str, file: str | None, warn: Callable[[InputError], None] | None = None) -> Step:
    if not isinstance(raw, dict):
        raise InputError("expected a step mapping (after, summary, afterReclaim, pods, admit)", path=path, file=file)
    for key in raw:
        if key not in _STEP_KEYS:
            raise unknown_key_error(str(key), _STEP_KEYS, path=f"{path}.{key}", file=file)
    after = raw.get("after", "0s")
    if isinstance(after, bool) or not isinstance(after, (str, int)):
        raise InputError("expected a Go duration such as 10s or 1m30s", path=f"{path}.after", file=file)
    try:
        ns = 0 if after in (0, "0") else parse_go_duration(str(after))
    except DurationError as exc:
        raise InputError(exc.message, path=f"{path}.after", file=file, fix=exc.fix) from None
    if ns < 0:
        raise InputError(f"must not be negative: {after}", path=f"{path}.after", file=file)
    summary = _summary(raw, "summary", path, file)
    after_reclaim = _summary(raw, "afterReclaim", path, file)
    pods = _pods(raw.get("pods"), f"{path}.pods", file, warn) if "pods" in raw else None
    admit = _pods(raw.get("admit"), f"{path}.admit", file, warn) if "admit" in raw else ()
    return Step(ns, summary, after_reclaim, pods, admit or ())


def _summary(raw: dict, key: str, path: str, file: str | None) -> Summary | None:
    if key not in raw or raw[key] is None:
        return None
    return summary_from_dict(raw[key], file=file, path=f"{path}.{key}")


def _pods(raw: Any, path: str, file: str | None, warn: Callable[[InputError], None] | None) -> tuple[Pod, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InputError("expected a list of Pods", path=path, file=file)
    out = []
    for i, obj in enumerate(raw):
        if not isinstance(obj, dict):
            raise InputError("expected a Pod object", path=f"{path}[{i}]", file=file)
        check_object(obj, file, kinds=("Pod",), prefix=f"{path}[{i}]")
        try:
            out.append(pod_from_dict(obj, None, warn=warn, checked=True))
        except InputError as exc:
            raise exc.within(f"{path}[{i}]").in_file(file) from None
    return tuple(out)


def _reclaimed_to(after: Summary) -> ReclaimFunc:
    """A reclaim (image/container GC) that leaves the node as ``after`` reports it."""
    return lambda _funcs: after


def run_timeline(manager: EvictionManager, pods: Sequence[Pod], steps: Sequence[Step]) -> list[StepResult]:
    """Advance the clock, synchronize, then offer the step's pods for admission — per step."""
    now = 0
    summary = Summary()
    active = tuple(pods)
    out = []
    for step in steps:
        now += step.after
        if step.summary is not None:
            summary = step.summary
        if step.pods is not None:
            active = step.pods
        after = step.after_reclaim if step.after_reclaim is not None else summary
        sync = manager.synchronize(now, summary, active, reclaim=_reclaimed_to(after))
        admission = tuple(manager.admit(p) for p in step.admit)
        out.append(StepResult(now, sync, admission))
    return out
