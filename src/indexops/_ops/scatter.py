"""StableHLO ``scatter``: the public function, its cached plan, and its execution."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from .._backends import Backend, backend_for, for_indices
from .._backends._base import combine_identity
from .._backends._signed_zeros import has_signed_zeros
from .._errors import index_out_of_bounds, type_error, value_error
from .._execute.targets import (
    all_inside_on_host,
    clamp_columns,
    counted_from_end,
    row_numbers,
    rows_in_bounds,
    safe_columns,
    start_columns,
    to_index,
    window_outside,
    windows_in_bounds,
)
from .._execute.writes import RowWriter, few_rows_first, read_before_writing
from .._plan.cache import static_cache
from .._plan.executors import Executor, HeldAttributes, executor, plain_ints, signature
from .._plan.windows import WindowPlan, make_plan
from .._typing import Array
from .._validate.arguments import (
    as_flag,
    as_int,
    as_tuple,
    check_integer_array,
    check_same_dtype,
    writes_in_place,
)
from .._validate.combiners import Combiner, Named, resolve
from .._validate.constraints import (
    check_batching_dims,
    check_index_vector_dim,
    check_rank_sum,
    check_sorted,
    check_start_map_size,
    check_unique,
    check_window_rank,
)
from .._validate.dimension_numbers import SCATTER_FIELDS, window_attributes
from .._validate.modes import ScatterMode

OP = "scatter"


def scatter(
    input: Array,
    scatter_indices: Array,
    updates: Array,
    *,
    update_window_dims: Sequence[int] | None = None,
    inserted_window_dims: Sequence[int] | None = None,
    scatter_dims_to_operand_dims: Sequence[int] | None = None,
    index_vector_dim: int | None = None,
    input_batching_dims: Sequence[int] = (),
    scatter_indices_batching_dims: Sequence[int] = (),
    dimension_numbers: Any = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    update_computation: str | Callable[[Array, Array], Array] | None = None,
    mode: Any = "drop",
    copy: bool | None = True,
) -> Array:
    """Scatter windows of ``updates`` into ``input`` (StableHLO ``scatter``).

    Parameters
    ----------
    input : array
        The array to update.
    scatter_indices : array
        Integer array (any signed or unsigned dtype) of start vectors along
        ``index_vector_dim`` (equal to its rank: an implicit trailing dim of size 1).
    updates : array
        Of ``input``'s dtype; its shape interleaves the scatter dims of
        ``scatter_indices`` with window dims at ``update_window_dims``.
    update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims : sequence of int
        The StableHLO attributes, 0-based; every constraint C1..C24 is checked.
    index_vector_dim : int
        The dim of ``scatter_indices`` that holds the start vectors.
    input_batching_dims, scatter_indices_batching_dims : sequence of int, default ()
        Pairs of batch dims, as in :func:`gather`.
    dimension_numbers : object, optional
        Instead of the attributes above: a ``jax.lax.ScatterDimensionNumbers``, or any
        object with its fields (``update_window_dims``, ``inserted_window_dims``,
        ``scatter_dims_to_operand_dims``, and optionally ``operand_batching_dims``, which
        is ``input_batching_dims`` here, and ``scatter_indices_batching_dims``).
        ``index_vector_dim`` then defaults to the last dim of ``scatter_indices``, as in
        ``jax.lax.scatter``.
    indices_are_sorted : bool
        A hint, accepted for compatibility.
    unique_indices : bool
        The caller's promise that no element is written twice; skips duplicate handling.
        If the promise is broken the result is undefined. Both flags are ``True`` or
        ``False`` (NumPy ``bool_`` scalars too, but no arrays: flags are static).
    update_computation : None, {"add", "mul", "min", "max"} or callable
        How an update meets the value there: ``None`` replaces; a callable ``f(old, new)``
        works elementwise on arrays of the input's namespace (its result must be an array
        of the shape of ``old``). Named combiners need a numeric dtype, ``"min"`` and
        ``"max"`` a real one. Duplicates resolve as if the updates were applied one by
        one in row-major order of ``updates`` (float add and mul may differ from that only
        by reassociation rounding). ``"min"`` and ``"max"`` are IEEE-754 ``minimum`` and
        ``maximum`` (StableHLO) on every backend: NaN propagates, and zeros of both signs
        give ``-0.0`` for min, ``+0.0`` for max.
    mode : {"drop", "drop_window", "clip", "promise_in_bounds"} or jax.lax.GatherScatterMode
        Out of bounds: ``"drop"`` skips each update element whose target is outside
        ``input`` (the StableHLO spec); ``"drop_window"`` skips a whole window if any of it
        is outside (XLA and JAX); ``"clip"`` moves each window inside; with
        ``"promise_in_bounds"`` out-of-bounds starts are undefined. ``jax.lax``'s
        ``GatherScatterMode`` members and its ``"fill"`` are read as ``lax.scatter`` reads
        them (``FILL_OR_DROP`` and ``"fill"`` are ``"drop_window"``); ``"drop"`` keeps
        the meaning above.
    copy : bool or None
        ``True`` (default): a new array, ``input`` untouched. ``False``: write into
        ``input`` and return it (an error for arrays that cannot be written, such as JAX
        arrays or read-only NumPy arrays). ``None``: in place where possible.

    Returns
    -------
    array
        Of ``input``'s namespace, device, shape and dtype: ``input`` itself when written
        in place.

    Raises
    ------
    IndexOpsValueError
        Attributes or shapes that break a scatter constraint (the message names it,
        e.g. ``scatter C4``), an unknown ``mode`` or ``update_computation`` name,
        ``dimension_numbers`` next to the attributes it holds, or ``copy=False`` for an
        array that cannot be written.
    IndexOpsTypeError
        ``scatter_indices`` that are not integers, ``updates`` of another dtype than
        ``input``, an ``update_computation`` that is neither a name nor callable or a
        name the dtype has no arithmetic for, flags that are not bools, or a missing
        attribute.

    Examples
    --------
    Add rows of ones into rows 1, 1 and 3; the duplicate row accumulates:

    >>> import numpy as np
    >>> import indexops
    >>> indexops.scatter(np.zeros((4, 2)), np.array([[1], [1], [3]]), np.ones((3, 2)),
    ...     update_window_dims=(1,), inserted_window_dims=(0,),
    ...     scatter_dims_to_operand_dims=(0,), index_vector_dim=1, update_computation="add")
    array([[0., 0.],
           [2., 2.],
           [0., 0.],
           [1., 1.]])
    """
    # a repeated call with the same attribute tuples: its executor without reading them
    held = (
        update_window_dims,
        inserted_window_dims,
        scatter_dims_to_operand_dims,
        input_batching_dims,
        scatter_indices_batching_dims,
        dimension_numbers,
    )
    static_held = (  # each value after its type (True == 1; np.True_ is a valid flag)
        OP,
        type(mode),
        mode,
        type(update_computation),
        update_computation,
        type(unique_indices),
        unique_indices,
        type(indices_are_sorted),
        type(index_vector_dim),
        index_vector_dim,
        type(dimension_numbers),
    )
    facts = signature((), input, scatter_indices, updates)
    named = type(update_computation) in _NAMED_FORMS  # a callable is not kept (see below)
    # (other objects than jax.lax's named tuples are read on every call)
    holds = named and (dimension_numbers is None or isinstance(dimension_numbers, tuple))
    if facts is not None and holds:
        found = _HELD.find(static_held, held, facts)
        if found is not None:
            return found(input, scatter_indices, updates, copy)
    given, index_vector_dim = window_attributes(
        OP, SCATTER_FIELDS, held[:-1], dimension_numbers, index_vector_dim, scatter_indices
    )
    (
        update_window_dims,
        inserted_window_dims,
        scatter_dims_to_operand_dims,
        input_batching_dims,
        scatter_indices_batching_dims,
    ) = given
    attributes = (
        update_window_dims,
        inserted_window_dims,
        scatter_dims_to_operand_dims,
        index_vector_dim,
        input_batching_dims,
        scatter_indices_batching_dims,
    )
    flat: tuple[Any, ...]
    try:
        flat = (*update_window_dims, *inserted_window_dims, *scatter_dims_to_operand_dims)
        flat += (index_vector_dim, *input_batching_dims, *scatter_indices_batching_dims)
    except TypeError:  # not sequences: the validating path names the argument
        flat = (None,)
    unique_indices = as_flag(OP, "unique_indices", unique_indices)
    as_flag(OP, "indices_are_sorted", indices_are_sorted)
    static = (OP, mode, update_computation, unique_indices, *attributes)
    key = (
        (*static, *facts)
        if facts is not None and plain_ints(flat) and named
        else None  # a callable is not kept: it may hold on to big arrays
    )
    run = executor(
        key,
        lambda: _prepare(
            input, scatter_indices, updates, attributes, update_computation, mode, unique_indices
        ),
    )
    if key is not None and holds:
        _HELD.keep(static_held, held, facts, run)  # type: ignore[arg-type]
    return run(input, scatter_indices, updates, copy)


_HELD = HeldAttributes()


def scatter_executor(
    input: Array,
    scatter_indices: Array,
    updates: Array,
    attributes: tuple[Any, ...],
    update_computation: str | None,
    mode: Any,
    unique_indices: bool,
    from_end: bool = False,
) -> Executor:
    """The executor of a scatter of these arrays with a named ``update_computation``,
    validated as :func:`scatter`'s first call with their signature validates it; for
    callers whose own signature pins the scatter's (``at``), so that their calls skip its
    signature. ``attributes`` are ``(update_window_dims, inserted_window_dims,
    scatter_dims_to_operand_dims, index_vector_dim, input_batching_dims,
    scatter_indices_batching_dims)``.

    ``from_end``: NumPy's indexing for a scatter of one start dim (``at``): a negative
    start counts from the end of its dim before the mode drops or clips it, in the
    element scatter's loop where the backend has one
    (:meth:`~indexops._backends.Backend.scatter_along_axis_in_order`), else by one
    ``where`` first."""
    return _prepare(
        input,
        scatter_indices,
        updates,
        attributes,
        update_computation,
        mode,
        unique_indices,
        from_end,
    )


def _counted_from_end(
    backend: Backend,
    plan: WindowPlan,
    run: Executor,
    input: Array,
    indices: Array,
    updates: Array,
    copy: bool | None,
) -> Array:
    """``run`` at the starts of ``plan``'s one start dim, ``indices``, whose negative
    entries count from the end of that dim first."""
    size = plan.operand_shape[plan.start_map[0]]
    return run(input, counted_from_end(backend, indices, size), updates, copy)


def _prepare(
    input: Array,
    scatter_indices: Array,
    updates: Array,
    attributes: tuple[Any, ...],
    update_computation: Any,
    mode: Any,
    unique_indices: bool,
    from_end: bool = False,
) -> Executor:
    """Validate a call (every StableHLO constraint) and plan it: its executor
    (``from_end``: see :func:`scatter_executor`)."""
    backend = backend_for(OP, input=input, scatter_indices=scatter_indices, updates=updates)
    check_integer_array(OP, "scatter_indices", scatter_indices)
    check_same_dtype(OP, "updates", updates, "input", input, "C6")
    parsed = ScatterMode.parse(OP, mode, lax_names=True)
    combiner = combiner_for(backend, input.dtype, update_computation)
    window_dims, inserted, to_operand, vector_dim, input_batching, index_batching = attributes
    plan = _plan(
        tuple(input.shape),
        tuple(scatter_indices.shape),
        tuple(updates.shape),
        as_tuple(OP, "update_window_dims", window_dims),
        as_tuple(OP, "inserted_window_dims", inserted),
        as_tuple(OP, "scatter_dims_to_operand_dims", to_operand),
        as_int(OP, "index_vector_dim", vector_dim),
        as_tuple(OP, "input_batching_dims", input_batching),
        as_tuple(OP, "scatter_indices_batching_dims", index_batching),
    )
    writer = RowWriter(backend, input.dtype, plan.rows_shape, plan.row_count, combiner, input.shape)
    own_indices = for_indices(backend, scatter_indices) is backend
    run = _executor(backend, plan, writer, combiner, parsed, unique_indices, from_end, own_indices)
    if (
        own_indices
        and writer.few
        and plan.rows_are_clamped_starts
        and plan.layout_to_rows == tuple(range(len(plan.layout_to_rows)))
    ):  # rows in range are the flat starts, in every mode, counted from the end or not
        return functools.partial(few_rows_first, OP, backend, writer, run)
    return run


def _executor(
    backend: Backend,
    plan: WindowPlan,
    writer: RowWriter,
    combiner: Combiner,
    mode: ScatterMode,
    unique_indices: bool,
    from_end: bool,
    own_indices: bool,
) -> Executor:
    """The executor of a validated call: the general path, or an element plan's where
    the indices are of the input's library (``own_indices``)."""
    general = functools.partial(_execute, backend, plan, writer, mode, unique_indices)
    other = general
    if (
        plan.element_axes is not None
        and 0 not in plan.operand_shape  # (else every update is dropped: the general path's)
        and own_indices
    ):
        if backend.scatters_elements and _scatters_elements(
            backend, combiner, writer.dtype, unique_indices
        ):
            other = functools.partial(_scatter_elements, backend, plan, combiner, mode, general)
        if backend.scatters_elements_in_order and (combiner.named or combiner.replaces):
            if from_end:  # (the loop counts from the end; the other paths after a where)
                other = functools.partial(_counted_from_end, backend, plan, other)
            return functools.partial(
                _scatter_elements_in_order, backend, plan, combiner, mode, other, from_end
            )
    return functools.partial(_counted_from_end, backend, plan, other) if from_end else other


