from typing import Any

def pick(n: int, start: int, to_find: int, static_fail: Any, npods: Any, pods_alloc: Any, wants: tuple[Any, ...],
         own: tuple[Any, ...], score: tuple[Any, ...] | None, feasible_out: Any, scores_out: Any,
         top_out: Any) -> tuple[int, int, int]: ...
