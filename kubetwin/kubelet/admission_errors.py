"""Admission errors whose type name is the pod's rejection reason (``cm/admission/errors.go``).

An error that is not one of these becomes ``UnexpectedAdmissionError`` with the kubelet's
"Allocate failed due to ..., which is unexpected" wrapping.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from ..model.pod import Container


class AdmissionError(Exception):
    """A typed rejection: ``reason`` is what the pod status shows, ``str(err)`` the message."""

    reason = "UnexpectedAdmissionError"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class KubeletHang(Exception):
    """Upstream code would never return here (an endless loop): not a verdict but the lack of one.

    Never turned into an admission error; the admission reports the pod as hung and the node as
    admitting nothing after it (docs/upstream-bugs.md).
    """


class TopologyAffinityError(AdmissionError):
    """The merged hint was not admitted. ``container`` (None: pod scope) and ``hints`` (each
    provider's hints) are what the Topology Manager had in hand: enough to explain the refusal
    (``kubelet.admission_why``) without changing the kubelet's own message."""

    reason = "TopologyAffinityError"

    def __init__(self, message: str = "Resources cannot be allocated with Topology locality"):
        super().__init__(message)
        self.container: Container | None = None
        self.hints: list[tuple[str, Any]] = []  # (provider, its hints as it gave them)

    def with_hints(self, container: Container | None, hints: Sequence[tuple[str, Any]]) -> "TopologyAffinityError":
        self.container = container
        self.hints = list(hints)
        return self


class SMTAlignmentError(AdmissionError):
    reason = "SMTAlignmentError"


class EmptyPodSharedPoolError(AdmissionError):
    reason = "EmptyPodSharedPoolError"


class UnexpectedAdmissionError(AdmissionError):
    reason = "UnexpectedAdmissionError"


def admit_result(err: Exception) -> tuple[str, str]:
    """(reason, message) for a failed allocation, as ``admission.GetPodAdmitResult`` builds them."""
    if isinstance(err, AdmissionError) and type(err) is not UnexpectedAdmissionError and type(err) is not AdmissionError:
        return err.reason, err.message
    text = err.message if isinstance(err, AdmissionError) else str(err)
    return "UnexpectedAdmissionError", f"Allocate failed due to {text}, which is unexpected"
