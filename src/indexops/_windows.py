"""The plan shared by gather and scatter: windows at start indices, as rows of a 2-D view.

StableHLO gather and scatter describe the same geometry with different names: an index
array holds one start vector per batch position, a window of the operand sits at each
start, and the other array (gather's result, scatter's updates) is laid out as batch dims
interleaved with window dims. :class:`WindowPlan` holds that geometry in one vocabulary:

* the *intermediate* layout is ``[*batch_shape, *window_shape]``, batch dims in index order
  and window dims in operand order; ``to_layout`` permutes it into the op's own layout;
* the operand is seen as ``rows_shape = (head, tail)``: trailing operand dims that every
  window covers in full (and that no start index moves) form one contiguous row, so each
  window is a set of whole rows and indices are per row, not per element.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import array_api_compat as compat

from ._backend import index_constant, to_index
from ._errors import value_error

Array = Any


@dataclass(frozen=True)
class WindowPlan:
    """Geometry of a gather or scatter, computed once per shapes and attributes."""

    operand_shape: tuple[int, ...]
    index_shape: tuple[int, ...]
    index_vector_dim: int
    start_map: tuple[int, ...]
    batching_pairs: tuple[tuple[int, int], ...]  # (operand dim, index dim)
    window_sizes: tuple[int, ...]  # per operand dim; 1 on collapsed and batching dims
    window_dims: tuple[int, ...]  # operand dims that appear in the window layout
    to_layout: tuple[int, ...]  # permutation: intermediate layout -> op layout
    tail_start: int  # operand dims from here on are whole rows

    @functools.cached_property
    def batch_shape(self) -> tuple[int, ...]:
        shape = self.index_shape
        return shape[: self.index_vector_dim] + shape[self.index_vector_dim + 1 :]

    @functools.cached_property
    def window_shape(self) -> tuple[int, ...]:
        return tuple(self.window_sizes[d] for d in self.window_dims)

    @functools.cached_property
    def intermediate_shape(self) -> tuple[int, ...]:
        return self.batch_shape + self.window_shape

    @functools.cached_property
    def layout_shape(self) -> tuple[int, ...]:
        shape = self.intermediate_shape
        return tuple(shape[axis] for axis in self.to_layout)

    @functools.cached_property
    def from_layout(self) -> tuple[int, ...]:
        inverse = [0] * len(self.to_layout)
        for position, axis in enumerate(self.to_layout):
            inverse[axis] = position
        return tuple(inverse)

    @functools.cached_property
    def rows_shape(self) -> tuple[int, int]:
        head = math.prod(self.operand_shape[: self.tail_start])
        return head, math.prod(self.operand_shape[self.tail_start :])

    @functools.cached_property
    def head_window_dims(self) -> tuple[int, ...]:
        return tuple(d for d in self.window_dims if d < self.tail_start)

    @functools.cached_property
    def row_axes(self) -> tuple[int, ...]:
        """The batch and head window axes of the intermediate layout, in layout order.

        Rows listed in this order follow the row-major order of the op's layout, which
        is the order in which scatter applies duplicate updates.
        """
        heads = len(self.batch_shape) + len(self.head_window_dims)
        return tuple(axis for axis in self.to_layout if axis < heads)

    @functools.cached_property
    def layout_to_rows(self) -> tuple[int, ...]:
        """Permutation of the op's layout to ``[head axes in layout order, tail axes]``."""
        heads = len(self.batch_shape) + len(self.head_window_dims)
        head = [a for a, axis in enumerate(self.to_layout) if axis < heads]
        tail = [a for a, axis in enumerate(self.to_layout) if axis >= heads]
        return tuple(head + tail)

    @functools.cached_property
    def head_strides(self) -> dict[int, int]:
        """Rows between neighbours along each head dim of the operand."""
        strides, stride = {}, 1
        for d in reversed(range(self.tail_start)):
            strides[d] = stride
            stride *= self.operand_shape[d]
        return strides

    @functools.cached_property
    def start_limits(self) -> tuple[int, ...]:
        """Per start index: the largest start whose window still fits in the operand."""
        return tuple(self.operand_shape[d] - self.window_sizes[d] for d in self.start_map)

    @functools.cached_property
    def row_count(self) -> int:
        """Rows moved: one per batch position and head window position."""
        head_window = math.prod(self.window_sizes[d] for d in self.head_window_dims)
        return math.prod(self.batch_shape) * head_window


