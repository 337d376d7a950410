"""Conversions and assertions shared by the tests."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

Array = Any

# Attributes that read or write whole rows of a 2-D operand, one index per row.
ROW_GATHER = {
    "offset_dims": (1,),
    "collapsed_slice_dims": (0,),
    "start_index_map": (0,),
    "index_vector_dim": 1,
}
ROW_SCATTER = {
    "update_window_dims": (1,),
    "inserted_window_dims": (0,),
    "scatter_dims_to_operand_dims": (0,),
    "index_vector_dim": 1,
}


def to_numpy(x: Array) -> np.ndarray:
    """A NumPy copy of an array of any backend."""
    if hasattr(x, "get") and type(x).__module__.startswith("cupy"):
        return x.get()
    if hasattr(x, "detach"):
        x = x.detach().cpu()
        if str(x.dtype) == "torch.bfloat16":
            import ml_dtypes

            return x.view(dtype=__import__("torch").int16).numpy().view(ml_dtypes.bfloat16)
    if type(x).__module__.startswith("array_api_strict"):
        return np.asarray(x._array)
    return np.asarray(x)


def from_numpy(xp: ModuleType, a: np.ndarray) -> Array:
    """An array of backend ``xp`` with the values and dtype of ``a``."""
    dtype = getattr(xp, a.dtype.name) if a.dtype.name != "bool" else xp.bool
    return xp.asarray(a.tolist() if a.ndim == 0 else a, dtype=dtype)


def assert_same(actual: Array, expected: Any) -> None:
    """Exact equality of values and shape (NaNs equal), and of dtype for an ndarray."""
    got = to_numpy(actual)
    want = np.asarray(expected)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    if isinstance(expected, np.ndarray):
        assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    np.testing.assert_array_equal(got, want)


def backend_name(xp: ModuleType) -> str:
    """The backend name of namespace ``xp``, as in ``INDEXOPS_BACKENDS``."""
    for name in ("array_api_strict", "jax", "torch", "cupy", "numpy"):
        if name in xp.__name__:
            return name
    raise AssertionError(f"unknown namespace {xp.__name__}")
