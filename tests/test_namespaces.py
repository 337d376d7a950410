"""The namespace that serves each library's arrays: NumPy's own from NumPy 2.3 on (it
declares the standard's 2024.12 version), array-api-compat's wrapper of it before; the
same results either way."""

from __future__ import annotations

import array_api_compat.numpy
import numpy as np
from helpers import ROW_SCATTER

import indexops
from indexops import _backends
from indexops._plan import executors
from indexops._testing import generic_only


def _calls() -> dict[str, object]:
    """A call of every op and entry point on NumPy arrays, with duplicates, clipped and
    dropped rows, on the native paths and the standard's alone: name -> result."""
    rng = np.random.default_rng(7)
    x = rng.random((6, 4))
    rows, updates = rng.integers(-2, 8, (9, 1)), rng.random((9, 4))
    gather = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
                  index_vector_dim=1, slice_sizes=(1, 4))  # fmt: skip
    results: dict[str, object] = {}
    for paths in ("native", "generic"):
        with generic_only() if paths == "generic" else np.errstate():
            results[f"gather clip {paths}"] = indexops.gather(x, rows, **gather, mode="clip")
            results[f"gather fill {paths}"] = indexops.gather(
                x, rows, **gather, mode="fill", fill_value=-1.0
            )
            for how in (None, "add", "mul", "min", "max"):
                results[f"scatter {how} {paths}"] = indexops.scatter(
                    x, rows, updates, update_computation=how, **ROW_SCATTER
                )
            results[f"dynamic_slice {paths}"] = indexops.dynamic_slice(x, (4, 1), (3, 2))
            results[f"dynamic_update_slice {paths}"] = indexops.dynamic_update_slice(
                x, updates[:2, :2], (5, 3)
            )
            results[f"slice_scatter {paths}"] = indexops.slice_scatter(
                x, updates[:3, :2], start=(0, 1), stop=(6, 3), step=(2, 1), axes=(0, 1)
            )
            results[f"scatter_update {paths}"] = indexops.scatter_update(
                x, -2, np.array([[5, 0]]), updates[:2], copy=True
            )
            results[f"at add {paths}"] = indexops.at(x)[rows[:, 0] % 6].add(updates)
            results[f"at get {paths}"] = indexops.at(x)[1:5:2, [-1, 0]].get()
            results[f"onnx.gather_elements {paths}"] = indexops.onnx.gather_elements(
                x, rng.integers(-4, 4, (6, 3)), axis=1
            )
    return results


def test_numpy_arrays_are_served_by_numpy_itself():
    backend = _backends.backend_for("test", x=np.zeros(2))
    declared = getattr(np, "__array_api_version__", "")
    expected = np if declared >= _backends.NUMPY_OWN_STANDARD else array_api_compat.numpy
    assert backend.xp is expected


def test_numpys_before_2_3_take_array_api_compat_with_the_same_results(monkeypatch):
    own = _calls()
    monkeypatch.setattr(_backends, "NUMPY_OWN_STANDARD", "9999.12")  # no NumPy declares it
    monkeypatch.setattr(_backends, "_BY_TYPE", {})
    token = executors.KEEPING.set(False)  # (no executor made with the other namespace kept)
    try:
        assert _backends.backend_for("test", x=np.zeros(2)).xp is array_api_compat.numpy
        wrapped = _calls()
    finally:
        executors.KEEPING.reset(token)
    assert wrapped.keys() == own.keys()
    for name, result in own.items():
        np.testing.assert_array_equal(wrapped[name], result, err_msg=name)
