"""StableHLO ``gather``: the public function, its cached plan, and its execution."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from .._backends import Backend, backend_for, for_indices, is_array
from .._errors import type_error, value_error
from .._execute.targets import (
    all_inside_on_host,
    clamp_columns,
    counted_from_end,
    row_numbers,
    start_columns,
    to_index,
    windows_in_bounds,
)
from .._plan.cache import static_cache
from .._plan.executors import (
    Executor,
    HeldAttributes,
    executor,
    plain_ints,
    signature,
)
from .._plan.windows import WindowPlan, make_plan
from .._typing import Array
from .._validate.arguments import (
    as_flag,
    as_int,
    as_tuple,
    check_integer_array,
    check_scalar,
    scalar_range,
)
from .._validate.constraints import (
    check_at_most_one,
    check_batching_dims,
    check_index_vector_dim,
    check_rank_sum,
    check_sorted,
    check_start_map_size,
    check_unique,
    check_window_rank,
)
from .._validate.dimension_numbers import GATHER_FIELDS, window_attributes
from .._validate.modes import GatherMode

OP = "gather"


def gather(
    operand: Array,
    start_indices: Array,
    *,
    offset_dims: Sequence[int] | None = None,
    collapsed_slice_dims: Sequence[int] | None = None,
    start_index_map: Sequence[int] | None = None,
    index_vector_dim: int | None = None,
    slice_sizes: Sequence[int],
    operand_batching_dims: Sequence[int] = (),
    start_indices_batching_dims: Sequence[int] = (),
    dimension_numbers: Any = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: Any = "clip",
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
    offset_dims, collapsed_slice_dims, start_index_map : sequence of int
        The StableHLO attributes, 0-based; every constraint C1..C23 is checked.
    index_vector_dim : int
        The dim of ``start_indices`` that holds the start vectors.
    slice_sizes : sequence of int
        The window's size along each operand dim.
    operand_batching_dims, start_indices_batching_dims : sequence of int, default ()
        Pairs of batch dims: the window's position along an operand batching dim is the
        batch position along the paired dim of ``start_indices``.
    dimension_numbers : object, optional
        Instead of the attributes above: a ``jax.lax.GatherDimensionNumbers``, or any
        object with its fields (``offset_dims``, ``collapsed_slice_dims``,
        ``start_index_map``, and optionally ``operand_batching_dims``,
        ``start_indices_batching_dims``). ``index_vector_dim`` then defaults to the last
        dim of ``start_indices``, as in ``jax.lax.gather``.
    indices_are_sorted, unique_indices : bool
        Hints; accepted for compatibility, the result does not depend on them. ``True``
        or ``False`` (NumPy ``bool_`` scalars too, but no arrays: flags are static).
    mode : {"clip", "fill", "promise_in_bounds"} or jax.lax.GatherScatterMode
        ``"clip"`` (StableHLO) shifts each window back inside ``operand``; ``"fill"``
        fills a window that would leave ``operand`` with ``fill_value``;
        ``"promise_in_bounds"`` skips all bounds work (out-of-bounds starts are undefined).
        ``jax.lax``'s ``GatherScatterMode`` members and its ``"drop"`` are read as
        ``lax.gather`` reads them (``FILL_OR_DROP`` and ``"drop"`` are ``"fill"``).
    fill_value : scalar or 0-d array, optional
        For ``mode="fill"``; a value ``operand``'s dtype holds: an int in its range for
        integer dtypes, an int or real number for floats, True or False for bool (a 0-d
        array is checked by its dtype, its value is not read). Default: NaN for floats (the
        minimum for a float dtype without NaN, such as ``float4_e2m1fn``), the minimum for
        signed integers, the maximum for unsigned integers, True for bool; none for other
        dtypes (NumPy's strings, objects, dates), which need a ``fill_value``.

    Returns
    -------
    array
        Of ``operand``'s namespace, device and dtype; ``operand`` is not modified.

    Raises
    ------
    IndexOpsValueError
        Attributes that break a gather constraint (the message names it, e.g.
        ``gather C9``), an unknown ``mode``, or ``dimension_numbers`` next to the
        attributes it holds.
    IndexOpsTypeError
        ``start_indices`` that are not integers, or a missing attribute.

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

    The same with ``jax.lax``'s attribute object (any object with its fields will do):

    >>> from types import SimpleNamespace
    >>> numbers = SimpleNamespace(offset_dims=(1,), collapsed_slice_dims=(0,),
    ...                           start_index_map=(0,))
    >>> indexops.gather(operand, np.array([[0], [2]]), dimension_numbers=numbers,
    ...                 slice_sizes=(1, 3))
    array([[1, 4, 7],
           [3, 6, 9]])
    """
    # a repeated call with the same attribute tuples: its executor without reading them
    held = (
        offset_dims,
        collapsed_slice_dims,
        start_index_map,
        slice_sizes,
        operand_batching_dims,
        start_indices_batching_dims,
        dimension_numbers,
    )
    static = (  # each value after its type; every bool and NumPy bool is a valid flag
        OP,
        type(mode),
        mode,
        type(index_vector_dim),
        index_vector_dim,
        type(indices_are_sorted),
        type(unique_indices),
        type(dimension_numbers),
    )
    facts = signature((), operand, start_indices)
    # (other objects than jax.lax's named tuples are read on every call)
    holds = dimension_numbers is None or isinstance(dimension_numbers, tuple)
    if facts is not None and holds:
        found = _HELD.find(static, held, facts)
        if found is not None:
            return found(operand, start_indices, fill_value)
    given = (
        offset_dims,
        collapsed_slice_dims,
        start_index_map,
        operand_batching_dims,
        start_indices_batching_dims,
    )
    given, index_vector_dim = window_attributes(
        OP, GATHER_FIELDS, given, dimension_numbers, index_vector_dim, start_indices
    )
    (
        offset_dims,
        collapsed_slice_dims,
        start_index_map,
        operand_batching_dims,
        start_indices_batching_dims,
    ) = given
    attributes = (
        offset_dims,
        collapsed_slice_dims,
        start_index_map,
        index_vector_dim,
        slice_sizes,
        operand_batching_dims,
        start_indices_batching_dims,
    )
    flat: tuple[Any, ...]
    try:
        flat = (*offset_dims, *collapsed_slice_dims, *start_index_map, index_vector_dim)  # type: ignore[misc]
        flat += (*slice_sizes, *operand_batching_dims, *start_indices_batching_dims)
    except TypeError:  # not sequences: the validating path names the argument
        flat = (None,)
    as_flag(OP, "indices_are_sorted", indices_are_sorted)
    as_flag(OP, "unique_indices", unique_indices)
    key = (OP, mode, *attributes, *facts) if facts is not None and plain_ints(flat) else None
    run = executor(key, lambda: _prepare(operand, start_indices, attributes, mode))
    if key is not None and holds:
        _HELD.keep(static, held, facts, run)  # type: ignore[arg-type]
    return run(operand, start_indices, fill_value)


