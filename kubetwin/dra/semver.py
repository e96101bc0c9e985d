"""Semantic versions as Kubernetes' CEL semver library sees them (blang/semver v4).

Only what DRA selectors and ``matchAttribute`` need: strict parsing, the optional
normalisation of ``semver(s, true)`` (leading ``v``, missing minor/patch, leading zeros),
and SemVer 2.0 precedence (build metadata ignored).

Upstream: ``staging/src/k8s.io/apiserver/pkg/cel/library/semverlib.go`` over
github.com/blang/semver/v4 ``semver.go``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import total_ordering

_NUM = r"(0|[1-9]\d*)"
_PRE_ID = r"(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_STRICT = re.compile(rf"^{_NUM}\.{_NUM}\.{_NUM}(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


class SemverError(ValueError):
    pass


@total_ordering
@dataclass(frozen=True, slots=True)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[str | int, ...] = ()
    build: str = ""

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            text += "+" + self.build
        return text

    def key(self) -> tuple:
        # A version without pre-release ranks above any pre-release of the same core.
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 1 if not self.pre else 0, pre)

    def compare(self, other: "Semver") -> int:
        a, b = self.key(), other.key()
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self.key() == other.key()

    def __lt__(self, other: "Semver") -> bool:
        return self.key() < other.key()

    def __hash__(self) -> int:
        return hash(self.key())


def parse_semver(text: str, normalize: bool = False) -> Semver:
    """``semver.Parse`` (strict), or with ``normalize`` the library's lenient form."""
    if normalize:
        text = _normalize(text)
    m = _STRICT.match(text)
    if not m:
        raise SemverError(f"invalid semver: {text}")
    pre: tuple[str | int, ...] = ()
    if m.group(4):
        pre = tuple(int(p) if p.isdigit() else p for p in m.group(4).split("."))
    return Semver(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, m.group(5) or "")


def _normalize(text: str) -> str:
    """Kubernetes' semver(…, true): strip ``v``, pad missing parts, drop leading zeros."""
    text = text.removeprefix("v")
    core, sep, rest = _split_core(text)
    parts = core.split(".")
    if len(parts) > 3 or not all(p.isdigit() for p in parts):
        return text
    parts = [str(int(p)) for p in parts] + ["0"] * (3 - len(parts))
    return ".".join(parts) + sep + rest


def _split_core(text: str) -> tuple[str, str, str]:
    for i, ch in enumerate(text):
        if ch in "-+":
            return text[:i], ch, text[i + 1:]
    return text, "", ""
