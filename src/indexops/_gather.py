"""StableHLO ``gather``."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import array_api_compat as compat

from ._backend import as_int, as_tuple, check_integer_array, has_kind, namespace
from ._errors import value_error
from ._rows import take_rows
from ._windows import (
    WindowPlan,
    all_windows_inside,
    check_batching_dims,
    check_index_vector_dim,
    check_rank_sum,
    check_sorted,
    check_start_map_size,
    check_unique,
    check_window_rank,
    clamp_starts,
    make_plan,
    permuted,
    row_numbers,
    start_vectors,
    windows_in_bounds,
)

Array = Any
GATHER_MODES = ("clip", "fill", "promise_in_bounds")


def gather(
    operand: Array,
    start_indices: Array,
    *,
    offset_dims: Sequence[int],
    collapsed_slice_dims: Sequence[int],
    start_index_map: Sequence[int],
    index_vector_dim: int,
    slice_sizes: Sequence[int],
    operand_batching_dims: Sequence[int] = (),
    start_indices_batching_dims: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str = "clip",
    fill_value: Any = None,
) -> Array:
    """Gather windows of ``operand`` at ``start_indices`` (StableHLO ``gather``).

    Parameters
    ----------
    operand : array
        The array to read from.
    start_indices : array
        Integer array (any signed or unsigned dtype) of start vectors; the vectors lie
        along ``index_vector_dim`` (equal to its rank: an implicit trailing dim of size 1).
    offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, slice_sizes, \
