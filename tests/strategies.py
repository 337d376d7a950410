"""Hypothesis strategies for StableHLO window ops (gather and scatter share them).

A *window case* is a valid geometry in gather's vocabulary: operand shape, start indices,
``offset_dims`` (the window axes of the result), collapsed dims, batching dims,
``start_index_map``, ``index_vector_dim`` and ``slice_sizes``. It covers index_vector_dim
anywhere, unsorted start maps, batching dims, empty windows, empty index vectors,
duplicates and out-of-bounds starts, in every integer index dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

INDEX_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
VALUE_DTYPES = ("float32", "float64", "int32", "int64", "int16", "uint8")

try:
    import ml_dtypes  # noqa: F401 (gives NumPy the dtypes below, by name)
except ImportError:
    EXTENSION_DTYPES: tuple[str, ...] = ()
else:
    # NumPy dtypes beyond the standard (isdtype cannot name them); NumPy and JAX hold them
    EXTENSION_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def value_dtypes(extension: bool, dtypes: tuple[str, ...] = VALUE_DTYPES) -> tuple[str, ...]:
    """``dtypes``, plus :data:`EXTENSION_DTYPES` for a backend whose arrays hold them."""
    return dtypes + EXTENSION_DTYPES if extension else dtypes


@dataclass
class WindowCase:
    operand_shape: tuple[int, ...]
    indices: np.ndarray
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int
    slice_sizes: tuple[int, ...]
    operand_batching_dims: tuple[int, ...]
    start_indices_batching_dims: tuple[int, ...]

    def gather_attrs(self) -> dict:
        return {
            "offset_dims": self.offset_dims,
            "collapsed_slice_dims": self.collapsed_slice_dims,
            "start_index_map": self.start_index_map,
            "index_vector_dim": self.index_vector_dim,
            "slice_sizes": self.slice_sizes,
            "operand_batching_dims": self.operand_batching_dims,
            "start_indices_batching_dims": self.start_indices_batching_dims,
        }

    def scatter_attrs(self) -> dict:
        return {
            "update_window_dims": self.offset_dims,
            "inserted_window_dims": self.collapsed_slice_dims,
            "scatter_dims_to_operand_dims": self.start_index_map,
            "index_vector_dim": self.index_vector_dim,
            "input_batching_dims": self.operand_batching_dims,
            "scatter_indices_batching_dims": self.start_indices_batching_dims,
        }

    def window_layout_shape(self) -> tuple[int, ...]:
        """Shape of gather's result, which is also scatter's updates shape."""
        ivd = self.index_vector_dim
        batch = [n for d, n in enumerate(self.indices.shape) if d != ivd]
        dropped = set(self.collapsed_slice_dims) | set(self.operand_batching_dims)
        window = [s for d, s in enumerate(self.slice_sizes) if d not in dropped]
        rank = len(batch) + len(window)
        shape, batch_it, window_it = [], iter(batch), iter(window)
        for axis in range(rank):
            shape.append(next(window_it) if axis in self.offset_dims else next(batch_it))
        return tuple(shape)


def index_values(draw, dtype: np.dtype, size: int, limit: int, count: int) -> np.ndarray:
    """Start values around ``[0, limit]``: in range, just outside, far outside, extremes."""
    info = np.iinfo(dtype)
    low = max(int(info.min), -4)
    high = min(int(info.max), limit + 4)
    near = st.integers(low, high)
    extreme = st.sampled_from(sorted({int(info.min), int(info.max), 0, min(limit, int(info.max))}))
    values = draw(st.lists(st.one_of(near, near, near, extreme), min_size=count, max_size=count))
    return np.asarray(values, dtype=dtype)


@st.composite
def window_cases(draw, max_rank: int = 4, max_dim: int = 5) -> WindowCase:
    rank = draw(st.integers(0, max_rank))
    dims = list(range(rank))
    batching = (
        sorted(draw(st.lists(st.sampled_from(dims), unique=True, max_size=2))) if dims else []
    )
    rest = [d for d in dims if d not in batching]
    collapsed = sorted(draw(st.lists(st.sampled_from(rest), unique=True))) if rest else []
    shape = []
    for d in dims:
        smallest = 1 if d in batching or d in collapsed else 0
        shape.append(draw(st.integers(smallest, max_dim)))
    slice_sizes = tuple(
        1 if d in batching or d in collapsed else draw(st.integers(0, shape[d])) for d in dims
    )
    candidates = [d for d in dims if d not in batching]
    start_map = draw(st.permutations(candidates)) if candidates else []
    start_map = tuple(start_map[: draw(st.integers(0, len(candidates)))])

    n_batch = draw(st.integers(len(batching), len(batching) + 2))
    explicit = len(start_map) != 1 or draw(st.booleans())
    index_rank = n_batch + explicit
    ivd = draw(st.integers(0, n_batch)) if explicit else n_batch
    batch_axes = [a for a in range(index_rank) if not (explicit and a == ivd)]
    index_batching = draw(st.permutations(batch_axes))[: len(batching)]
    index_shape = []
    for axis in range(index_rank):
        if explicit and axis == ivd:
            index_shape.append(len(start_map))
        elif axis in index_batching:
            index_shape.append(shape[batching[index_batching.index(axis)]])
        else:
            index_shape.append(draw(st.integers(0, 3)))
    dtype = np.dtype(draw(st.sampled_from(INDEX_DTYPES)))
    limit = max(shape, default=1)
    count = int(np.prod(index_shape, dtype=np.int64))
    indices = index_values(draw, dtype, count, limit, count).reshape(index_shape)

    n_window = rank - len(batching) - len(collapsed)
    result_rank = n_batch + n_window
    offset_dims = tuple(sorted(draw(st.permutations(range(result_rank)))[:n_window]))
    return WindowCase(
        operand_shape=tuple(shape),
        indices=indices,
        offset_dims=offset_dims,
        collapsed_slice_dims=tuple(collapsed),
        start_index_map=start_map,
        index_vector_dim=ivd,
        slice_sizes=slice_sizes,
        operand_batching_dims=tuple(batching),
        start_indices_batching_dims=tuple(index_batching),
    )


def arrays_of(draw, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Small distinct-ish values of ``dtype`` (no NaN), so that mixing rows shows."""
    count = int(np.prod(shape, dtype=np.int64))
    values = draw(st.lists(st.integers(0, 100), min_size=count, max_size=count))
    return np.asarray(values).astype(dtype).reshape(shape)
