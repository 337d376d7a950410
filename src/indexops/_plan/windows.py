"""The geometry shared by gather and scatter: windows at start indices, as rows of a 2-D view.

StableHLO gather and scatter describe the same geometry with different names: an index
array holds one start vector per batch position, a window of the operand sits at each
start, and the other array (gather's result, scatter's updates) is laid out as batch dims
interleaved with window dims. :class:`WindowPlan` holds that geometry in one vocabulary:

* the *intermediate* layout is ``[*batch_shape, *window_shape]``, batch dims in index order
  and window dims in operand order; ``to_layout`` permutes it into the op's own layout;
* the operand is seen as ``rows_shape = (head, tail)``: trailing operand dims that every
  window covers in full (and that no start index moves) form one contiguous row, so each
  window is a set of whole rows and indices are per row, not per element.

Everything here is static (shapes and attributes); plans are made once per key and every
derived quantity is computed when the plan is made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class WindowPlan:
    """Geometry of a gather or scatter, computed once per shapes and attributes."""

    operand_shape: tuple[int, ...]
    index_shape: tuple[int, ...]  # with the implicit trailing index vector dim made explicit
    index_vector_dim: int
    start_map: tuple[int, ...]
    batching_pairs: tuple[tuple[int, int], ...]  # (operand dim, index dim)
    window_sizes: tuple[int, ...]  # per operand dim; 1 on collapsed and batching dims
    window_dims: tuple[int, ...]  # operand dims that appear in the window layout
    to_layout: tuple[int, ...]  # permutation: intermediate layout -> op layout
    tail_start: int  # operand dims from here on are whole rows
    batch_shape: tuple[int, ...]
    intermediate_shape: tuple[int, ...]
    rows_shape: tuple[int, int]
    head_window_dims: tuple[int, ...]  # window dims before tail_start: rows step along them
    head_strides: tuple[int, ...]  # rows between neighbours along each head operand dim
    start_limits: tuple[int, ...]  # per start index: the largest start whose window fits
    row_count: int  # rows moved: one per batch position and head window position
    row_axes: tuple[int, ...]  # batch and head window axes, in the op layout's order
    layout_to_rows: tuple[int, ...]  # op layout -> [head axes in layout order, tail axes]
    # each row number is the one start clamped to [0, head rows - 1]: one start, stepping
    # one row, windows one row tall (e.g. operand[rows]), so a clipping take can clamp it
    rows_are_clamped_starts: bool
    # element plans (GatherElements, ScatterElements, take_along_axis, torch.gather): every
    # operand dim is a batching dim or the one start dim, the index has one batch dim per
    # operand dim; per operand dim, the batch axis that runs along it (else None)
    element_axes: tuple[int, ...] | None

    @property
    def window_shape(self) -> tuple[int, ...]:
        return self.intermediate_shape[len(self.batch_shape) :]

    @property
    def rows_batch_shape(self) -> tuple[int, ...]:
        """Shape of the row numbers: ``[*batch_shape, *head window sizes]``."""
        return self.batch_shape + tuple(self.window_sizes[d] for d in self.head_window_dims)


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
    dropped = set(collapsed_dims) | {operand_dim for operand_dim, _ in batching_pairs}
    window_dims = tuple(d for d in range(len(operand_shape)) if d not in dropped)
    batch_shape = index_shape[:index_vector_dim] + index_shape[index_vector_dim + 1 :]
    rank = len(batch_shape) + len(window_dims)
    batch_axes = iter(range(len(batch_shape)))
    window_axes = iter(range(len(batch_shape), rank))
    to_layout = tuple(
        next(window_axes) if axis in layout_window_dims else next(batch_axes)
        for axis in range(rank)
    )
    tail_start = _tail_start(operand_shape, window_sizes, set(start_map) | dropped)
    head_window_dims = tuple(d for d in window_dims if d < tail_start)
    heads = len(batch_shape) + len(head_window_dims)
    head = [a for a, axis in enumerate(to_layout) if axis < heads]
    tail = [a for a, axis in enumerate(to_layout) if axis >= heads]
    head_rows = math.prod(operand_shape[:tail_start])
    head_strides = tuple(math.prod(operand_shape[d + 1 : tail_start]) for d in range(tail_start))
    start_limits = tuple(operand_shape[d] - window_sizes[d] for d in start_map)
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
        batch_shape=batch_shape,
        intermediate_shape=batch_shape + tuple(window_sizes[d] for d in window_dims),
        rows_shape=(head_rows, math.prod(operand_shape[tail_start:])),
        head_window_dims=head_window_dims,
        head_strides=head_strides,
        start_limits=start_limits,
        row_count=math.prod(batch_shape) * math.prod([window_sizes[d] for d in head_window_dims]),
        row_axes=tuple(axis for axis in to_layout if axis < heads),
        layout_to_rows=tuple(head + tail),
        rows_are_clamped_starts=(
            len(start_map) == 1
            and not batching_pairs
            and not head_window_dims
            and head_strides[start_map[0]] == 1
            and start_limits[0] == head_rows - 1
        ),
        element_axes=_element_axes(
            len(operand_shape), len(batch_shape), index_vector_dim, start_map, batching_pairs
        )
        if not window_dims
        else None,
    )


def _element_axes(
    rank: int,
    batch_rank: int,
    index_vector_dim: int,
    start_map: tuple[int, ...],
    batching_pairs: tuple[tuple[int, int], ...],
) -> tuple[int, ...] | None:
    """For an element plan, the batch axis of the index along each operand dim: the
    start dim's is the one batch axis that no batching dim pairs with. ``None`` for
    other plans (several start dims, batch dims of the index beyond them); the caller
    rules out plans with window dims.

    ``batching_pairs`` hold index dims; batch axes count them without the vector dim.

    Examples
    --------
    ``take_along_axis(x, i, axis=1)`` for a 2-D ``x``, with the index vector dim last:

    >>> from indexops._plan.windows import _element_axes
    >>> _element_axes(2, 2, 2, (1,), ((0, 0),))
    (0, 1)
    """
    if batch_rank != rank or len(start_map) != 1 or len(batching_pairs) != rank - 1:
        return None
    axes = [-1] * rank
    for operand_dim, index_dim in batching_pairs:
        axes[operand_dim] = index_dim - (index_dim > index_vector_dim)
    free = set(range(rank)) - set(axes)
    if len(free) != 1:
        return None
    axes[start_map[0]] = free.pop()
    return tuple(axes)


def _tail_start(operand_shape: tuple[int, ...], window_sizes: tuple[int, ...], moved: set) -> int:
    """The first of the trailing dims that every window covers in full and no start moves."""
    tail_start = len(operand_shape)
    while tail_start > 0:
        d = tail_start - 1
        if d in moved or window_sizes[d] != operand_shape[d]:
            break
        tail_start = d
    return tail_start
