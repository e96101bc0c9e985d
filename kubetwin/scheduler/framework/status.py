"""The one result type of every extension point, as kube-scheduler's ``fwk.Status``.

Plugins return a :class:`Status` instead of raising: the hot path never unwinds, and the
code alone tells the framework whether preemption might help (``Unschedulable``) or not
(``UnschedulableAndUnresolvable``).

Upstream: ``k8s.io/kube-scheduler/framework/interface.go`` (``Code``, ``Status``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Code(IntEnum):
    """``fwk.Code``; the numeric order matches upstream (used only for display)."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


@dataclass(frozen=True, slots=True)
class Status:
    code: Code = Code.Success
    reasons: tuple[str, ...] = ()
    #: The plugin that produced a non-success status (filled in by the framework).
    plugin: str = ""

    @property
    def is_success(self) -> bool:
        return self.code == Code.Success

    @property
    def is_skip(self) -> bool:
        return self.code == Code.Skip

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (``IsRejected``)."""
        return self.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending)

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> "Status":
        return Status(self.code, self.reasons, plugin)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"code": self.code.name}
        if self.reasons:
            out["reasons"] = list(self.reasons)
        return out


SUCCESS = Status()
SKIP = Status(Code.Skip)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.Unschedulable, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UnschedulableAndUnresolvable, reasons)


def error(*reasons: str) -> Status:
    return Status(Code.Error, reasons)