def _scatters_elements(backend: Backend, combiner: Combiner, dtype: Any, unique: bool) -> bool:
    """Whether an element plan's combiner goes to the library's element scatter: a named
    one with an identity in ``dtype`` (for dropped entries), or replace of unique indices
    (without them, the general path finds the last writers)."""
    if combiner.named is None:
        return combiner.replaces and unique
    return combine_identity(backend, combiner.named, dtype) is not None


_NAMED_FORMS = frozenset({str, type(None)})


def combiner_for(backend: Backend, dtype: Any, update_computation: Any) -> Combiner:
    """Resolve ``update_computation`` for ``input`` of ``dtype`` as every scatter does
    (also for callers that write rows themselves, ``at``), the named combiners by
    :func:`named_refused`."""
    combiner = resolve(OP, backend.xp, update_computation)
    if combiner.named is not None:
        reason = named_refused(backend, dtype, combiner.named)
        if reason is not None:
            taken = [repr(n.value) for n in Named if named_refused(backend, dtype, n) is None]
            names = ", ".join(["None", *taken]) if taken else "None"
            raise type_error(
                OP,
                "update_computation",
                update_computation,
                f"{names} or a callable for input of dtype {dtype} ({reason})",
            )
    return combiner


def named_refused(backend: Backend, dtype: Any, named: Named) -> str | None:
    """Why an input of ``dtype`` takes no ``named`` combiner, or ``None`` where it takes
    it: every named combiner needs a numeric dtype (bool, NumPy's dates, strings, objects
    and structures have none of the standard's arithmetic) that the library computes in,
    min and max a real one."""
    if not backend.has_kind(dtype, "numeric"):
        return "named combiners need a numeric dtype: integers, real or complex floats"
    if not backend.computes_in(dtype):
        return (
            f"{backend.name} has no arithmetic for it: combine in a wider dtype, e.g. "
            "float32, and cast back"
        )
    if named in (Named.MIN, Named.MAX) and backend.has_kind(dtype, "complex floating"):
        return "the Array API orders real numbers only"
    return None


