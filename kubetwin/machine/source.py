"""``load_machine(source)``: one entry point for every machine description, kind detected.

``source`` may be a compact spec (``2s1n8c2t:mem=64Gi``), ``/`` or ``/sys`` (this machine),
a sysfs dump (a folder holding ``sys/``, or a ``.tar``/``.tar.bz2``/``.tar.gz`` of one), an
hwloc XML file, a cAdvisor MachineInfo JSON file, or ``-`` (MachineInfo JSON or hwloc XML
on stdin). Files are recognised by content, not by name.

Not an upstream module: kubetwin's own entry point to the machine readers.
"""

from __future__ import annotations

import sys
import tarfile
from pathlib import Path

from ..errors import InputError
from .model import Machine

MAX_BYTES = 128 * 1024 * 1024


def _from_bytes(data: bytes, file: str) -> Machine:
    head = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"<"):
        from .hwloc import read_hwloc_xml

        return read_hwloc_xml(data, file=file)
    if head.startswith(b"{"):
        from .machineinfo import read_machineinfo

        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text (byte {exc.start})", file=file) from None
        return read_machineinfo(text, file=file)
    if not head:
        raise InputError("file is empty", file=file)
    raise InputError("not a machine description (expected MachineInfo JSON, hwloc XML or a sysfs tarball)",
                     file=file, fix="see `kubetwin topology --help` for the accepted sources")


def load_machine(source: str) -> Machine:
    """A :class:`Machine` from any supported source (see the module docstring); errors name it."""
    try:
        return _load(source)
    except InputError as exc:
        from .spec import looks_like_spec

        raise exc.in_file(None if looks_like_spec(source) else ("<stdin>" if source == "-" else source)) from None


def _load(source: str) -> Machine:
    from .spec import looks_like_spec, parse_spec

    if source == "-":
        return _from_bytes(sys.stdin.buffer.read(MAX_BYTES + 1), "<stdin>")
    p = Path(source)
    try:
        is_dir, is_file = p.is_dir(), p.is_file()
    except OSError:   # e.g. a name too long for a path (ENAMETOOLONG): not a file, maybe a spec
        is_dir = is_file = False
    if source in ("/", "/sys") or is_dir:
        from .sysfs import load_sysfs

        return load_sysfs(source)
    if is_file:
        try:
            is_tar = tarfile.is_tarfile(source)
        except OSError:
            is_tar = False
        if is_tar:
            from .sysfs import load_sysfs

            return load_sysfs(source)
        try:
            with open(source, "rb") as f:
                data = f.read(MAX_BYTES + 1)
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", file=source) from None
        if len(data) > MAX_BYTES:
            raise InputError("file is too large for a machine description", file=source)
        return _from_bytes(data, source)
    if looks_like_spec(source):
        return parse_spec(source)
    raise InputError("no such file or directory, and not a machine spec", file=source,
                     fix='give a MachineInfo JSON, hwloc XML, sysfs folder/tarball, "/" or a spec like "2s1n8c2t"')


def load_live() -> Machine:
    """This machine, from ``/sys`` and ``/proc``."""
    from .sysfs import load_sysfs

    return load_sysfs("/")
