"""The load a workload serves over the day, and the per-pod metrics metrics-server would report.

Kubernetes objects never say how busy a Deployment is; an autoscaler reacts to exactly that.
A controller (Deployment or ReplicaSet) carries its load beside its object, in the annotation
``kubetwin.io/load``::

    kubetwin.io/load: |
      cpu: [[0h, 2], [9h, 2], [13h, 24], [20h, 6], [24h, 2]]   # cores, all replicas together
      metrics: {http_requests: [[0h, 100], [12h, 2k]]}          # Pods / External metric totals
      repeat: 24h                                              # the curve repeats every day

Points are (time of the simulated clock, total) with linear interpolation and the last value
held (or the curve wrapping round with ``repeat``). The total is shared evenly by the pods of the
controller that are running, as a load balancer in front of them would share it; each pod then
reports ``total / running`` — the value metrics-server's ``/apis/metrics.k8s.io`` would serve for
it (CPU in millicores on the pod's first app container). Memory comes from the pod's own usage
curve (:mod:`.usage`) or, without one, its request.

Not an upstream module: kubetwin's own input; the way HPA and VPA read it is upstream's
(``pkg/controller/podautoscaler/metrics``, VPA ``recommender/input/metrics``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import InputError
from ..model.quantity import parse_quantity
from ..model.strict import unknown_key_error
from .usage import Curve, _annotation_value, parse_curve
from .workload import seconds

LOAD = "kubetwin.io/load"
_KEYS = ("cpu", "metrics", "repeat")


@dataclass(frozen=True, slots=True)
class Load:
    """A controller's total demand over the simulated clock, in milli-units."""

    cpu: Curve | None
    metrics: tuple[tuple[str, Curve], ...]
    repeat: float | None = None

    def _t(self, t: float) -> float:
        return t % self.repeat if self.repeat else t

    def cpu_milli(self, t: float) -> int:
        return self.cpu.at(self._t(t)) if self.cpu is not None else 0

    def metric_milli(self, name: str, t: float) -> int | None:
        for n, c in self.metrics:
            if n == name:
                return c.at(self._t(t))
        return None


def _milli(v: Any, path: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise InputError(f"Invalid value: {v!r}: a quantity such as 2, 500m or 2k", path=path)
    q = parse_quantity(str(v), path)
    n = q.milli_value()
    if n < 0:
        raise InputError(f"Invalid value: {v!r}: must not be negative", path=path)
    return int(n)


def _curve(raw: Any, path: str) -> Curve:
    """A load curve: usage's curve reader with amounts in milli-units."""
    return parse_curve(raw, path, _milli)


def parse_load(raw: Any, path: str) -> Load | None:
    """The ``kubetwin.io/load`` annotation (JSON or YAML flow text, or a mapping)."""
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = _annotation_value(raw, path)
    if not isinstance(raw, Mapping):
        raise InputError("expected {cpu: CURVE, metrics: {NAME: CURVE}, repeat: DURATION}", path=path)
    for k in raw:
        if k not in _KEYS:
            raise unknown_key_error(str(k), _KEYS, path=f"{path}.{k}")
    cpu = _curve(raw["cpu"], f"{path}.cpu") if raw.get("cpu") is not None else None
    metrics = raw.get("metrics") or {}
    if not isinstance(metrics, Mapping):
        raise InputError("expected a map of metric name to CURVE", path=f"{path}.metrics")
    curves = tuple((str(n), _curve(c, f"{path}.metrics.{n}")) for n, c in metrics.items())
    repeat = seconds(raw["repeat"], f"{path}.repeat", allow_zero=False) if raw.get("repeat") is not None else None
    if cpu is None and not curves:
        raise InputError("Required value: cpu or metrics", path=path)
    return Load(cpu, curves, repeat)


def load_of(obj: Mapping[str, Any], where: str) -> Load | None:
    """The controller object's ``kubetwin.io/load``, errors naming the file."""
    ann = (obj.get("metadata") or {}).get("annotations") or {}
    if LOAD not in ann:
        return None
    try:
        return parse_load(ann[LOAD], f"metadata.annotations[{LOAD}]")
    except InputError as exc:
        raise exc.in_file(where) from None
