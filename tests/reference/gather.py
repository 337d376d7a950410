"""StableHLO gather and dynamic_slice, transcribed loop by loop from the spec.

Source: openxla/stablehlo docs/spec.md, sections "gather" and "dynamic_slice".
"""

from __future__ import annotations

import itertools

import numpy as np


def clamp(lo: int, x: int, hi: int) -> int:
    return min(max(x, lo), hi)


def gather(
    operand,
    start_indices,
    *,
    offset_dims,
    collapsed_slice_dims,
    start_index_map,
    index_vector_dim,
    slice_sizes,
    operand_batching_dims=(),
    start_indices_batching_dims=(),
    mode="clip",
    fill_value=None,
):
    operand = np.asarray(operand)
    start_indices = np.asarray(start_indices)
    batch_shape = [n for d, n in enumerate(start_indices.shape) if d != index_vector_dim]
    offset_sizes = [
        slice_sizes[d]
        for d in range(operand.ndim)
        if d not in collapsed_slice_dims and d not in operand_batching_dims
    ]
    result_rank = len(batch_shape) + len(offset_sizes)
    batch_dims = [d for d in range(result_rank) if d not in offset_dims]
    result_shape = [0] * result_rank
    for d, n in zip(batch_dims, batch_shape):
        result_shape[d] = n
    for d, n in zip(offset_dims, offset_sizes):
        result_shape[d] = n
    result = np.empty(result_shape, dtype=operand.dtype)
    for result_index in itertools.product(*(range(n) for n in result_shape)):
        batch_index = [result_index[d] for d in batch_dims]
        if index_vector_dim < start_indices.ndim:
            position = list(batch_index)
            position.insert(index_vector_dim, slice(None))
            start_index = [int(v) for v in start_indices[tuple(position)]]
        else:
            start_index = [int(start_indices[tuple(batch_index)])]
        full_start_index = [0] * operand.ndim
        in_bounds = True
        for d_start, d_operand in enumerate(start_index_map):
            limit = operand.shape[d_operand] - slice_sizes[d_operand]
            if not 0 <= start_index[d_start] <= limit:
                in_bounds = False
            full_start_index[d_operand] = clamp(0, start_index[d_start], limit)
        full_batching_index = [0] * operand.ndim
        for d_operand, d_start in zip(operand_batching_dims, start_indices_batching_dims):
            shift = 0 if d_start < index_vector_dim else 1
            full_batching_index[d_operand] = batch_index[d_start - shift]
        offset_index = [result_index[d] for d in offset_dims]
        full_offset_index = [0] * operand.ndim
        offsets = iter(offset_index)
        for d in range(operand.ndim):
            if d not in collapsed_slice_dims and d not in operand_batching_dims:
                full_offset_index[d] = next(offsets)
        operand_index = tuple(
            s + b + o for s, b, o in zip(full_start_index, full_batching_index, full_offset_index)
        )
        if mode == "fill" and not in_bounds:
            result[result_index] = default_fill(operand.dtype) if fill_value is None else fill_value
        else:
            result[result_index] = operand[operand_index]
    return result


def default_fill(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return True
    if np.issubdtype(dtype, np.signedinteger):
        return np.iinfo(dtype).min
    if np.issubdtype(dtype, np.unsignedinteger):
        return np.iinfo(dtype).max
    return np.nan


def dynamic_slice(operand, start_indices, slice_sizes):
    operand = np.asarray(operand)
    adjusted = [
        clamp(0, int(s), dim - size)
        for s, dim, size in zip(start_indices, operand.shape, slice_sizes)
    ]
    result = np.empty(slice_sizes, dtype=operand.dtype)
    for result_index in itertools.product(*(range(n) for n in slice_sizes)):
        operand_index = tuple(a + r for a, r in zip(adjusted, result_index))
        result[result_index] = operand[operand_index]
    return result
