"""Key substitution in strings (``${pod/labels/app}``, ``$pod/namespace``) against a container,
as the balloons policy's ``groupBy`` uses it.

Upstream: containers/nri-plugins v0.14.0 ``pkg/apis/resmgr/v1alpha1/expression.go`` (``Expand``),
``pkg/resmgr/cache/container.go`` (``Expand``, ``EvalRef``).
"""

from __future__ import annotations

from ...resmgr.expression import Evaluable, key_value


class ExpandError(ValueError):
    """A malformed or (when it must resolve) unresolvable reference."""


def expand(src: str, subject: Evaluable, must_resolve: bool) -> str:
    """``Expand``: each ``$key`` / ``${key}`` replaced by its value (non-recursively); an
    unresolvable key is an error with ``must_resolve``, else the empty string."""
    result: list[str] = []
    key: list[str] | None = None
    curly = False

    def subst() -> None:
        name = "".join(key or [])
        value, ok = key_value(name, subject)
        if not ok and must_resolve:
            raise ExpandError(f'invalid substitution "{src}", unresolvable key "{name}"')
        result.append(value)

    for i, ch in enumerate(src):
        if key is None:
            if ch == "$":
                key = []
            else:
                result.append(ch)
            continue
        if ch == "$":
            if curly:
                raise ExpandError(f'invalid substitution "{src}", unterminated \'}}\' (at "{src[i:]}")')
            if not key:
                result.append("$")
                key = None
                continue
            subst()
            key = []
        elif ch == "{":
            if curly or key:
                raise ExpandError(f'invalid substitution "{src}", unexpected \'{{\' (at "{src[i:]}")')
            curly = True
        elif ch == "}":
            if not curly or not key:
                raise ExpandError(f'invalid substitution "{src}", unexpected \'}}\' (at "{src[i:]}")')
            subst()
            curly = False
            key = None
        else:
            key.append(ch)
    if key is not None:
        if curly or not key:
            raise ExpandError(f'invalid substitution "{src}", unterminated reference')
        subst()
    return "".join(result)