def _execute(
    backend: Backend,
    plan: WindowPlan,
    write: RowWriter,
    mode: ScatterMode,
    unique_indices: bool,
    input: Array,
    indices: Array,
    updates: Array,
    copy: bool | None,
) -> Array:
    """Write the windows: find each update row's target row, then write the rows with
    the signature's row writer. Where the starts are the rows, large writes go first to
    the writer's one pass, which applies the mode to each row as it goes
    (:meth:`~indexops._execute.writes.RowWriter.in_one_pass`): no range check, mask or
    search for repeats before it."""
    in_place = writes_in_place(backend, OP, input, copy)
    values = backend.permute_dims(updates, plan.layout_to_rows)
    values = backend.reshape(values, (plan.row_count, plan.rows_shape[1]))
    if write.one_pass is not None and plan.rows_are_clamped_starts:
        rows = to_index(backend, backend.reshape(indices, (-1,)))
        written = write.in_one_pass(input, rows, values, in_place, outside=mode.outside)
        if written is not None:
            return written
    checked = _checked_first(backend, plan, mode, in_place, indices)
    rows, keep, distinct = _target_rows(
        for_indices(backend, indices), plan, indices, mode, input, checked
    )
    unique = unique_indices or distinct
    return write(input, rows, values, in_place=in_place, keep=keep, unique=unique)


