"""kube-scheduler: the framework, its plugins, the explained one-shot cycle (:mod:`.cycle`) and the
long-running :class:`Scheduler` simulations drive (imported lazily: it needs numpy)."""

from __future__ import annotations

from typing import Any

__all__ = ["Scheduler", "ScheduleResult", "SchedulingQueue"]


def __getattr__(name: str) -> Any:
    if name in ("Scheduler", "ScheduleResult"):
        from . import scheduler

        return getattr(scheduler, name)
    if name == "SchedulingQueue":
        from .queue import SchedulingQueue

        return SchedulingQueue
    raise AttributeError(name)
