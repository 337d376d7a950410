"""Index arithmetic on start vectors: clamping, bounds masks and row numbers.

Starts are handled as one array per entry of the start map (a *column*, of the batch
shape), so that every bound is a Python int of the plan: no constant arrays are made,
nothing is read on the host, and the same code runs eagerly, traced and on a GPU.
"""

from __future__ import annotations

import functools

from .._backends import Backend
from .._errors import index_out_of_bounds
from .._plan.windows import WindowPlan
from .._typing import Array


def counted_from_end(backend: Backend, indices: Array, size: int) -> Array:
    """``indices`` into a dim of ``size`` with each negative entry counted from its end
    (NumPy's indexing: ``size`` added)."""
    return backend.where(indices < 0, indices + size, indices)


def to_index(backend: Backend, x: Array) -> Array:
    """Integer ``x`` in the index dtype; unsigned values above its range saturate at its
    maximum instead of wrapping to negatives."""
    xp, dtype = backend.xp, backend.index_dtype()
    if x.dtype == dtype:
        return x
    wide = backend.astype(x, dtype)
    top = xp.iinfo(dtype).max
    if backend.has_kind(x.dtype, "unsigned integer") and backend.iinfo(x.dtype).max > top:
        wide = backend.where(wide < 0, top, wide)
    return wide


def start_columns(backend: Backend, plan: WindowPlan, indices: Array) -> list[Array]:
    """One array of starts per start map entry, each of ``plan.batch_shape``."""
    indices = backend.xp.reshape(indices, plan.index_shape)
    lead = (slice(None),) * plan.index_vector_dim
    keys = [(*lead, k, ...) for k in range(len(plan.start_map))]
    return [to_index(backend, indices[key]) for key in keys]


def clamp_columns(backend: Backend, plan: WindowPlan, columns: list[Array]) -> list[Array]:
    """StableHLO clamping: each start moves so its whole window is inside the operand.

    A window larger than its dim (scatter's size-1 window on an inserted dim of size 0)
    fits nowhere: its start becomes 0, and the empty operand takes no write.
    """
    return [backend.clip(c, 0, max(limit, 0)) for c, limit in zip(columns, plan.start_limits)]


def safe_columns(backend: Backend, plan: WindowPlan, columns: list[Array]) -> list[Array]:
    """Starts clipped to ``[-window, dim]``: the same bounds verdicts, no integer overflow."""
    return [
        backend.clip(c, -plan.window_sizes[d], plan.operand_shape[d])
        for c, d in zip(columns, plan.start_map)
    ]


def all_inside_on_host(backend: Backend, plan: WindowPlan, columns: list[Array]) -> bool:
    """Whether every window lies inside the operand, read with one transfer per column.

    Only for starts whose values are on the host: the answer lets a call skip the masks.
    """
    return all(backend.all_in_range(c, limit) for c, limit in zip(columns, plan.start_limits))


def window_outside(backend: Backend, plan: WindowPlan, columns: list[Array]) -> IndexError:
    """NumPy's :class:`IndexError` for the first start (in the starts' order) whose
    window leaves the operand, naming the index it reaches outside its dim: for starts
    on the host that :func:`all_inside_on_host` found outside."""
    import numpy as np

    found = []
    for column, limit, dim in zip(columns, plan.start_limits, plan.start_map):
        starts = np.asarray(backend.to_numpy(column)).reshape(-1)
        outside = np.flatnonzero((starts < 0) | (starts > limit))
        if outside.size:
            first = int(outside[0])
            found.append((first, int(starts[first]), dim, limit))
    _, start, dim, limit = min(found)
    size = plan.operand_shape[dim]  # a start past its limit reaches past the end last
    return index_out_of_bounds(start if start < 0 else start + size - limit - 1, dim, size)


def windows_in_bounds(
    backend: Backend, plan: WindowPlan, columns: list[Array], like: Array
) -> Array:
    """Per batch position: whether the whole window lies inside the operand."""
    inside = None  # no constant array to start from: chunked libraries would rechunk it
    for c, limit in zip(columns, plan.start_limits):
        fits = (c >= 0) & (c <= limit)
        inside = fits if inside is None else inside & fits
    return backend.full(plan.batch_shape, True, backend.xp.bool, like) if inside is None else inside


def rows_in_bounds(backend: Backend, plan: WindowPlan, columns: list[Array], like: Array) -> Array:
    """Per batch and head window position: whether that row lies inside the operand.

    Every element of a row shares its head coordinates, so per-row bounds are per-element
    bounds (StableHLO's scatter rule). Broadcasts to ``plan.rows_batch_shape``;
    ``columns`` are safe (see :func:`safe_columns`).
    """
    nb = len(plan.batch_shape)
    start_shape = plan.batch_shape + (1,) * len(plan.head_window_dims)
    inside = None  # as in windows_in_bounds
    for c, d in zip(columns, plan.start_map):
        start = backend.xp.reshape(c, start_shape)
        if d in plan.head_window_dims:
            offsets = backend.arange(plan.window_sizes[d], c.dtype, like)
            start = start + _along(plan, backend, offsets, nb + plan.head_window_dims.index(d))
        lies_in = (start >= 0) & (start < plan.operand_shape[d])
        inside = lies_in if inside is None else inside & lies_in
    return backend.full(start_shape, True, backend.xp.bool, like) if inside is None else inside


def row_numbers(backend: Backend, plan: WindowPlan, columns: list[Array], like: Array) -> Array:
    """Row of the 2-D operand view for every batch and head window position.

    ``columns`` are starts already made safe (clamped or masked). The result has shape
    ``plan.rows_batch_shape`` and the index dtype; ``like`` gives the device.
    """
    xp = backend.xp
    dtype = backend.index_dtype()
    nb = len(plan.batch_shape)
    start_shape = plan.batch_shape + (1,) * len(plan.head_window_dims)
    terms = [
        xp.reshape(_scaled(c, plan.head_strides[d]), start_shape)
        for c, d in zip(columns, plan.start_map)
    ] or [backend.full(start_shape, 0, dtype, like)]  # spans every batch dim
    for operand_dim, index_dim in plan.batching_pairs:
        axis = index_dim - (index_dim > plan.index_vector_dim)
        positions = backend.arange(plan.operand_shape[operand_dim], dtype, like)
        terms.append(
            _along(plan, backend, _scaled(positions, plan.head_strides[operand_dim]), axis)
        )
    for j, d in enumerate(plan.head_window_dims):
        offsets = backend.arange(plan.window_sizes[d], dtype, like)
        terms.append(_along(plan, backend, _scaled(offsets, plan.head_strides[d]), nb + j))
    return functools.reduce(lambda a, b: a + b, terms)


def _along(plan: WindowPlan, backend: Backend, values: Array, axis: int) -> Array:
    """Reshape 1-D ``values`` to broadcast along ``axis`` of the row numbers."""
    shape = [1] * len(plan.rows_batch_shape)
    shape[axis] = values.shape[0]
    return backend.xp.reshape(values, tuple(shape))


def _scaled(x: Array, stride: int) -> Array:
    return x if stride == 1 else x * stride