def _scatter_elements_in_order(
    backend: Backend,
    plan: WindowPlan,
    combiner: Combiner,
    mode: ScatterMode,
    other: Executor,
    from_end: bool,
    input: Array,
    indices: Array,
    updates: Array,
    copy: bool | None,
) -> Array:
    """:func:`_execute` for element plans of a named combiner or replace, on backends
    that may scatter elements in one pass in the updates' order
    (:meth:`~indexops._backends.Backend.scatter_along_axis_in_order`: duplicates in
    order, IEEE-754 min and max, the mode applied to each index in the loop, negative
    indices counted from the end first where ``from_end``); where it declines the call,
    ``other`` (:func:`_scatter_elements` where the backend's native element scatter takes
    it, else the general path)."""
    assert plan.element_axes is not None
    if not backend.may_compile(input, plan.row_count):  # (small work: no look further)
        return other(input, indices, updates, copy)
    in_place = writes_in_place(backend, OP, input, copy)
    if in_place and backend.records_gradient(input, updates):
        return other(input, indices, updates, copy)
    axis = plan.start_map[0]
    starts = to_index(backend, backend.reshape(indices, plan.batch_shape))
    starts = backend.permute_dims(starts, plan.element_axes)
    values = backend.permute_dims(updates, plan.element_axes)
    how, outside = combiner.named, mode.outside
    done = backend.scatter_along_axis_in_order(
        input, axis, starts, values, how, wrap=from_end, outside=outside, copy=not in_place
    )
    if done is None:
        return other(input, indices, updates, copy)
    result, bad = done
    if bad >= 0:  # a broken promise (only promise_in_bounds stops the loop)
        value = backend.to_numpy(starts).reshape(-1)[bad]
        raise index_out_of_bounds(value, axis, plan.operand_shape[axis])
    return result


