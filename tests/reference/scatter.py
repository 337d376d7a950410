"""StableHLO scatter and dynamic_update_slice, transcribed loop by loop from the spec.

Source: openxla/stablehlo docs/spec.md, sections "scatter" and "dynamic_update_slice".
The schedule is row-major order of ``updates`` (the order indexops promises); ``mode``
selects per-element dropping (the spec), whole-window dropping (XLA/JAX) or clipping.
"""

from __future__ import annotations

import itertools

import numpy as np


def _combine(name, old, new):
    if name is None:
        return new
    if name == "add":
        return old + new
    if name == "mul":
        return old * new
    if name == "min":
        return min(old, new)
    if name == "max":
        return max(old, new)
    return name(old, new)


def scatter(
    input,
    scatter_indices,
    updates,
    *,
    update_window_dims,
    inserted_window_dims,
    scatter_dims_to_operand_dims,
    index_vector_dim,
    input_batching_dims=(),
    scatter_indices_batching_dims=(),
    update_computation=None,
    mode="drop",
):
    results = np.array(input, copy=True)
    scatter_indices = np.asarray(scatter_indices)
    updates = np.asarray(updates)
    update_scatter_dims = [d for d in range(updates.ndim) if d not in update_window_dims]
    window_operand_dims = [
        d
        for d in range(results.ndim)
        if d not in inserted_window_dims and d not in input_batching_dims
    ]
    window_sizes = [1] * results.ndim
    for d, u in zip(window_operand_dims, update_window_dims):
        window_sizes[d] = updates.shape[u]
    for update_index in itertools.product(*(range(n) for n in updates.shape)):
        update_scatter_index = [update_index[d] for d in update_scatter_dims]
        if index_vector_dim < scatter_indices.ndim:
            position = list(update_scatter_index)
            position.insert(index_vector_dim, slice(None))
            start_index = [int(v) for v in scatter_indices[tuple(position)]]
        else:
            start_index = [int(scatter_indices[tuple(update_scatter_index)])]
        full_start_index = [0] * results.ndim
        window_inside = True
        for d_start, d_input in enumerate(scatter_dims_to_operand_dims):
            limit = results.shape[d_input] - window_sizes[d_input]
            start = start_index[d_start]
            window_inside &= 0 <= start <= limit
            full_start_index[d_input] = min(max(start, 0), limit) if mode == "clip" else start
        full_batching_index = [0] * results.ndim
        for d_input, d_start in zip(input_batching_dims, scatter_indices_batching_dims):
            shift = 0 if d_start < index_vector_dim else 1
            full_batching_index[d_input] = update_scatter_index[d_start - shift]
        update_window_index = [update_index[d] for d in update_window_dims]
        full_window_index = [0] * results.ndim
        for d, w in zip(window_operand_dims, update_window_index):
            full_window_index[d] = w
        result_index = [
            s + b + w for s, b, w in zip(full_start_index, full_batching_index, full_window_index)
        ]
        if mode == "drop_window" and not window_inside:
            continue
        if not all(0 <= i < n for i, n in zip(result_index, results.shape)):
            continue
        result_index = tuple(result_index)
        results[result_index] = _combine(
            update_computation, results[result_index], updates[update_index]
        )
    return results


def dynamic_update_slice(operand, update, start_indices):
    result = np.array(operand, copy=True)
    update = np.asarray(update)
    adjusted = [
        min(max(int(s), 0), dim - size)
        for s, dim, size in zip(start_indices, result.shape, update.shape)
    ]
    for update_index in itertools.product(*(range(n) for n in update.shape)):
        result_index = tuple(a + u for a, u in zip(adjusted, update_index))
        result[result_index] = update[update_index]
    return result