_HELD = HeldAttributes()


def gather_executor(
    operand: Array,
    start_indices: Array,
    attributes: tuple[Any, ...],
    mode: Any,
    from_end: bool = False,
    op: str = OP,
) -> Executor:
    """The executor of a gather of these arrays, validated as :func:`gather`'s first call
    with their signature validates it; for callers whose own signature pins the gather's
    (``at``), so that their calls skip its signature; the errors of each call's
    ``fill_value`` name ``op``. ``attributes`` are
    ``(offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, slice_sizes,
    operand_batching_dims, start_indices_batching_dims)``.

    ``from_end``: NumPy's indexing for a gather of one start dim (``at``): a negative
    start counts from the end of its dim before the mode clips or fills it, in the
    element gather's loop where the backend has one
    (:meth:`~indexops._backends.Backend.take_along_axis_from_end`), else by one
    ``where`` first."""
    return _prepare(operand, start_indices, attributes, mode, from_end, op)


def _counted_from_end(
    backend: Backend,
    plan: WindowPlan,
    run: Executor,
    operand: Array,
    indices: Array,
    fill_value: Any,
) -> Array:
    """``run`` at the starts of ``plan``'s one start dim, ``indices``, whose negative
    entries count from the end of that dim first."""
    size = plan.operand_shape[plan.start_map[0]]
    return run(operand, counted_from_end(backend, indices, size), fill_value)