def _scatter_elements(
    backend: Backend,
    plan: WindowPlan,
    combiner: Combiner,
    mode: ScatterMode,
    general: Executor,
    input: Array,
    indices: Array,
    updates: Array,
    copy: bool | None,
) -> Array:
    """:func:`_execute` for element plans (ScatterElements, ``scatter_reduce_``) with a
    named combiner, or replace under ``unique_indices``: the starts and updates, laid out
    along the input's dims, go to the library's element scatter. The cases that need the
    general path's work go there: a replace with entries to drop, float min or max
    with a zero among the updates (signed zeros) or values not on the host, and a
    write in place that autograd records (see :func:`~indexops._execute.writes.write_rows`).

    Dropped entries are clamped into range and combine the combiner's identity.
    """
    assert plan.element_axes is not None
    how = combiner.named
    in_place = writes_in_place(backend, OP, input, copy)
    recorded = backend.records_gradient(input, updates)  # then the backend writes new arrays
    if in_place and recorded:
        return general(input, indices, updates, copy)
    starts = to_index(backend, backend.reshape(indices, plan.batch_shape))
    starts = backend.permute_dims(starts, plan.element_axes)
    values = backend.permute_dims(updates, plan.element_axes)
    if (
        how in (Named.MIN, Named.MAX)
        and has_signed_zeros(backend, input.dtype)
        and not (backend.values_on_host(values) and not backend.holds_zero(values))
    ):  # a zero result may need the sign the general path gives it
        return general(input, indices, updates, copy)
    limit = plan.start_limits[0]
    if mode is ScatterMode.CLIP:
        starts = backend.clip(starts, 0, limit)
    elif _checked_first(backend, plan, mode, in_place, starts):
        if not backend.all_in_range(starts, limit):
            raise window_outside(backend, plan, [starts])
    elif mode is not ScatterMode.PROMISE_IN_BOUNDS and not (
        backend.values_on_host(starts) and backend.all_in_range(starts, limit)
    ):
        if how is None:
            return general(input, indices, updates, copy)
        inside = (starts >= 0) & (starts <= limit)
        starts = backend.clip(starts, 0, limit)
        identity = backend.full((), combine_identity(backend, how, input.dtype), input.dtype, input)
        values = backend.where(inside, values, identity)
    if in_place:
        starts, values = read_before_writing(backend, input, starts, values)
    target = input if in_place or recorded else backend.copy(input)
    return backend.combine_along_axis(target, plan.start_map[0], starts, values, how)