def make_plan(
    operand_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    *,
    index_vector_dim: int,
    start_map: tuple[int, ...],
    batching_pairs: tuple[tuple[int, int], ...],
    window_sizes: tuple[int, ...],
    collapsed_dims: tuple[int, ...],
    layout_window_dims: tuple[int, ...],
) -> WindowPlan:
    """Build a plan from already validated attributes.

    ``layout_window_dims`` are the axes of the op's layout (gather ``offset_dims``, scatter
    ``update_window_dims``) that hold window dims; the other axes hold batch dims in order.
    """
    if index_vector_dim == len(index_shape):
        index_shape = (*index_shape, 1)
    batching_operand_dims = {operand_dim for operand_dim, _ in batching_pairs}
    dropped = set(collapsed_dims) | batching_operand_dims
    window_dims = tuple(d for d in range(len(operand_shape)) if d not in dropped)
    rank = len(index_shape) - 1 + len(window_dims)
    batch_count = rank - len(window_dims)
    batch_axes = iter(range(batch_count))
    window_axes = iter(range(batch_count, rank))
    to_layout = tuple(
        next(window_axes) if axis in layout_window_dims else next(batch_axes)
        for axis in range(rank)
    )
    tail_start = len(operand_shape)
    moved = set(start_map) | dropped
    while tail_start > 0:
        d = tail_start - 1
        if d in moved or window_sizes[d] != operand_shape[d]:
            break
        tail_start = d
    return WindowPlan(
        operand_shape=operand_shape,
        index_shape=index_shape,
        index_vector_dim=index_vector_dim,
        start_map=start_map,
        batching_pairs=batching_pairs,
        window_sizes=window_sizes,
        window_dims=window_dims,
        to_layout=to_layout,
        tail_start=tail_start,
    )


def start_vectors(xp: ModuleType, plan: WindowPlan, indices: Array) -> Array:
    """The start vectors in the index dtype, shape ``[*batch_shape, len(start_map)]``."""
    indices = xp.reshape(indices, plan.index_shape)
    if plan.index_vector_dim != len(plan.index_shape) - 1:
        indices = xp.moveaxis(indices, plan.index_vector_dim, -1)
    return to_index(xp, indices)


def permuted(xp: ModuleType, x: Array, axes: tuple[int, ...]) -> Array:
    """``xp.permute_dims(x, axes)``, skipped for the identity (a call costs microseconds)."""
    if all(axis == position for position, axis in enumerate(axes)):
        return x
    return xp.permute_dims(x, axes)


def _along(xp: ModuleType, values: Array, axis: int, ndim: int) -> Array:
    """Reshape 1-D ``values`` to broadcast along ``axis`` of an ``ndim``-d array."""
    shape = [1] * ndim
    shape[axis] = values.shape[0]
    return xp.reshape(values, tuple(shape))


def row_numbers(xp: ModuleType, plan: WindowPlan, starts: Array) -> Array:
    """Row of the 2-D operand view for every batch and head window position.

    ``starts`` are start vectors already made safe (clamped or masked). The result has
    shape ``[*batch_shape, *head_window_shape]``.
    """
    device = compat.device(starts)
    strides = plan.head_strides
    nb = len(plan.batch_shape)
    head_dims = plan.head_window_dims
    ndim = nb + len(head_dims)
    start_shape = plan.batch_shape + (1,) * len(head_dims)
    terms = [
        xp.reshape(_scaled(starts[..., k], strides[d]), start_shape)
        for k, d in enumerate(plan.start_map)
    ] or [xp.zeros(start_shape, dtype=starts.dtype, device=device)]  # spans every batch dim
    for operand_dim, index_dim in plan.batching_pairs:
        axis = index_dim - (index_dim > plan.index_vector_dim)
        positions = xp.arange(plan.operand_shape[operand_dim], dtype=starts.dtype, device=device)
        terms.append(_along(xp, _scaled(positions, strides[operand_dim]), axis, ndim))
    for j, d in enumerate(head_dims):
        offsets = xp.arange(plan.window_sizes[d], dtype=starts.dtype, device=device)
        terms.append(_along(xp, _scaled(offsets, strides[d]), nb + j, ndim))
    return functools.reduce(lambda total, term: total + term, terms)


def _scaled(x: Array, stride: int) -> Array:
    return x if stride == 1 else x * stride


def clamp_starts(xp: ModuleType, plan: WindowPlan, starts: Array) -> Array:
    """StableHLO clamping: each start moves so its whole window is inside the operand."""
    return _clip_columns(xp, starts, (0,) * len(plan.start_limits), plan.start_limits)


def _clip_columns(
    xp: ModuleType, starts: Array, lower: tuple[int, ...], upper: tuple[int, ...]
) -> Array:
    if not lower:
        return starts
    low, high = index_constant(xp, lower, starts), index_constant(xp, upper, starts)
    return xp.minimum(xp.maximum(starts, low), high)


def all_windows_inside(xp: ModuleType, plan: WindowPlan, starts: Array) -> bool:
    """Whether every window lies inside the operand, so clamping and masking change nothing.

    Two reductions over the starts; far cheaper than building the clamped or masked arrays
    that are only needed when some window sticks out.
    """
    limits = plan.start_limits
    if not limits or math.prod(starts.shape) == 0:
        return True
    if len(limits) == 1:  # one device-to-host read: each costs a sync on a GPU
        return bool((xp.min(starts) >= 0) & (xp.max(starts) <= limits[0]))
    batch_axes = tuple(range(starts.ndim - 1))
    low, high = xp.min(starts, axis=batch_axes), xp.max(starts, axis=batch_axes)
    upper = index_constant(xp, limits, starts)
    return bool(xp.all((low >= 0) & (high <= upper)))