def _prepare(
    operand: Array,
    start_indices: Array,
    attributes: tuple[Any, ...],
    mode: Any,
    from_end: bool = False,
    op: str = OP,
) -> Executor:
    """Validate a call (every StableHLO constraint) and plan it: its executor
    (``from_end``, ``op``: see :func:`gather_executor`)."""
    backend = backend_for(OP, operand=operand, start_indices=start_indices)
    check_integer_array(OP, "start_indices", start_indices)
    parsed = GatherMode.parse(OP, mode, lax_names=True)
    offset, collapsed, start_map, vector_dim, sizes, operand_batching, index_batching = attributes
    plan = _plan(
        tuple(operand.shape),
        tuple(start_indices.shape),
        as_tuple(OP, "offset_dims", offset),
        as_tuple(OP, "collapsed_slice_dims", collapsed),
        as_tuple(OP, "start_index_map", start_map),
        as_int(OP, "index_vector_dim", vector_dim),
        as_tuple(OP, "slice_sizes", sizes),
        as_tuple(OP, "operand_batching_dims", operand_batching),
        as_tuple(OP, "start_indices_batching_dims", index_batching),
    )
    if 0 in plan.intermediate_shape:  # nothing to read: even an empty operand will do
        return functools.partial(_empty, backend, plan, parsed, op)
    if (
        plan.rows_are_clamped_starts
        and parsed is not GatherMode.FILL
        and for_indices(backend, start_indices) is backend
    ):
        elements = plan.row_count * plan.rows_shape[1]
        take = (
            backend.clipped_row_take(elements)
            if parsed is GatherMode.CLIP
            else backend.row_take(elements)
        )
        run: Executor = functools.partial(_take_rows, backend, plan, take)
        # operand[rows] of a 2-D operand, the commonest gather: no reshape, cast or
        # permutation to make per call
        if (
            tuple(operand.shape) == plan.rows_shape
            and plan.intermediate_shape == (plan.row_count, plan.rows_shape[1])
            and plan.to_layout == tuple(range(len(plan.to_layout)))
            and start_indices.dtype == backend.index_dtype()
        ):
            run = functools.partial(_take_flat_rows, backend, take)
    elif (
        plan.element_axes is not None
        and backend.gathers_elements
        and for_indices(backend, start_indices) is backend
    ):
        to_result = tuple(plan.element_axes.index(axis) for axis in range(len(plan.batch_shape)))
        return functools.partial(_take_elements, backend, plan, parsed, op, to_result, from_end)
    else:
        run = functools.partial(_execute, backend, plan, parsed, op)
    return functools.partial(_counted_from_end, backend, plan, run) if from_end else run


def _empty(
    backend: Backend,
    plan: WindowPlan,
    mode: GatherMode,
    op: str,
    operand: Array,
    indices: Array,
    fill_value: Any,
) -> Array:
    """The empty result of a gather with a zero-size batch or window (``op``: the name
    the errors of ``fill_value`` give, the caller's)."""
    xp = backend.xp
    if mode is GatherMode.FILL:
        fill_scalar(backend, operand.dtype, fill_value, op)  # checked all the same
    rows = backend.arange(0, backend.index_dtype(), operand)
    empty = backend.take_rows(xp.reshape(operand, plan.rows_shape), rows)
    return backend.permute_dims(xp.reshape(empty, plan.intermediate_shape), plan.to_layout)


def _take_rows(
    backend: Backend,
    plan: WindowPlan,
    take: Callable[[Array, Array], Array],
    operand: Array,
    indices: Array,
    fill_value: Any,
) -> Array:
    """:func:`_execute` for plans whose start is the row number (``operand[rows]``,
    clipped or promised in bounds): the index array, flat, is the rows to take."""
    rows = to_index(backend, backend.reshape(indices, (-1,)))
    windows = take(backend.reshape(operand, plan.rows_shape), rows)
    return backend.permute_dims(backend.reshape(windows, plan.intermediate_shape), plan.to_layout)


def _take_flat_rows(
    backend: Backend,
    take: Callable[[Array, Array], Array],
    operand: Array,
    indices: Array,
    fill_value: Any,
) -> Array:
    """:func:`_take_rows` where the signature makes the operand its own table of rows,
    the rows taken the result and the indices of the index dtype: ``take`` of the flat
    indices."""
    return take(operand, backend.reshape(indices, (-1,)))


# what the element gather does with a start outside its dim, per mode
_OUTSIDE = {GatherMode.PROMISE_IN_BOUNDS: "stop", GatherMode.CLIP: "clip", GatherMode.FILL: "fill"}


def _take_elements(
    backend: Backend,
    plan: WindowPlan,
    mode: GatherMode,
    op: str,
    to_result: tuple[int, ...],
    from_end: bool,
    operand: Array,
    indices: Array,
    fill_value: Any,
) -> Array:
    """:func:`_execute` for element plans (``take_along_axis``, ``torch.gather``): the
    starts, laid out along the operand's dims, are read by the library's element gather
    (clipped or filled where they leave the operand; negative ones counted from the end
    first where ``from_end``, see :func:`gather_executor`), and its result laid out as
    the batch dims."""
    assert plan.element_axes is not None
    starts = to_index(backend, backend.reshape(indices, plan.batch_shape))
    starts = backend.permute_dims(starts, plan.element_axes)
    axis = plan.start_map[0]
    fill = fill_scalar(backend, operand.dtype, fill_value, op) if mode is GatherMode.FILL else None
    if from_end:
        taken = backend.take_along_axis_from_end(operand, starts, axis, _OUTSIDE[mode], fill)
        if taken is not None:
            return backend.permute_dims(taken, to_result)
        starts = counted_from_end(backend, starts, operand.shape[axis])
    if mode is GatherMode.PROMISE_IN_BOUNDS:
        taken = backend.take_along_axis(operand, starts, axis)
    elif mode is GatherMode.CLIP:
        taken = backend.take_along_axis_clipped(operand, starts, axis)
    else:
        taken = backend.take_along_axis_filled(operand, starts, axis, fill)
    return backend.permute_dims(taken, to_result)