def _checked_first(
    backend: Backend, plan: WindowPlan, mode: ScatterMode, in_place: bool, starts: Array
) -> bool:
    """Whether starts promised in range are checked before the write all the same: in
    place, on a library whose writes check each index only as they reach it (torch's
    ``index_add_`` and ``scatter_reduce_`` on the CPU), where the starts are on the host
    and the input has elements to write. A broken promise then raises NumPy's
    :class:`IndexError` with the input as it was, as NumPy's writes leave it, instead of
    the library's error on a half-written input."""
    return (
        mode is ScatterMode.PROMISE_IN_BOUNDS
        and in_place
        and not backend.writes_check_first
        and 0 not in plan.operand_shape
        and backend.values_on_host(starts)
    )


def _target_rows(
    backend: Backend,
    plan: WindowPlan,
    indices: Array,
    mode: ScatterMode,
    like: Array,
    checked: bool,
) -> tuple[Array, Array | None, bool]:
    """Target rows in the row-major order of ``updates``, all in range, which of them
    are kept (``None``: all; dropped rows point at some row in range), and whether the
    host found them distinct (False where not shown). Starts promised in range are
    checked where ``checked`` (:func:`_checked_first`): one outside raises."""
    xp = backend.xp
    if plan.rows_are_clamped_starts:  # the flat starts are the rows: skip the arithmetic
        rows = to_index(backend, backend.reshape(indices, (-1,)))
        limit = plan.start_limits[0]
        if mode is ScatterMode.PROMISE_IN_BOUNDS and not checked:  # (a few rows read, if any)
            return rows, None, backend.few_distinct_in_range(rows, limit)
        if mode is ScatterMode.CLIP:
            return backend.clip(rows, 0, limit), None, False
        distinct = backend.distinct_in_range(rows, limit)
        if distinct is not None:  # one read of the host's rows: in range, and distinct?
            return rows, None, distinct
        if checked:
            raise window_outside(backend, plan, [rows])
    columns = start_columns(backend, plan, indices)
    keep = None
    if mode is ScatterMode.CLIP:
        columns = clamp_columns(backend, plan, columns)
    elif checked:
        if not all_inside_on_host(backend, plan, columns):
            raise window_outside(backend, plan, columns)
    elif mode is not ScatterMode.PROMISE_IN_BOUNDS and not (
        backend.values_on_host(indices) and all_inside_on_host(backend, plan, columns)
    ):  # the masks cost passes over the rows: skip them when the host can tell
        columns = safe_columns(backend, plan, columns)
        if mode is ScatterMode.DROP:
            keep = rows_in_bounds(backend, plan, columns, like)
        else:
            keep = windows_in_bounds(backend, plan, columns, like)
            keep = xp.reshape(keep, plan.batch_shape + (1,) * len(plan.head_window_dims))
        keep = _in_row_order(backend, plan, xp.broadcast_to(keep, plan.rows_batch_shape))
    rows = _in_row_order(backend, plan, row_numbers(backend, plan, columns, like))
    if keep is not None:  # a dropped row may point anywhere: keep it in range
        rows = backend.clip(rows, 0, max(plan.rows_shape[0] - 1, 0))
    return rows, keep, False


def _in_row_order(backend: Backend, plan: WindowPlan, x: Array) -> Array:
    """Per-row values (``plan.rows_batch_shape``) flattened in the row-major order of
    ``updates``, the order in which duplicates apply."""
    return backend.xp.reshape(backend.permute_dims(x, plan.row_axes), (-1,))