def windows_in_bounds(xp: ModuleType, plan: WindowPlan, starts: Array) -> Array:
    """Per batch position: whether the whole window lies inside the operand."""
    inside = xp.ones(plan.batch_shape, dtype=xp.bool, device=compat.device(starts))
    for k, high in enumerate(plan.start_limits):
        inside = inside & (starts[..., k] >= 0) & (starts[..., k] <= high)
    return inside


def rows_in_bounds(xp: ModuleType, plan: WindowPlan, starts: Array) -> Array:
    """Per batch and head window position: whether that row lies inside the operand.

    Every element of a row shares its head coordinates, so per-row bounds are per-element
    bounds (StableHLO's scatter rule). Shape ``[*batch_shape, *head_window_shape]``.
    """
    nb = len(plan.batch_shape)
    head_dims = plan.head_window_dims
    ndim = nb + len(head_dims)
    device = compat.device(starts)
    start_shape = plan.batch_shape + (1,) * len(head_dims)
    inside = xp.ones(start_shape, dtype=xp.bool, device=device)
    for k, d in enumerate(plan.start_map):
        size, width = plan.operand_shape[d], plan.window_sizes[d]
        start = xp.reshape(starts[..., k], start_shape)
        if d in head_dims:
            offsets = xp.arange(width, dtype=starts.dtype, device=device)
            start = start + _along(xp, offsets, nb + head_dims.index(d), ndim)
        inside = inside & (start >= 0) & (start < size)
    return inside


def safe_starts(xp: ModuleType, plan: WindowPlan, starts: Array) -> Array:
    """Starts clipped to ``[-window, dim]``: same bounds verdicts, no integer overflow."""
    lower = tuple(-plan.window_sizes[d] for d in plan.start_map)
    upper = tuple(plan.operand_shape[d] for d in plan.start_map)
    return _clip_columns(xp, starts, lower, upper)


def check_window_rank(op: str, name: str, value: tuple[int, ...], rank: int, rule: str) -> None:
    """Each entry of the attribute ``value`` must be a dim in ``[0, rank)``."""
    bad = [d for d in value if not 0 <= d < rank]
    if bad:
        raise value_error(op, name, value, f"every entry must be in [0, {rank})", rule)


def check_sorted(op: str, name: str, value: tuple[int, ...], rule: str) -> None:
    if list(value) != sorted(value):
        raise value_error(op, name, value, "must be sorted ascending", rule)


def check_unique(op: str, name: str, value: tuple[int, ...], rule: str) -> None:
    if len(set(value)) != len(value):
        raise value_error(op, name, value, "must not repeat a dim", rule)


def check_rank_sum(op: str, names: str, groups: tuple, rank: int, operand: str, rule: str) -> None:
    """The window, dropped and batching dims together must name every operand dim."""
    if rank != sum(len(group) for group in groups):
        raise value_error(
            op, names, groups, f"their sizes must add up to rank({operand}) = {rank}", rule
        )


def check_index_vector_dim(op: str, index_vector_dim: int, index_rank: int, rule: str) -> None:
    if not 0 <= index_vector_dim <= index_rank:
        raise value_error(
            op, "index_vector_dim", index_vector_dim, f"must be in [0, {index_rank}]", rule
        )


def check_start_map_size(
    op: str,
    name: str,
    start_map: tuple[int, ...],
    index_shape: tuple[int, ...],
    index_vector_dim: int,
    index_name: str,
    rule: str,
) -> None:
    """One start map entry per component of the index vector."""
    in_range = index_vector_dim < len(index_shape)
    vector_size = index_shape[index_vector_dim] if in_range else 1
    if len(start_map) != vector_size:
        raise value_error(
            op,
            name,
            start_map,
            f"its size must equal the index vector size {vector_size} "
            f"(dim {index_vector_dim} of {index_name} with shape {index_shape})",
            rule,
        )


def check_batching_dims(
    op: str,
    names: tuple[str, str, str, str],
    operand_dims: tuple[int, ...],
    index_dims: tuple[int, ...],
    operand_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    index_vector_dim: int,
    rules: tuple[str, str, str, str, str],
) -> None:
    """The index-side batching constraints, shared by gather (C13-C17) and scatter (C14-C18).

    ``names`` are (operand, index array, operand batching attr, index batching attr).
    """
    operand, index_array, operand_attr, index_attr = names
    check_unique(op, index_attr, index_dims, rules[0])
    check_window_rank(op, index_attr, index_dims, len(index_shape), rules[1])
    if index_vector_dim in index_dims:
        raise value_error(
            op,
            index_attr,
            index_dims,
            f"must not contain index_vector_dim={index_vector_dim}",
            rules[2],
        )
    if len(operand_dims) != len(index_dims):
        raise value_error(
            op,
            index_attr,
            index_dims,
            f"must have the size of {operand_attr}={operand_dims}",
            rules[3],
        )
    for operand_dim, index_dim in zip(operand_dims, index_dims):
        if operand_shape[operand_dim] != index_shape[index_dim]:
            raise value_error(
                op,
                index_attr,
                index_dims,
                f"dim {index_dim} of {index_array} has size {index_shape[index_dim]} but "
                f"{operand} batching dim {operand_dim} has size {operand_shape[operand_dim]}",
                rules[4],
            )
