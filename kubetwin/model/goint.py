"""Go's integer parsing (``strconv.Atoi`` / ``strconv.ParseInt(s, 10, 64)``) for inputs Go parses.

Python's ``int`` also takes surrounding spaces, ``1_000`` and non-ASCII digits, and never
overflows; where the kubelet parses a string with ``strconv``, kubetwin must accept exactly what
it accepts (differential testing against ``k8s.io/utils/cpuset.Parse``, issue 14).
"""

from __future__ import annotations

import re
from typing import Final

_GO_INT: Final = re.compile(r"[+-]?[0-9]+\Z")
_MIN_INT64: Final = -(1 << 63)
_MAX_INT64: Final = (1 << 63) - 1


def atoi(text: str) -> int | None:
    """``strconv.Atoi`` on a 64-bit platform: ASCII digits, an optional sign, within int64; else None."""
    if not _GO_INT.match(text) or len(text.lstrip("+-").lstrip("0")) > 19:  # past int64 (and int()'s digit limit)
        return None
    value = int(text)
    return value if _MIN_INT64 <= value <= _MAX_INT64 else None
