from typing import Any

INTERFACE: int

def build(masks: tuple[tuple[int, ...], ...], children: tuple[tuple[tuple[int, ...], ...], ...],
          ranks: tuple[tuple[int, ...], ...], only_child: tuple[bool, ...]) -> Any: ...
def search(tree: Any, balancing: bool, current: int, free: int, delta: int) -> int: ...
