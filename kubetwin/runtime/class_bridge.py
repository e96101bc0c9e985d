"""RDT and Block I/O classes of a container in ``kubetwin runtime``: the runtime's choice and its meaning.

The runtime (containerd) gives a container the RDT and Block I/O class its pod annotates
(``rdt.resources.beta.kubernetes.io/...``, ``blockio.resources.beta.kubernetes.io/...``, read by
:mod:`kubetwin.runtime.rdt` and :mod:`kubetwin.runtime.blockio` as goresctrl reads them) unless an
NRI plugin sets another; the goresctrl configuration (``--rdt``, ``--blockio``) says what each class
means (schemata, ``io.*`` lines). This module is the seam the runtime command calls.

Not an upstream module: the seam between ``kubetwin runtime`` and the goresctrl class readers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from . import blockio as _blockio
from . import rdt as _rdt

if TYPE_CHECKING:
    from ..machine.model import Machine
    from .resctrl import ResctrlInfo

RDT_ANNOTATION = _rdt.RDT_POD_ANNOTATION
BLOCKIO_ANNOTATION = _blockio.BLOCKIO_POD_ANNOTATION


def load_rdt(path: str | None) -> _rdt.RdtConfig | None:
    return None if path is None else _rdt.load_rdt_config(path)


def load_blockio(path: str | None) -> _blockio.BlockIOConfig | None:
    return None if path is None else _blockio.load_blockio_config(path)


def check_annotations(annotations: Mapping[str, str], *, file: str | None, path: str) -> None:
    """Nothing to refuse up front: both class readers are present (kept as the command's seam)."""


def runtime_rdt_class(annotations: Mapping[str, str], container: str) -> str | None:
    return _rdt.rdt_class_from_annotations(annotations, container)


def runtime_blockio_class(annotations: Mapping[str, str], container: str) -> str | None:
    return _blockio.blockio_class_from_annotations(annotations, container)


def rdt_schemata(config: _rdt.RdtConfig | None, class_name: str,
                 machine: Machine | ResctrlInfo) -> dict[str, str] | None:
    if config is None or not class_name:
        return None
    return config.schemata(class_name, machine)


def blockio_lines(config: _blockio.BlockIOConfig | None, class_name: str, devices: Any) -> dict[str, str] | None:
    if config is None or not class_name:
        return None
    return config.cgroup_v2(class_name, devices)


def check_class(config: _rdt.RdtConfig | _blockio.BlockIOConfig | None, class_name: str | None, what: str, *, file: str | None, path: str) -> None:
    """A class the configuration does not define is refused (the runtime fails the container)."""
    if config is None or not class_name:
        return
    names = list(config.class_names())
    if class_name not in names:
        from ..model.strict import unknown_key_error

        raise unknown_key_error(class_name, names, path=path, file=file, what=f"{what} class")
