"""Arrays that do not go together (devices, libraries, NumPy subclasses, lists) are named
errors raised before any work, which say how to fix the call and print under their public
names; a functional result is never a view of its input."""

from __future__ import annotations

import pickle
import traceback

import numpy as np
import pytest
from backends import WITH_VALUES
from helpers import ROW_GATHER, ROW_SCATTER, assert_same, from_numpy, to_numpy

import indexops
from indexops import IndexOpsTypeError, IndexOpsValueError

ROW_GATHER_3 = ROW_GATHER | {"slice_sizes": (1, 3)}


def each_op_with_two_arrays(operand, other):
    """Every op called with ``operand`` and ``other`` (an integer array) in two roles."""
    rows = other[:, None]
    return {
        "gather": lambda: indexops.gather(operand, rows, **ROW_GATHER_3),
        "scatter": lambda: indexops.scatter(
            operand, rows, operand[: other.shape[0], ...], **ROW_SCATTER
        ),
        "dynamic_slice": lambda: indexops.dynamic_slice(operand, (other[0], 0), (1, 3)),
        "dynamic_update_slice": lambda: indexops.dynamic_update_slice(
            operand, operand[:1, ...], (other[0], 0)
        ),
    }


@pytest.mark.backends("torch")
def test_torch_arrays_on_two_devices_are_named():
    import torch

    operand = torch.arange(12.0).reshape(4, 3)
    on_meta = torch.tensor([1, 3], device="meta")
    for op, call in each_op_with_two_arrays(operand, on_meta).items():
        with pytest.raises(IndexOpsValueError, match="arrays on one device") as error:
            call()
        assert "cpu" in str(error.value) and "meta" in str(error.value), op
    cache = torch.zeros(4, 3)
    with pytest.raises(IndexOpsValueError, match="meta"):
        indexops.scatter_update(cache, -2, torch.zeros(1, 2, dtype=torch.int64), on_meta)
    with pytest.raises(IndexOpsValueError, match="meta"):
        indexops.slice_scatter(cache, torch.zeros(2, 3, device="meta"), [0], [2], [1])
    assert not cache.any()  # nothing was written


@pytest.mark.backends("array_api_strict")
def test_array_api_strict_devices_are_named():
    import array_api_strict as xps

    operand = xps.reshape(xps.arange(12.0), (4, 3))
    elsewhere = xps.asarray([1, 3], device=xps.Device("device1"))
    for call in each_op_with_two_arrays(operand, elsewhere).values():
        with pytest.raises(IndexOpsValueError, match="device1"):
            call()


def test_errors_print_and_pickle_under_their_public_names():
    with pytest.raises(IndexOpsValueError) as error:
        indexops.dynamic_slice(np.zeros(3), (0, 0), (1,))
    line = traceback.format_exception_only(error.type, error.value)[-1]
    assert line.startswith("indexops.IndexOpsValueError: dynamic_slice:"), line
    for cls in (indexops.IndexOpsError, IndexOpsValueError, IndexOpsTypeError):
        assert f"{cls.__module__}.{cls.__qualname__}" == f"indexops.{cls.__name__}"
    again = pickle.loads(pickle.dumps(error.value))  # e.g. from a Dask worker
    assert type(again) is IndexOpsValueError and str(again) == str(error.value)


def test_a_list_for_an_array_says_how_to_make_one():
    with pytest.raises(IndexOpsTypeError, match=r"e\.g\. numpy\.asarray\(index\)$"):
        indexops.scatter_update(np.zeros((8, 4)), -2, [[1, 2]], np.ones((2, 4)))
    with pytest.raises(IndexOpsTypeError, match=r"e\.g\. numpy\.asarray\(operand\)$"):
        indexops.dynamic_slice([1.0, 2.0], (0,), (1,))


@pytest.mark.backends("torch")
def test_torch_mixed_with_numpy_says_what_to_convert():
    import torch

    cache = torch.zeros(8, 4)
    with pytest.raises(
        IndexOpsTypeError,
        match=r"convert the others to the library of input, e\.g\. torch\.asarray\(index\)$",
    ):
        indexops.scatter_update(cache, -2, np.array([[1, 2]]), torch.ones(2, 4))
    with pytest.raises(IndexOpsTypeError, match=r"e\.g\. numpy\.asarray\(y\)$"):
        indexops.at(np.zeros(4))[[1]].set(torch.ones(1))
    with pytest.raises(IndexOpsTypeError, match=r"torch\.asarray\(start_indices\)$"):
        indexops.gather(cache, np.array([[1]]), **ROW_GATHER | {"slice_sizes": (1, 4)})
    assert not cache.any()


@pytest.mark.parametrize("role", ["x", "y"])
def test_masked_arrays_are_refused(role):
    masked = np.ma.masked_array(np.arange(4.0), mask=[0, 1, 0, 0])
    plain = np.arange(4.0)
    x, y = (masked, plain[:1]) if role == "x" else (plain, masked[:1])
    with pytest.raises(IndexOpsTypeError, match=f"{role}='a numpy.ma.MaskedArray'"):
        indexops.at(x)[[1]].add(y)
    if role == "x":
        with pytest.raises(IndexOpsTypeError, match="MaskedArray"):
            indexops.at(x)[[1]].get()
        with pytest.raises(IndexOpsTypeError, match="MaskedArray"):
            indexops.dynamic_slice(x, (0,), (2,))
    np.testing.assert_array_equal(masked.data, np.arange(4.0))  # untouched


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")  # np.matrix
def test_matrices_are_refused():
    with pytest.raises(IndexOpsTypeError, match="matrix"):
        indexops.dynamic_slice(np.matrix([[1, 2], [3, 4]]), (0, 0), (1, 2))


def test_memory_maps_are_plain_arrays(tmp_path):
    mapped = np.memmap(tmp_path / "x.bin", dtype=np.float64, mode="w+", shape=(4,))
    indexops.at(mapped)[[1, 1]].add(1.0, copy=False)
    np.testing.assert_array_equal(mapped, [0, 2, 0, 0])


@WITH_VALUES
def test_functional_results_are_never_views(xp):
    # zero updates leave nothing to write: the result must still be a new array
    base = np.arange(6.0).reshape(3, 2)
    x = from_numpy(xp, base.copy())
    results = [
        indexops.scatter(
            x, from_numpy(xp, np.zeros((0, 1), np.int64)), from_numpy(xp, np.zeros((0, 2))),
            **ROW_SCATTER,
        ),
        indexops.scatter_update(
            x, -2, from_numpy(xp, np.zeros((0, 2), np.int64)), from_numpy(xp, np.zeros((0, 2)))
            , copy=True,
        ),
    ]  # fmt: skip
    for result in results:
        assert_same(result, base)
        if hasattr(type(result), "__setitem__") and result is not x:
            try:
                result[0, 0] = 99.0
            except (TypeError, ValueError, RuntimeError):  # immutable or read-only arrays
                continue
        np.testing.assert_array_equal(to_numpy(x), base)


@pytest.mark.parametrize("mode", ["clip", "drop", "drop_window", "promise_in_bounds"])
def test_scatter_into_zero_rows(xp, mode):
    empty = from_numpy(xp, np.zeros((0, 2)))
    got = indexops.scatter(
        empty,
        from_numpy(xp, np.array([[0], [3]])),
        from_numpy(xp, np.ones((2, 2))),
        **ROW_SCATTER,
        mode=mode,
    )
    assert_same(got, np.zeros((0, 2)))
