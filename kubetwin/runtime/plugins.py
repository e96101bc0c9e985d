"""Loading Python NRI plugins from files (``--plugin FILE.py[:Class]``).

A plugin file defines one subclass of :class:`kubetwin.runtime.nri.stub.Plugin` (or names one
after a colon); kubetwin instantiates it without arguments. Its ``name`` and ``index`` register
it with the runtime. A file that does not load — a syntax error, an exception at import, no
plugin class — is refused with the file named and the error's line, never a traceback.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from pathlib import Path

from ..errors import InputError
from .nri.stub import Plugin


def load_plugin(spec: str) -> tuple[Plugin, str]:
    """(an instance, a digest of the file and class for the state folder)."""
    path, _, cls_name = spec.partition(":")
    if ":" in spec and len(spec) > 2 and spec[1] == ":" and spec[2] in "\\/":  # a Windows drive
        path, _, cls_name = spec[2:].partition(":")
        path = spec[:2] + path
    p = Path(path)
    if not p.is_file():
        raise InputError("no such plugin file", file=path, path="--plugin")
    source = p.read_bytes()
    name = f"kubetwin_nri_plugin_{hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:12]}"
    mod_spec = importlib.util.spec_from_file_location(name, p)
    if mod_spec is None or mod_spec.loader is None:
        raise InputError("cannot load as a Python module", file=path, path="--plugin")
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules[name] = module
    try:
        mod_spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise InputError(f"syntax error: {exc.msg} (line {exc.lineno})", file=path, path="--plugin") from None
    except Exception as exc:  # noqa: BLE001 - the plugin's own code: report it, no traceback
        line = _line_in(exc, str(p))
        raise InputError(f"loading the plugin failed: {type(exc).__name__}: {exc}{line}", file=path,
                         path="--plugin") from None
    classes = [v for v in vars(module).values()
               if isinstance(v, type) and issubclass(v, Plugin) and v is not Plugin and v.__module__ == name]
    if cls_name:
        chosen = [c for c in classes if c.__name__ == cls_name]
        if not chosen:
            raise InputError(f'no Plugin subclass "{cls_name}" in the file', file=path, path="--plugin",
                             fix="classes: " + (", ".join(c.__name__ for c in classes) or "none"))
        cls = chosen[0]
    else:
        if len(classes) != 1:
            raise InputError(f"the file defines {len(classes)} Plugin subclasses", file=path, path="--plugin",
                             fix="name one: --plugin FILE.py:ClassName" if classes else
                             "define a subclass of kubetwin.runtime.nri.stub.Plugin")
        cls = classes[0]
    try:
        plugin = cls()
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"creating {cls.__name__}() failed: {type(exc).__name__}: {exc}", file=path,
                         path="--plugin") from None
    digest = hashlib.sha256(source + b"\x00" + cls.__name__.encode()).hexdigest()
    return plugin, digest


def _line_in(exc: BaseException, file: str) -> str:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == file:
            return f" (line {frame.lineno})"
    return ""
