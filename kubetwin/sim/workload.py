"""What arrives, when, and for how long: arrivals of pods and the controllers that own them.

Kubernetes has no field for "this pod arrives at t=30s and runs 10 minutes"; a simulation needs
both. They are kept beside the real objects, never inside them.

Not an upstream module: kubetwin's own workload description.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from .. import limits
from ..errors import InputError
from ..model.duration import parse_go_duration
from ..model.pod import Pod


def seconds(value: Any, path: str, *, allow_zero: bool = True) -> float:
    """A time in seconds from a Go duration string (``90s``, ``1h30m``) or a number of seconds."""
    if isinstance(value, bool):
        raise InputError(f"Invalid value: {value!r}: expected a duration like 30s or a number of seconds", path=path)
    if isinstance(value, (int, float)):
        out = float(value)
    elif isinstance(value, str):
        try:
            out = parse_go_duration(value) / 1e9
        except InputError as exc:
            raise InputError(exc.message, path=path, fix=exc.fix) from None
    else:
        raise InputError(f"Invalid value: {value!r}: expected a duration like 30s or a number of seconds", path=path)
    if not math.isfinite(out) or out < 0 or (out == 0 and not allow_zero):
        raise InputError(f"Invalid value: {value!r}: must be {'non-negative' if allow_zero else 'positive'}",
                         path=path)
    limits.MAX_SIM_SECONDS.check(math.ceil(out), path=path, what=f"{value!r} in seconds")
    return out


@dataclass(frozen=True)
class DurationSpec:
    """How long a pod runs once started: fixed, exponential (mean) or uniform (low, high); None: forever."""

    kind: str = "forever"
    a: float = 0.0
    b: float = 0.0

    def sample(self, rng: random.Random) -> float | None:
        if self.kind == "fixed":
            return self.a
        if self.kind == "exponential":
            return rng.expovariate(1.0 / self.a) if self.a > 0 else 0.0
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b)
        return None


FOREVER = DurationSpec()


def parse_duration_spec(raw: Any, path: str) -> DurationSpec:
    if raw is None:
        return FOREVER
    if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
        return DurationSpec("fixed", seconds(raw, path))
    if isinstance(raw, dict) and len(raw) == 1 and next(iter(raw)) not in ("exponential", "uniform"):
        from ..model.strict import unknown_key_error

        raise unknown_key_error(str(next(iter(raw))), ("exponential", "uniform"), path=path, what="duration kind")
    if isinstance(raw, dict) and len(raw) == 1:
        (k, v), = raw.items()
        if k == "exponential":
            return DurationSpec("exponential", seconds(v, f"{path}.exponential", allow_zero=False))
        if k == "uniform":
            if not isinstance(v, list) or len(v) != 2:
                raise InputError("expected [low, high]", path=f"{path}.uniform")
            lo, hi = seconds(v[0], f"{path}.uniform[0]"), seconds(v[1], f"{path}.uniform[1]")
            if hi < lo:
                raise InputError(f"Invalid value: high {v[1]!r} is below low {v[0]!r}", path=f"{path}.uniform")
            return DurationSpec("uniform", lo, hi)
    raise InputError(f"Invalid value: {raw!r}: expected a duration (10m), {{exponential: 10m}} or "
                     "{uniform: [1m, 5m]}", path=path)


@dataclass(frozen=True)
class Arrival:
    """One pod entering the cluster (created through the API server) at ``time`` seconds."""

    time: float
    pod: Pod
    duration: float | None = None
    owner: str | None = None     # controller key, for re-creation
    #: where the pod came from (file:line or workload name), for messages
    source: str = ""
    #: resource use over the pod's run time (:class:`kubetwin.sim.usage.Usage`), None: not simulated
    usage: Any = None


@dataclass
class Controller:
    """A pod owner the simulation plays: ReplicaSet/Deployment (replicas kept alive) or Job."""

    key: str                       # "Deployment/ns/name"
    kind: str
    template: Pod
    replicas: int = 1              # RS/Deployment replicas; Job parallelism
    completions: int | None = None # Job completions (None: parallelism)
    backoff_limit: int = 6
    start: float = 0.0
    duration: DurationSpec = FOREVER
    #: how many replacements of failed pods the simulation allows (the RS hot loop of issue 84869)
    max_recreations: int = 10
    created: int = 0
    succeeded: int = 0
    failed: int = 0
    active: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    #: resource use of each pod it creates (:class:`kubetwin.sim.usage.Usage`)
    usage: Any = None
    #: the total load its pods share (:class:`kubetwin.sim.load.Load`), read by the autoscalers
    load: Any = None
    #: pods deleted by scaling down (not failures: they do not count as re-creations)
    retired: int = 0

    @property
    def is_job(self) -> bool:
        return self.kind == "Job"

    def wanted(self) -> int:
        """How many more pods the controller creates now."""
        if self.is_job:
            total = self.completions if self.completions is not None else self.replicas
            if self.failed > self.backoff_limit:
                return 0
            left = total - self.succeeded - self.active
            return max(0, min(self.replicas - self.active, left))
        if self.created - self.retired - self.replicas >= self.max_recreations:
            return 0
        return max(0, self.replicas - self.active)
