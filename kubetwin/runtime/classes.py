"""RDT and Block I/O classes of a container, through the runtime-cri part's interface.

The runtime (containerd, CRI-O) gives a container the RDT and Block I/O class its pod annotates
(``rdtclass.cri.resources.beta.kubernetes.io/...``, ``blockio.resources.beta.kubernetes.io/...``)
unless an NRI plugin sets another; the goresctrl configuration (``--rdt``, ``--blockio``) says
what each class means (schemata, ``io.*`` limits). Those formats live in
:mod:`kubetwin.runtime.rdt` and :mod:`kubetwin.runtime.blockio` (the runtime-cri part); this module
only calls their agreed functions, and refuses the inputs that need them while they are absent,
rather than answering without them.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

from ..errors import InputError

RDT_ANNOTATION = "rdtclass.cri.resources.beta.kubernetes.io"
BLOCKIO_ANNOTATION = "blockio.resources.beta.kubernetes.io"


def _module(name: str) -> Any:
    try:
        return importlib.import_module(f"kubetwin.runtime.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"kubetwin.runtime.{name}":
            raise
        return None


def _missing(what: str, path: str, file: str | None = None) -> InputError:
    return InputError(f"{what} need kubetwin's RDT / Block I/O model (kubetwin.runtime.rdt, .blockio), which is "
                      "not in this build", path=path, file=file,
                      fix="drop the option or annotation, or use a kubetwin with the runtime-cri part")


def load_rdt(path: str | None) -> Any:
    if path is None:
        return None
    mod = _module("rdt")
    if mod is None:
        raise _missing("RDT classes", "--rdt", path)
    return mod.load_rdt_config(path)


def load_blockio(path: str | None) -> Any:
    if path is None:
        return None
    mod = _module("blockio")
    if mod is None:
        raise _missing("Block I/O classes", "--blockio", path)
    return mod.load_blockio_config(path)


def check_annotations(annotations: Mapping[str, str], *, file: str | None, path: str) -> None:
    """Refuse the runtime's class annotations when the module reading them is absent."""
    for key in annotations:
        if key.startswith(RDT_ANNOTATION) and _module("rdt") is None:
            raise _missing("RDT class annotations", f'{path}.annotations["{key}"]', file)
        if key.startswith(BLOCKIO_ANNOTATION) and _module("blockio") is None:
            raise _missing("Block I/O class annotations", f'{path}.annotations["{key}"]', file)


def runtime_rdt_class(annotations: Mapping[str, str], container: str) -> str | None:
    mod = _module("rdt")
    return None if mod is None else mod.rdt_class_from_annotations(annotations, container)


def runtime_blockio_class(annotations: Mapping[str, str], container: str) -> str | None:
    mod = _module("blockio")
    return None if mod is None else mod.blockio_class_from_annotations(annotations, container)


def rdt_schemata(config: Any, class_name: str, machine: Any) -> dict[str, str] | None:
    if config is None or not class_name:
        return None
    return config.schemata(class_name, machine)


def blockio_lines(config: Any, class_name: str, devices: Any) -> dict[str, str] | None:
    if config is None or not class_name:
        return None
    return config.cgroup_v2(class_name, devices)


def check_class(config: Any, class_name: str | None, what: str, *, file: str | None, path: str) -> None:
    """A class the configuration does not define is refused (the runtime fails the container)."""
    if config is None or not class_name:
        return
    names = list(config.class_names())
    if class_name not in names:
        from ..model.strict import unknown_key_error

        raise unknown_key_error(class_name, names, path=path, file=file, what=f"{what} class")
