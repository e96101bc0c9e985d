"""The optional C kernels: the fused scheduling cycle (``kubetwin/_kernel/_fused.c``), the
generic steps of a runtime node's copy (``kubetwin/_kernel/_graphcopy.c``, twin: the Python
copier of :mod:`kubetwin.sim.runtime_copy`) and the balloons policy's tree search
(``kubetwin/_kernel/_treesearch.c``, twin: :meth:`kubetwin.runtime.policies.balloons.fast.FlatTree._search_masks`).

Everything else about the package is in ``pyproject.toml``. The extension is optional: where it
cannot be built (no C compiler or Python headers), installing goes on and kubetwin runs its
pure-Python twin (``kubetwin/_kernel/fused_py.py``), which gives the same answers.
"""

import sys

from setuptools import Extension, setup

# int64 arithmetic wraps as numpy's does; no fused multiply-add, so float64 steps round as numpy's
ARGS = [] if sys.platform == "win32" else ["-O2", "-fwrapv", "-ffp-contract=off"]

setup(ext_modules=[Extension("kubetwin._kernel._fused", ["kubetwin/_kernel/_fused.c"], optional=True,
                             extra_compile_args=ARGS),
                   Extension("kubetwin._kernel._graphcopy", ["kubetwin/_kernel/_graphcopy.c"], optional=True,
                             extra_compile_args=[] if sys.platform == "win32" else ["-O2"]),
                   Extension("kubetwin._kernel._treesearch", ["kubetwin/_kernel/_treesearch.c"], optional=True,
                             extra_compile_args=[] if sys.platform == "win32" else ["-O2"])])
