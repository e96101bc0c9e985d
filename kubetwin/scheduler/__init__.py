"""kube-scheduler: the framework, its plugins, the explained one-shot cycle (:mod:`.cycle`) and the
long-running :class:`Scheduler` simulations drive (imported lazily: it needs numpy)."""

from __future__ import annotations

from typing import Any

__all__ = ["Scheduler", "ScheduleResult", "SchedulingQueue", "Profile", "profile_from_config",
           "register_plugin_events", "register_vector_filter"]


def __getattr__(name: str) -> Any:
    if name in ("Scheduler", "ScheduleResult"):
        from . import scheduler

        return getattr(scheduler, name)
    if name in ("SchedulingQueue", "register_plugin_events"):
        from . import queue

        return getattr(queue, name)
    if name in ("Profile", "profile_from_config"):
        from . import profile

        return getattr(profile, name)
    if name == "register_vector_filter":
        from .vector import register_vector_filter

        return register_vector_filter
    raise AttributeError(name)
