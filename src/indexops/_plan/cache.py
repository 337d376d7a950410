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
    if _IS_COMPILING:
        return _IS_COMPILING[0]()
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    compiler = getattr(torch, "compiler", None)  # absent while torch is being imported
    if compiler is None:
        return False
    _IS_COMPILING.append(compiler.is_compiling)  # asked on every call: looked up once
    return bool(compiler.is_compiling())


_IS_COMPILING: list[Callable[[], bool]] = []


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