def _execute(
    backend: Backend,
    plan: WindowPlan,
    mode: GatherMode,
    op: str,
    operand: Array,
    indices: Array,
    fill_value: Any,
) -> Array:
    """Read the windows: clamp or mask the starts, take their rows, lay them out."""
    xp = backend.xp
    fill = fill_scalar(backend, operand.dtype, fill_value, op) if mode is GatherMode.FILL else None
    on_indices = for_indices(backend, indices)
    columns = start_columns(on_indices, plan, indices)
    inside = None
    if mode is GatherMode.FILL and not (
        on_indices.values_on_host(indices) and all_inside_on_host(on_indices, plan, columns)
    ):  # the mask costs a pass over the result: skip it when the host can tell
        inside = windows_in_bounds(on_indices, plan, columns, operand)
    if mode is not GatherMode.PROMISE_IN_BOUNDS:  # (row plans clip in the take: _take_rows)
        columns = clamp_columns(on_indices, plan, columns)
    rows = on_indices.xp.reshape(row_numbers(on_indices, plan, columns, operand), (-1,))
    table = xp.reshape(operand, plan.rows_shape)
    windows = xp.reshape(backend.take_rows(table, rows), plan.intermediate_shape)
    if inside is not None:
        inside = on_indices.xp.reshape(inside, plan.batch_shape + (1,) * len(plan.window_shape))
        if not is_array(fill):
            fill = backend.full((), fill, operand.dtype, operand)
        windows = backend.where(inside, windows, fill)
    return backend.permute_dims(windows, plan.to_layout)


def fill_scalar(backend: Backend, dtype: Any, fill_value: Any, op: str = OP) -> Any:
    """A Python scalar, or a 0-d array of ``dtype`` whose value is not on the host (its
    errors name ``op``)."""
    if fill_value is not None:
        fill = check_scalar(op, "fill_value", fill_value, backend, dtype)
        return backend.xp.astype(fill, dtype) if is_array(fill) else fill
    held = scalar_range(backend, dtype)
    if held.kind is None:  # strings, objects, dates: NaN cast to them is no fill
        raise type_error(
            op,
            "fill_value",
            None,
            f"a value of the operand's dtype {dtype} for mode='fill': there is a default "
            "for bool, integer, floating and complex dtypes only",
        )
    if held.kind == "bool":
        return True
    if held.kind == "signed integer":
        return held.low
    if held.kind == "unsigned integer":
        return held.high
    if held.kind == "real floating" and not held.nan:
        return held.low  # a float dtype without NaN (float4_e2m1fn)
    return float("nan")


@static_cache()
def _plan(
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
    op = OP
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
    check_at_most_one(op, "collapsed_slice_dims", collapsed_slice_dims, slice_sizes, "C9")
    check_sorted(op, "operand_batching_dims", operand_batching_dims, "C10")
    check_window_rank(op, "operand_batching_dims", operand_batching_dims, rank, "C11")
    check_at_most_one(op, "operand_batching_dims", operand_batching_dims, slice_sizes, "C12")
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
    plan = make_plan(
        operand_shape,
        index_shape,
        index_vector_dim=index_vector_dim,
        start_map=start_index_map,
        batching_pairs=tuple(zip(operand_batching_dims, start_indices_batching_dims)),
        window_sizes=slice_sizes,
        collapsed_dims=collapsed_slice_dims,
        layout_window_dims=offset_dims,
    )
    _check_empty_windows(plan, slice_sizes, collapsed_slice_dims + operand_batching_dims)
    return plan


def _check_empty_windows(
    plan: WindowPlan, slice_sizes: tuple[int, ...], dropped: tuple[int, ...]
) -> None:
    """A size 0 on a collapsed or batching dim (allowed by C9 and C12) is refused unless
    the result is empty: each result element would come from an empty window, which
    StableHLO leaves undefined (it reads outside the window, and outside the operand
    where that dim has size 0)."""
    zero = [d for d in dropped if slice_sizes[d] == 0]
    if zero and 0 not in plan.intermediate_shape:
        result_shape = tuple(plan.intermediate_shape[axis] for axis in plan.to_layout)
        raise value_error(
            OP,
            "slice_sizes",
            slice_sizes,
            f"slice_sizes[{zero[0]}] = 0 on a collapsed or batching dim is allowed only when "
            f"the result is empty, but it has shape {result_shape}: each of its elements "
            "would be read from an empty window, which StableHLO leaves undefined; use 1",
        )