@static_cache()
def _plan(
    input_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    updates_shape: tuple[int, ...],
    update_window_dims: tuple[int, ...],
    inserted_window_dims: tuple[int, ...],
    scatter_dims_to_operand_dims: tuple[int, ...],
    index_vector_dim: int,
    input_batching_dims: tuple[int, ...],
    scatter_indices_batching_dims: tuple[int, ...],
) -> WindowPlan:
    """Validate every StableHLO scatter constraint, then plan (cached per shapes)."""
    op = OP
    rank = len(input_shape)
    index_rank = len(index_shape)
    check_rank_sum(
        op,
        "update_window_dims, inserted_window_dims, input_batching_dims",
        (update_window_dims, inserted_window_dims, input_batching_dims),
        rank,
        "input",
        "C2",
    )
    check_index_vector_dim(op, index_vector_dim, index_rank, "C22")
    check_unique(op, "update_window_dims", update_window_dims, "C7")
    check_sorted(op, "update_window_dims", update_window_dims, "C7")
    _check_updates_rank(index_shape, updates_shape, update_window_dims, index_vector_dim)
    check_window_rank(op, "update_window_dims", update_window_dims, len(updates_shape), "C8")
    dropped = inserted_window_dims + input_batching_dims
    check_unique(op, "inserted_window_dims + input_batching_dims", dropped, "C9")
    check_sorted(op, "inserted_window_dims", inserted_window_dims, "C10")
    check_window_rank(op, "inserted_window_dims", inserted_window_dims, rank, "C11")
    check_sorted(op, "input_batching_dims", input_batching_dims, "C12")
    check_window_rank(op, "input_batching_dims", input_batching_dims, rank, "C13")
    check_batching_dims(
        op,
        ("input", "scatter_indices", "input_batching_dims", "scatter_indices_batching_dims"),
        input_batching_dims,
        scatter_indices_batching_dims,
        input_shape,
        index_shape,
        index_vector_dim,
        ("C14", "C15", "C16", "C17", "C18"),
    )
    check_start_map_size(
        op,
        "scatter_dims_to_operand_dims",
        scatter_dims_to_operand_dims,
        index_shape,
        index_vector_dim,
        "scatter_indices",
        "C19",
    )
    check_unique(
        op,
        "scatter_dims_to_operand_dims + input_batching_dims",
        scatter_dims_to_operand_dims + input_batching_dims,
        "C20",
    )
    check_window_rank(op, "scatter_dims_to_operand_dims", scatter_dims_to_operand_dims, rank, "C21")
    window_sizes = _window_sizes(
        input_shape, index_shape, updates_shape, update_window_dims, dropped, index_vector_dim
    )
    return make_plan(
        input_shape,
        index_shape,
        index_vector_dim=index_vector_dim,
        start_map=scatter_dims_to_operand_dims,
        batching_pairs=tuple(zip(input_batching_dims, scatter_indices_batching_dims)),
        window_sizes=window_sizes,
        collapsed_dims=inserted_window_dims,
        layout_window_dims=update_window_dims,
    )


def _check_updates_rank(
    index_shape: tuple[int, ...],
    updates_shape: tuple[int, ...],
    update_window_dims: tuple[int, ...],
    index_vector_dim: int,
) -> None:
    """``updates`` has one dim per scatter dim and one per window dim (scatter C4), checked
    before the attributes that count dims of ``updates`` (C8), so that the error names
    ``updates``, the argument more likely wrong."""
    scatter_rank = len(index_shape) - (index_vector_dim < len(index_shape))
    rank = scatter_rank + len(update_window_dims)
    if len(updates_shape) != rank:
        raise value_error(
            OP,
            "updates.shape",
            updates_shape,
            f"rank {rank}: the {scatter_rank} dims of scatter_indices {index_shape} other "
            f"than index_vector_dim={index_vector_dim}, plus one per entry of "
            f"update_window_dims={update_window_dims}",
            "C4",
        )


def _window_sizes(
    input_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    updates_shape: tuple[int, ...],
    update_window_dims: tuple[int, ...],
    dropped: tuple[int, ...],
    index_vector_dim: int,
) -> tuple[int, ...]:
    """Window size per input dim from the updates shape, checking scatter C4."""
    batch = [n for d, n in enumerate(index_shape) if d != index_vector_dim]
    scatter_sizes = [n for d, n in enumerate(updates_shape) if d not in update_window_dims]
    window_dims = [d for d in range(len(input_shape)) if d not in dropped]
    window = [updates_shape[d] for d in update_window_dims]
    if scatter_sizes != batch:
        raise value_error(
            "scatter",
            "updates.shape",
            updates_shape,
            f"its dims outside update_window_dims={update_window_dims} must be {tuple(batch)}, "
            f"the shape of scatter_indices {index_shape} without index_vector_dim",
            "C4",
        )
    sizes = [1] * len(input_shape)
    for d, size in zip(window_dims, window):
        if size > input_shape[d]:
            raise value_error(
                "scatter",
                "updates.shape",
                updates_shape,
                f"window size {size} (updates dim {update_window_dims[window_dims.index(d)]}) "
                f"exceeds input dim {d} of size {input_shape[d]}",
                "C4",
            )
        sizes[d] = size
    return tuple(sizes)
