"""``slice_scatter``: OpenVINO SliceScatter-15 on any Array API backend.

Three layers, as everywhere in indexops:

* **validate**: ``start``/``stop``/``step``/``axes`` become tuples of Python ints (any
  integer dtype, so no fixed-width overflow), ``data`` and ``updates`` are checked;
* **plan** (cached per shape and attributes): each sliced axis is clamped with OpenVINO's
  runtime rule (ONNX Slice clamping) and rewritten as a positive-step slice with in-range
  bounds, plus the axes along which ``updates`` must be reversed for negative steps;
* **execute**: one basic-index assignment (``x[...] = ...``, or ``.at[...].set`` on JAX),
  which every backend, array-api-strict and torch included, can express.

The slice parameters set the result's layout, so they must be known when the op is
called: Python ints, or arrays read on the host (a traced array is a clear error).
"""

from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

from .._backends import Backend, backend_for
from .._errors import value_error
from .._plan.cache import static_cache
from .._plan.executors import Executor, executor, int_tuples, signature
from .._plan.slices import positive_slice
from .._typing import Array
from .._validate.arguments import check_same_dtype, index_ints, writes_in_place

OP = "slice_scatter"
NAMES = ("start", "stop", "step", "axes")  # the names of the slice parameters in errors


class SlicePlan(NamedTuple):
    """How to write ``updates``: one positive-step slice per axis of ``data``."""

    slices: tuple[slice, ...]  # in-range, positive step, one entry per data axis
    flip_axes: tuple[int, ...]  # axes along which updates are reversed first
    shape: tuple[int, ...]  # the shape ``updates`` must have


def slice_scatter(
    data: Array,
    updates: Array,
    start: Any,
    stop: Any,
    step: Any,
    axes: Any = None,
    *,
    copy: bool | None = True,
) -> Array:
    """Write ``updates`` into a strided slice of ``data`` (OpenVINO SliceScatter-15).

    Parameters
    ----------
    data : array
        The array to update, rank >= 1, of any Array API library.
    updates : array
        Same namespace and dtype as ``data`` and exactly the slice's shape: ``data``'s
        shape with each sliced axis replaced by its slice length (no broadcasting, zero
        sizes included).
    start, stop, step : sequence of int or 1-D int array
        One entry per sliced axis, any integer dtype (signed or unsigned, any width).
        Negative ``start``/``stop`` count from the end; values past either end are
        clamped, so the dtype's maximum (minimum) means "to the end" forwards
        (backwards). ``step`` must be non-zero; negative steps slice backwards.
    axes : sequence of int or 1-D int array, optional
        The axes that ``start``/``stop``/``step`` apply to, unique after counting
        negative axes from the end. Default ``0, 1, ..., len(start) - 1``. Axes not
        listed are written in full.
    copy : bool or None, default True
        ``True``: return a new array and leave ``data`` untouched. ``False``: write into
        ``data`` and return it (an error for arrays that cannot be written, such as JAX
        arrays). ``None``: in place where possible, otherwise a new array.

    Returns
    -------
    array
        ``data`` with the slice replaced by ``updates``; same shape, dtype, namespace.

    Raises
    ------
    IndexOpsValueError
        For a scalar ``data``, index inputs that are not 1-D, of unequal lengths or
        longer than the rank, a zero step, an axis out of range or repeated, an
        ``updates`` shape other than the slice's, or ``copy=False`` on a read-only array.
    IndexOpsTypeError
        For non-integer index inputs or an ``updates`` dtype other than ``data``'s.

    Notes
    -----
    Clamping follows OpenVINO's runtime (ONNX Slice): a negative start or stop gets the
    dimension ``d`` added; for ``step > 0`` both are clamped to ``[0, d]``, for
    ``step < 0`` start to ``[0, d - 1]`` and stop to ``[-1, d - 1]``. This equals Python
    slicing except when ``step < 0`` and start and stop are both below ``-d``: OpenVINO
    (and this function) writes index 0, Python slicing writes nothing.

    Every check runs before the first write, so a failed call leaves ``data`` unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from indexops import slice_scatter
    >>> data = np.arange(10.0).reshape(2, 5)
    >>> slice_scatter(data, np.array([[10.0, 20, 30], [40, 50, 60]]), [-25], [25], [2], [1])
    array([[10.,  1., 20.,  3., 30.],
           [40.,  6., 50.,  8., 60.]])
    """
    given = int_tuples(start, stop, step) if axes is None else int_tuples(start, stop, step, axes)
    key = None if given is None else signature((OP, axes is None, given), data, updates)
    run = executor(key, lambda: _prepare(data, updates, start, stop, step, axes))
    return run(data, updates, copy)


def _prepare(data: Array, updates: Array, start: Any, stop: Any, step: Any, axes: Any) -> Executor:
    """Validate a call and lower its attributes to slices: its executor."""
    backend = backend_for(OP, data=data, updates=updates)
    _check_arrays(data, updates)
    plan = slice_plan(
        OP,
        NAMES,
        tuple(int(d) for d in data.shape),
        index_ints(OP, "start", start),
        index_ints(OP, "stop", stop),
        index_ints(OP, "step", step),
        None if axes is None else index_ints(OP, "axes", axes),
    )
    if tuple(updates.shape) != plan.shape:
        raise value_error(
            OP, "updates.shape", tuple(updates.shape), f"exactly the slice shape {plan.shape}"
        )
    if math.prod(plan.shape) and not plan.flip_axes:  # the common call: decided here
        return functools.partial(_assign, backend, plan.slices)
    return functools.partial(_execute, backend, plan)


