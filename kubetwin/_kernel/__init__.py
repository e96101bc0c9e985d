"""Compiled kernels with pure-Python twins that give identical results.

:func:`pick` is the fused scheduling cycle's inner loop (:mod:`kubetwin.scheduler.fastpath.fused`):
the C extension ``_fused`` where it was built (``pip install -e .`` builds it when a C compiler
and the Python headers are at hand; the build is optional), else :func:`.fused_py.pick`. Setting
the environment variable ``KUBETWIN_PURE_PYTHON`` (to anything but empty or ``0``) forces the
pure-Python twin; :data:`COMPILED` says which one runs.

Not an upstream module: upstream's loop is ``pkg/scheduler/schedule_one.go``'s
``findNodesThatPassFilters``, ``prioritizeNodes`` and ``selectHost``.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from . import fused_py

#: the pure-Python twin, always at hand (tests compare both)
pick_py: Callable[..., tuple[int, int, int]] = fused_py.pick
pick: Callable[..., tuple[int, int, int]] = pick_py
pick_c: Callable[..., tuple[int, int, int]] | None = None
#: the compiled kernel runs
COMPILED = False

if os.environ.get("KUBETWIN_PURE_PYTHON", "") in ("", "0"):
    try:
        from . import _fused

        pick_c = _fused.pick
    except ImportError:   # not built here (no compiler at set-up): the pure-Python twin runs
        pick_c = None
    if pick_c is not None:
        pick = pick_c
        COMPILED = True


def use(compiled: bool) -> Any:
    """Run the compiled kernel (when built) or the pure-Python twin from now on; returns the
    previous choice (tests switch and switch back)."""
    global pick, COMPILED
    before = COMPILED
    if compiled and pick_c is not None:
        pick, COMPILED = pick_c, True
    else:
        pick, COMPILED = pick_py, False
    return before


def current(module: Any, interface: int) -> bool:
    """Whether a built kernel speaks the interface its Python side expects (``INTERFACE``): a
    build older than the code (pulled without ``scripts/setup``) is not used — its Python twin
    runs, with the same answers — and a warning says how to rebuild it."""
    if getattr(module, "INTERFACE", None) == interface:
        return True
    import warnings

    warnings.warn(f"kubetwin: the C kernel {module.__name__} was built from older sources and is not used "
                  "(the Python twin runs, same results, slower): rebuild it with scripts/setup "
                  "(or pip install -e .)", RuntimeWarning, stacklevel=2)
    return False