operand_batching_dims, start_indices_batching_dims
        The StableHLO attributes, 0-based; every constraint C1..C23 is checked.
    indices_are_sorted, unique_indices : bool
        Hints; accepted for compatibility, the result does not depend on them.
    mode : {"clip", "fill", "promise_in_bounds"}
        ``"clip"`` (StableHLO) shifts each window back inside ``operand``; ``"fill"``
        fills a window that would leave ``operand`` with ``fill_value``;
        ``"promise_in_bounds"`` skips all bounds work (out-of-bounds starts are undefined).
    fill_value : scalar, optional
        For ``mode="fill"``. Default: NaN for floats, the minimum for signed integers, the
        maximum for unsigned integers, True for bool.

    Returns
    -------
    array
        Of ``operand``'s namespace, device and dtype; ``operand`` is not modified.

    Examples
    --------
    Rows 0 and 2 of a 3x3 matrix:

    >>> import numpy as np
    >>> import indexops
    >>> operand = np.array([[1, 4, 7], [2, 5, 8], [3, 6, 9]])
    >>> indexops.gather(operand, np.array([[0], [2]]), offset_dims=(1,),
    ...     collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1,
    ...     slice_sizes=(1, 3))
    array([[1, 4, 7],
           [3, 6, 9]])
    """
    xp = namespace("gather", operand=operand, start_indices=start_indices)
    check_integer_array("gather", "start_indices", start_indices, xp)
    if mode not in GATHER_MODES:
        raise value_error("gather", "mode", mode, f"one of {GATHER_MODES}")
    plan = _gather_plan(
        tuple(operand.shape),
        tuple(start_indices.shape),
        as_tuple("gather", "offset_dims", offset_dims),
        as_tuple("gather", "collapsed_slice_dims", collapsed_slice_dims),
        as_tuple("gather", "start_index_map", start_index_map),
        as_int("gather", "index_vector_dim", index_vector_dim),
        as_tuple("gather", "slice_sizes", slice_sizes),
        as_tuple("gather", "operand_batching_dims", operand_batching_dims),
        as_tuple("gather", "start_indices_batching_dims", start_indices_batching_dims),
    )
    fill = _fill_scalar(xp, operand.dtype, fill_value) if mode == "fill" else None
    return _execute(xp, plan, operand, start_indices, mode, fill)


def _execute(
    xp: ModuleType, plan: WindowPlan, operand: Array, indices: Array, mode: str, fill: Any
) -> Array:
    starts = start_vectors(xp, plan, indices)
    # clamping costs one elementwise pass; the fill mask a pass over the result, so it is
    # worth a check first (a sync on a GPU) whether any window sticks out
    inside = mode == "promise_in_bounds" or (
        mode == "fill" and all_windows_inside(xp, plan, starts)
    )
    safe = starts if inside else clamp_starts(xp, plan, starts)
    rows = xp.reshape(row_numbers(xp, plan, safe), (-1,))
    table = xp.reshape(operand, plan.rows_shape)
    windows = xp.reshape(take_rows(xp, table, rows), plan.intermediate_shape)
    if mode == "fill" and not inside:
        inside = windows_in_bounds(xp, plan, starts)
        inside = xp.reshape(inside, plan.batch_shape + (1,) * len(plan.window_shape))
        windows = xp.where(
            inside, windows, xp.asarray(fill, dtype=operand.dtype, device=compat.device(operand))
        )
    return permuted(xp, windows, plan.to_layout)


def _fill_scalar(xp: ModuleType, dtype: Any, fill_value: Any) -> Any:
    if fill_value is not None:
        return fill_value
    if has_kind(xp, dtype, "bool"):
        return True
    if has_kind(xp, dtype, "signed integer"):
        return xp.iinfo(dtype).min
    if has_kind(xp, dtype, "unsigned integer"):
        return xp.iinfo(dtype).max
    return float("nan")


@functools.lru_cache(maxsize=512)
def _gather_plan(
    operand_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    offset_dims: tuple[int, ...],
    collapsed_slice_dims: tuple[int, ...],
    start_index_map: tuple[int, ...],
    index_vector_dim: int,
    slice_sizes: tuple[int, ...],
    operand_batching_dims: tuple[int, ...],
    start_indices_batching_dims: tuple[int, ...],
) -> WindowPlan:
    """Validate every StableHLO gather constraint, then plan (cached per shapes)."""
    op = "gather"
    rank = len(operand_shape)
    index_rank = len(index_shape)
    check_rank_sum(
        op,
        "offset_dims, collapsed_slice_dims, operand_batching_dims",
        (offset_dims, collapsed_slice_dims, operand_batching_dims),
        rank,
        "operand",
        "C1",
    )
    check_index_vector_dim(op, index_vector_dim, index_rank, "C2")
    check_start_map_size(
        op,
        "start_index_map",
        start_index_map,
        index_shape,
        index_vector_dim,
        "start_indices",
        "C3",
    )
    check_unique(op, "offset_dims", offset_dims, "C4")
    check_sorted(op, "offset_dims", offset_dims, "C4")
    result_rank = index_rank - (index_vector_dim < index_rank) + len(offset_dims)
    check_window_rank(op, "offset_dims", offset_dims, result_rank, "C5")
    check_unique(
        op,
        "collapsed_slice_dims + operand_batching_dims",
        collapsed_slice_dims + operand_batching_dims,
        "C6",
    )
    check_sorted(op, "collapsed_slice_dims", collapsed_slice_dims, "C7")
    check_window_rank(op, "collapsed_slice_dims", collapsed_slice_dims, rank, "C8")
    if len(slice_sizes) != rank:
        raise value_error(
            op, "slice_sizes", slice_sizes, f"needs one size per operand dim ({rank})", "C20"
        )
    _check_at_most_one(op, "collapsed_slice_dims", collapsed_slice_dims, slice_sizes, "C9")
    check_sorted(op, "operand_batching_dims", operand_batching_dims, "C10")
    check_window_rank(op, "operand_batching_dims", operand_batching_dims, rank, "C11")
    _check_at_most_one(op, "operand_batching_dims", operand_batching_dims, slice_sizes, "C12")
    check_batching_dims(
        op,
        ("operand", "start_indices", "operand_batching_dims", "start_indices_batching_dims"),
        operand_batching_dims,
        start_indices_batching_dims,
        operand_shape,
        index_shape,
        index_vector_dim,
        ("C13", "C14", "C15", "C16", "C17"),
    )
    check_unique(
        op,
        "start_index_map + operand_batching_dims",
        start_index_map + operand_batching_dims,
        "C18",
    )
    check_window_rank(op, "start_index_map", start_index_map, rank, "C19")
    for d, (size, dim) in enumerate(zip(slice_sizes, operand_shape)):
        if not 0 <= size <= dim:
            raise value_error(
                op,
                "slice_sizes",
                slice_sizes,
                f"slice_sizes[{d}] must be in [0, {dim}] (operand shape {operand_shape})",
                "C21",
            )
    for d in collapsed_slice_dims + operand_batching_dims:
        if slice_sizes[d] == 0:
            raise value_error(
                op,
                "slice_sizes",
                slice_sizes,
                f"slice_sizes[{d}] = 0 on a collapsed or batching dim leaves no element to "
                "read for the result (which has no axis for it); use 1",
            )
    return make_plan(
        operand_shape,
        index_shape,
        index_vector_dim=index_vector_dim,
        start_map=start_index_map,
        batching_pairs=tuple(zip(operand_batching_dims, start_indices_batching_dims)),
        window_sizes=slice_sizes,
        collapsed_dims=collapsed_slice_dims,
        layout_window_dims=offset_dims,
    )


def _check_at_most_one(
    op: str, name: str, dims: tuple[int, ...], slice_sizes: tuple[int, ...], rule: str
) -> None:
    for d in dims:
        if slice_sizes[d] > 1:
            raise value_error(
                op,
                "slice_sizes",
                slice_sizes,
                f"slice_sizes[{d}] must be 0 or 1 because dim {d} is in {name}",
                rule,
            )
