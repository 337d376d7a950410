"""Conversions and assertions shared by the tests."""

from __future__ import annotations

import concurrent.futures
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import array_api_compat as compat
import hypothesis
import numpy as np

if TYPE_CHECKING:
    from backends import Backend

Array = Any

# The skip reason of tests that load the site's Sphinx extensions
DOCS_EXTRA = "needs Sphinx, which the docs extra installs: pip install -e '.[docs]'"


def load_script(path: Path) -> ModuleType:
    """The module of a script that is not in a package (the docs' scripts and extensions),
    loaded from ``path`` under the name ``docs_<stem>``."""
    spec = importlib.util.spec_from_file_location(f"docs_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The backend of the running test, set by the xp fixture (None in tests without it).
active: Backend | None = None

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
    """A NumPy copy of an array of any backend (tests of values are marked WITH_VALUES)."""
    if compat.is_cupy_array(x):
        return x.get()
    if compat.is_torch_array(x):
        assert x.device.type != "meta", "torch meta tensors have no values: mark WITH_VALUES"
        x = x.detach().cpu()
        if str(x.dtype) == "torch.bfloat16":
            import ml_dtypes
            import torch

            return x.view(dtype=torch.int16).numpy().view(ml_dtypes.bfloat16)
        return x.numpy()
    if type(x).__module__.startswith("array_api_strict"):
        return np.asarray(x._array)
    return np.asarray(x)


def from_numpy(xp: ModuleType, a: np.ndarray) -> Array:
    """An array of backend ``xp`` with the values and dtype of ``a`` (ml_dtypes included)."""
    dtype = getattr(xp, a.dtype.name, None) if a.dtype.name != "bool" else xp.bool
    if dtype is None:  # an ml_dtypes type, which NumPy holds itself
        return xp.asarray(a)
    if a.dtype.kind == "V":  # ml_dtypes: the library has its own type; convert through f32
        return xp.astype(xp.asarray(a.astype(np.float32)), dtype)
    return xp.asarray(a.tolist() if a.ndim == 0 else a, dtype=dtype)


def dtype_name(x: Array) -> str:
    """``float32``, ``int64``, ... for an array of any backend."""
    return str(x.dtype).rsplit(".", 1)[-1]


def check_array(actual: Array) -> None:
    """``actual`` is an array of the running test's library, on its device.

    Every op promises results in the namespace and on the device of its inputs.
    """
    backend = active
    if backend is None or (isinstance(actual, np.ndarray) and backend.library != "numpy"):
        return  # a test without a backend, or one that converted its result on purpose
    module = type(actual).__module__.split(".")[0]
    library = {"jaxlib": "jax"}.get(module, module)
    assert library == backend.library, f"a {type(actual).__module__} array, not {backend.library}"
    if backend.library == "torch":
        expected = {"torch_meta": "meta", "torch_cuda": "cuda"}.get(backend.value, "cpu")
        assert actual.device.type == expected, f"on {actual.device}, not {expected}"


def assert_same(actual: Array, expected: Any) -> None:
    """Namespace, device, shape and dtype (for an ndarray ``expected``), then the values
    exactly (NaNs equal). torch meta tensors are checked up to their values."""
    check_array(actual)
    want = np.asarray(expected)
    assert tuple(actual.shape) == want.shape, f"shape {tuple(actual.shape)} != {want.shape}"
    if isinstance(expected, np.ndarray):
        assert dtype_name(actual) == want.dtype.name, f"dtype {actual.dtype} != {want.dtype}"
    if active is not None and not active.has_values and not isinstance(actual, np.ndarray):
        return
    got = to_numpy(actual)
    if type(actual).__module__.startswith("jax"):
        reject_float8_overflow_of_older_xla_emitters(got, want)
    np.testing.assert_array_equal(comparable(got), comparable(want))


# The flag of XLA's older CPU emitters, which the tests compile with for speed (conftest.py)
LEGACY_XLA_EMITTERS = "--xla_cpu_use_fusion_emitters=false"


def reject_float8_overflow_of_older_xla_emitters(got: np.ndarray, want: np.ndarray) -> None:
    """Reject the drawn case (Hypothesis draws another) where ``got``, a float8_e4m3fn
    JAX result computed with XLA's older CPU emitters, is a number where the reference
    has NaN: those emitters round some results past the type's largest value (448 + 46,
    2 * 224 + 48) to -0.0 instead of NaN, and later steps compute on from that zero.
    XLA's default emitters, which users run, give NaN (tests/test_harness.py checks
    both)."""
    legacy = LEGACY_XLA_EMITTERS in os.environ.get("XLA_FLAGS", "").split()
    if not legacy or got.dtype.name != "float8_e4m3fn" or want.dtype != got.dtype:
        return
    if np.any(np.isnan(want.astype(np.float32)) & ~np.isnan(got.astype(np.float32))):
        hypothesis.reject()


def comparable(a: np.ndarray) -> np.ndarray:
    """``a``, or for an extension dtype (ml_dtypes) its exact float64 values, which
    NumPy's assertions compare with NaNs equal."""
    try:
        np.isdtype(a.dtype, "numeric")
    except TypeError:  # a dtype isdtype cannot name
        return a.astype(np.float64)
    return a


def map_in_threads(
    call: Callable[[Any], Any], items: Iterable[Any], threads: int, switch: float = 1e-6
) -> list[Any]:
    """``[call(item) for item in items]`` run by ``threads`` threads at once, with the
    interpreter switching threads every ``switch`` seconds (so that calls interleave)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(switch)
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as pool:
            return list(pool.map(call, items))
    finally:
        sys.setswitchinterval(interval)
