"""Caches of static facts (plans, dtype kinds) that stay out of the way of tracers.

Plans depend on shapes, dtypes and attributes only, so they are computed once per key.
While ``torch.compile`` traces a call, the cache is bypassed: Dynamo traces the plain
function (it constant-folds it into the graph) and warns about caches it cannot trace.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def torch_is_compiling() -> bool:
    """Whether ``torch.compile`` is tracing the current call (False without torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and bool(torch.compiler.is_compiling())


def static_cache(maxsize: int = 512) -> Callable[[F], F]:
    """``functools.lru_cache`` for functions of static (hashable) arguments only."""

    def decorate(fn: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def lookup(*args: Any) -> Any:
            if torch_is_compiling():
                return fn(*args)
            return cached(*args)

        return lookup  # type: ignore[return-value]

    return decorate
