"""The ``copy`` argument of the writing ops: whether to write into the input itself."""

from __future__ import annotations

from ._backends import Backend
from ._errors import type_error, value_error
from ._typing import Array


def writes_in_place(
    backend: Backend, op: str, x: Array, copy: bool | None, name: str = "input"
) -> bool:
    """Resolve ``copy``: whether the op writes into ``x`` itself.

    ``copy=True`` never writes into ``x``; ``copy=False`` must, and fails for arrays that
    cannot be written, saying why (:meth:`Backend.why_not_writable`); ``copy=None`` writes
    in place where possible. Runs before anything is written.
    """
    if copy is True:
        return False
    if copy is not None and copy is not False:
        raise type_error(op, "copy", copy, "True, False or None")
    reason = backend.why_not_writable(x)
    if reason is None:
        return True
    if copy is None:
        return False
    raise value_error(
        op,
        "copy",
        False,
        f"{name} ({type(x).__module__}.{type(x).__name__}) cannot be written in place: "
        f"{reason}; pass copy=True for a new array or copy=None to copy only when needed",
    )


def read_before_writing(backend: Backend, x: Array, *arrays: Array) -> tuple[Array, ...]:
    """``arrays``, each copied where it may share memory with ``x``, which is about to be
    written in place.

    An in-place op must give what applying the values read before the call gives, even
    when the updates view the array they go into (vLLM copies blocks within one cache
    this way): native scatters read them while they write, in chunks or not at all (torch
    refuses overlapping memory). One copy of the overlapping arrays makes every backend
    exact; arrays that do not overlap cost one bounds comparison.
    """
    return tuple(backend.copy(a) if backend.shares_memory(a, x) else a for a in arrays)
