from typing import Any, Callable

INTERFACE: int

def configure(atoms: set[type], plain: set[type], owns: dict[type, Callable[[Any, dict[int, Any]], Any]],
              immutable: dict[int, Any], fallback: Callable[[Any, dict[int, Any]], Any], keep: set[type],
              shapes: dict[type, tuple[bool, frozenset[str]]], slotted: dict[type, tuple[str, ...]],
              remember: Callable[[Any], None] | None = None) -> None: ...
def copy(x: Any, memo: dict[int, Any]) -> Any: ...
def copy_detached(x: Any, memo: dict[int, Any]) -> Any: ...
