"""StableHLO ``dynamic_slice`` and ``dynamic_update_slice``: one window at clamped starts."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

from ._backend import as_tuple, index_ints, namespace, writes_in_place
from ._errors import type_error, value_error
from ._rows import assign_window

Array = Any


def dynamic_slice(operand: Array, start_indices: Any, slice_sizes: Sequence[int]) -> Array:
    """The window of ``slice_sizes`` at ``start_indices`` (StableHLO ``dynamic_slice``).

    Each start is clamped to ``[0, dim - size]``, so the window always lies inside
    ``operand``; a negative start becomes 0 (unlike ``jax.lax``, which counts it from the
    end).

    Parameters
    ----------
    operand : array
    start_indices : sequence of int or 0-d integer arrays, or a 1-D integer array
        One start per dim of ``operand``.
    slice_sizes : sequence of int
        One size per dim, each in ``[0, dim]``.

    Returns
    -------
    array
        Of ``operand``'s namespace, device and dtype, shape ``slice_sizes``.

    Examples
    --------
    >>> import numpy as np
    >>> import indexops
    >>> operand = np.arange(16).reshape(4, 4)
    >>> indexops.dynamic_slice(operand, (-1, 3), (2, 2))
    array([[2, 3],
           [6, 7]])
    """
    op = "dynamic_slice"
    xp = namespace(op, operand=operand)
    sizes = as_tuple(op, "slice_sizes", slice_sizes)
    shape = tuple(operand.shape)
    starts = clamped_starts(op, xp, start_indices, shape, sizes, "slice_sizes", ("C2", "C4"))
    window = tuple(slice(s, s + n) for s, n in zip(starts, sizes))
    return operand[window]


def dynamic_update_slice(
    operand: Array, update: Array, start_indices: Any, *, copy: bool | None = True
) -> Array:
    """Write ``update`` into ``operand`` at ``start_indices`` (StableHLO).

    Each start is clamped to ``[0, dim - update_dim]``, so ``update`` always lands
    inside ``operand``; a negative start becomes 0.

    Parameters
    ----------
    operand : array
    update : array
        Same rank and dtype as ``operand``, each dim at most ``operand``'s.
    start_indices : sequence of int or 0-d integer arrays, or a 1-D integer array
    copy : bool or None
        As in :func:`scatter`: ``True`` returns a new array, ``False`` writes into
        ``operand``, ``None`` writes in place where possible.

    Examples
    --------
    >>> import numpy as np
    >>> import indexops
    >>> indexops.dynamic_update_slice(np.zeros((4, 4), int), np.ones((2, 2), int), (-1, 3))
    array([[0, 0, 1, 1],
           [0, 0, 1, 1],
           [0, 0, 0, 0],
           [0, 0, 0, 0]])
    """
    op = "dynamic_update_slice"
    xp = namespace(op, operand=operand, update=update)
    if update.dtype != operand.dtype:
        raise type_error(
            op, "update.dtype", str(update.dtype), f"the dtype of operand ({operand.dtype})", "C2"
        )
    if update.ndim != operand.ndim:
        raise value_error(
            op, "update.shape", tuple(update.shape), f"rank {operand.ndim} like operand", "C3"
        )
    sizes = tuple(update.shape)
    starts = clamped_starts(
        op, xp, start_indices, tuple(operand.shape), sizes, "update.shape", ("C4", "C6")
    )
    in_place = writes_in_place(op, operand, copy, name="operand")
    key = tuple(slice(s, s + n) for s, n in zip(starts, sizes))
    return assign_window(xp, operand, key, update, in_place=in_place)


def clamped_starts(
    op: str,
    xp: ModuleType,
    start_indices: Any,
    shape: tuple[int, ...],
    sizes: tuple[int, ...],
    sizes_name: str,
    rules: tuple[str, str],
) -> tuple[int, ...]:
    """Validate starts and window sizes, then clamp each start to ``[0, dim - size]``.

    ``rules`` are the constraint labels of the start count and of the size range.
    """
    rank = len(shape)
    starts = index_ints(op, "start_indices", start_indices)
    if len(starts) != rank:
        raise value_error(
            op, "start_indices", starts, f"needs one start per operand dim ({rank})", rules[0]
        )
    if len(sizes) != rank:
        raise value_error(
            op, sizes_name, sizes, f"needs one size per operand dim ({rank})", rules[0]
        )
    for d, (size, dim) in enumerate(zip(sizes, shape)):
        if not 0 <= size <= dim:
            raise value_error(
                op,
                sizes_name,
                sizes,
                f"entry {d} must be in [0, {dim}] (operand shape {shape})",
                rules[1],
            )
    return tuple(min(max(s, 0), dim - size) for s, dim, size in zip(starts, shape, sizes))
