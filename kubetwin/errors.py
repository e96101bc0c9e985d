"""Errors that carry where in which input they happened.

Every user-facing failure names the file, the field path inside the object and, where we
know one, the fix — the CLI prints ``str(error)`` and exits with status 1, never a traceback.

Not an upstream module: kubetwin's own error type.
"""

from __future__ import annotations


class KubetwinError(Exception):
    """Base of every error kubetwin raises on purpose."""


class InputError(KubetwinError):
    """Bad input: malformed files, invalid fields, impossible configurations.

    ``path`` is a Kubernetes-style field path (``spec.containers[1].resources.limits.cpu``);
    ``file`` is the input it came from. Both may be filled in later by callers that know
    them (:meth:`within`, :meth:`in_file`), so deep parsing code needs to know neither.
    """

    def __init__(self, message: str, *, path: str = "", file: str | None = None, fix: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.file = file
        self.fix = fix

    def within(self, prefix: str) -> "InputError":
        """Prefix the field path with the path of the enclosing object."""
        if prefix:
            if not self.path:
                self.path = prefix
            elif self.path.startswith("["):
                self.path = prefix + self.path
            else:
                self.path = f"{prefix}.{self.path}"
        return self

    def in_file(self, file: str | None) -> "InputError":
        if file and not self.file:
            self.file = file
        return self

    def __str__(self) -> str:
        parts = [p for p in (self.file, self.path) if p]
        text = ": ".join(parts + [self.message])
        if self.fix:
            text += f" (fix: {self.fix})"
        return text


def join_path(prefix: str, name: str | int) -> str:
    """Append a field name or list index to a field path."""
    if isinstance(name, int):
        return f"{prefix}[{name}]"
    return f"{prefix}.{name}" if prefix else name
