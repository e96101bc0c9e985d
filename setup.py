"""The optional C kernel of the fused scheduling cycle (``kubetwin/_kernel/_fused.c``).

Everything else about the package is in ``pyproject.toml``. The extension is optional: where it
cannot be built (no C compiler or Python headers), installing goes on and kubetwin runs its
pure-Python twin (``kubetwin/_kernel/fused_py.py``), which gives the same answers.
"""

import sys

from setuptools import Extension, setup

# int64 arithmetic wraps as numpy's does; no fused multiply-add, so float64 steps round as numpy's
ARGS = [] if sys.platform == "win32" else ["-O2", "-fwrapv", "-ffp-contract=off"]

setup(ext_modules=[Extension("kubetwin._kernel._fused", ["kubetwin/_kernel/_fused.c"], optional=True,
                             extra_compile_args=ARGS)])
