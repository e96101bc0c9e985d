"""kube-scheduler (``pkg/scheduler``): the framework and its runtime (:mod:`.framework`), the
plugins, one folder each (:mod:`.plugins`), the cycle (:mod:`.schedule_one`), the cache and
queue (:mod:`.backend`), the shortcuts that keep a simulation fast (:mod:`.fastpath`), the
explained one-shot cycle (:mod:`.cycle`) and the long-running :class:`Scheduler` simulations
drive (imported lazily: it needs numpy)."""

from __future__ import annotations

from typing import Any

__all__ = ["Scheduler", "ScheduleResult", "SchedulingQueue", "Profile", "profile_from_config",
           "register_plugin_events", "register_vector_filter"]


def __getattr__(name: str) -> Any:
    if name == "Scheduler":
        from .scheduler import Scheduler

        return Scheduler
    if name == "ScheduleResult":
        from .schedule_one import ScheduleResult

        return ScheduleResult
    if name in ("SchedulingQueue", "register_plugin_events"):
        from .backend import queue

        return getattr(queue, name)
    if name in ("Profile", "profile_from_config"):
        from . import profile

        return getattr(profile, name)
    if name == "register_vector_filter":
        from .fastpath.vector import register_vector_filter

        return register_vector_filter
    raise AttributeError(name)