def _check_arrays(data: Array, updates: Array) -> None:
    """``data`` is not a scalar and ``updates`` has its dtype (no promotion)."""
    if data.ndim == 0:
        raise value_error(OP, "data.shape", tuple(data.shape), "rank >= 1 (not a scalar)")
    check_same_dtype(OP, "updates", updates, "data", data)


@static_cache()
def slice_plan(
    op: str,
    names: tuple[str, str, str, str],
    shape: tuple[int, ...],
    start: tuple[int, ...],
    stop: tuple[int, ...],
    step: tuple[int, ...],
    axes: tuple[int, ...] | None,
) -> SlicePlan:
    """Validate the slice parameters against ``shape`` and lower them to positive-step
    slices; errors name ``op`` and the parameters by ``names`` (start, stop, step, axes).

    ONNX Slice, read (:func:`indexops.onnx.slice`), takes the same plan.
    """
    axes = _check_attributes(op, names, len(shape), start, stop, step, axes)
    index = [slice(None)] * len(shape)
    out_shape = list(shape)
    flips = []
    for axis, begin, end, stride in zip(axes, start, stop, step, strict=True):
        first, count = clamp(shape[axis], begin, end, stride)
        out_shape[axis] = count
        index[axis] = positive_slice(first, count, stride)
        if stride < 0 and count > 1:
            flips.append(axis)
    return SlicePlan(tuple(index), tuple(sorted(flips)), tuple(out_shape))


def _check_attributes(
    op: str,
    names: tuple[str, str, str, str],
    rank: int,
    start: tuple[int, ...],
    stop: tuple[int, ...],
    step: tuple[int, ...],
    axes: tuple[int, ...] | None,
) -> tuple[int, ...]:
    """Raise for OpenVINO's (and ONNX's) attribute rules; return the axes, non-negative."""
    start_name, stop_name, step_name, axes_name = names
    named = {start_name: start, stop_name: stop, step_name: step}
    if axes is not None:
        named[axes_name] = axes
    for name, values in named.items():
        if len(values) > rank:
            raise value_error(op, name, values, f"at most {rank} entries (the rank of data)")
    if not len(start) == len(stop) == len(step):
        raise value_error(op, ", ".join(names[:3]), (start, stop, step), "equal lengths")
    if axes is None:
        axes = tuple(range(len(start)))
    elif len(axes) != len(start):
        raise value_error(op, axes_name, axes, f"as many entries as {start_name} ({len(start)})")
    if 0 in step:
        raise value_error(op, step_name, step, "non-zero entries")
    for axis in axes:
        if not -rank <= axis < rank:
            raise value_error(op, axes_name, axes, f"entries in [{-rank}, {rank - 1}]")
    normalised = tuple(axis % rank for axis in axes)
    if len(set(normalised)) != len(normalised):
        raise value_error(op, axes_name, axes, f"unique axes (they normalise to {normalised})")
    return normalised


def clamp(dim: int, start: int, stop: int, step: int) -> tuple[int, int]:
    """OpenVINO's (ONNX Slice) clamping: the first written index and the count.

    The written indices along the axis are ``first + k * step`` for ``k < count``.

    Examples
    --------
    >>> from indexops._ops.slice_scatter import clamp
    >>> clamp(4, -10, -2**63, -1)  # Python's [-10:-2**63:-1] is empty; here index 0
    (0, 1)
    >>> clamp(5, -25, 25, 2)
    (0, 3)
    """
    first = start + dim if start < 0 else start
    last = stop + dim if stop < 0 else stop
    if step > 0:
        first, last = _clip(first, 0, dim), _clip(last, 0, dim)
        return first, max(0, -((first - last) // step))
    first, last = _clip(first, 0, dim - 1), _clip(last, -1, dim - 1)
    return first, max(0, -((last - first) // -step))


def _clip(value: int, low: int, high: int) -> int:
    """``min(max(value, low), high)``: the order matters when ``high < low`` (dim 0)."""
    return min(max(value, low), high)


def _execute(
    backend: Backend, plan: SlicePlan, data: Array, updates: Array, copy: bool | None
) -> Array:
    """One strided assignment into ``data`` itself or into a copy."""
    in_place = writes_in_place(backend, OP, data, copy, name="data")
    if math.prod(plan.shape) == 0:
        return data if in_place else backend.copy(data)
    if plan.flip_axes:
        updates = backend.flipped(updates, plan.flip_axes)
    return backend.assign_window(data, plan.slices, updates, in_place=in_place)


def _assign(
    backend: Backend, slices: tuple[slice, ...], data: Array, updates: Array, copy: bool | None
) -> Array:
    """:func:`_execute` for a plan that writes something and flips no axis: the strided
    assignment alone."""
    in_place = writes_in_place(backend, OP, data, copy, name="data")
    return backend.assign_window(data, slices, updates, in_place=in_place)
