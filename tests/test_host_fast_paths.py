"""The host fast paths (NumPy, torch on the CPU) against the StableHLO transcription.

Each path is chosen by dtype, layout or size; these tests put data on both sides of each
choice and compare with the sequential reference: exactly, bit for bit where the path
promises it (integer add, float add in column pairs, gathers).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import sys
from unittest import mock

import numpy as np
import pytest
from backends import DRAWN
from helpers import ROW_SCATTER, assert_same, from_numpy
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from reference import gather as gather_reference
from reference import scatter as reference

import indexops
from indexops._backends import _host, _numpy
from indexops._backends._host import INCREASE_MIN_ROWS, LIST_ENTRIES
from indexops._ops.gather import _plan as gather_plan
from indexops._testing import without_kernels


@pytest.fixture(autouse=True)
def _without_kernels():
    """The paths here are those taken without numba's compiled kernels, which take over
    from them where they run (tests/test_kernels.py tests the kernels)."""
    with without_kernels():
        yield


INTEGER_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
FLOAT_SPECIALS = (-0.0, 0.0, np.nan, np.inf, -np.inf, 3e38, -3e38, 1.5, -2.25, 1e-45)


def values_of(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Integers over the dtype's whole range (sums wrap); floats with signed zeros, NaN,
    infinities, huge values (sums overflow) and subnormals among ordinary ones."""
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    values = rng.standard_normal(shape).astype(dtype)
    special = rng.random(shape) < 0.3
    values[special] = rng.choice(np.array(FLOAT_SPECIALS, dtype=dtype), size=int(special.sum()))
    return values


def sequential_add(operand, rows, updates, mode="drop"):
    with np.errstate(over="ignore", invalid="ignore"):  # wrapping and inf - inf are the point
        return reference.scatter(
            operand, rows, updates, update_computation="add", mode=mode, **ROW_SCATTER
        )


def assert_bits_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal dtype and values, signed zeros told apart, NaNs where the reference has them
    (a NaN's sign and payload are not compared: IEEE 754 leaves them open)."""
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)
    if actual.dtype.kind == "f":
        numbers = ~np.isnan(expected)
        np.testing.assert_array_equal(np.signbit(actual[numbers]), np.signbit(expected[numbers]))


@DRAWN
@given(dtype=st.sampled_from(INTEGER_DTYPES), width=st.sampled_from([1, 3, 8]))
def test_integer_add_with_duplicates_is_exact(xp, dtype, width):
    rng = np.random.default_rng(width)
    operand = values_of(rng, (9, width), dtype)
    rows = rng.integers(-2, 11, size=(300, 1))  # duplicates, and some outside: dropped
    updates = values_of(rng, (300, width), dtype)
    with np.errstate(over="ignore"):  # the sums wrap around
        result = indexops.scatter(
            from_numpy(xp, operand),
            from_numpy(xp, rows),
            from_numpy(xp, updates),
            update_computation="add",
            **ROW_SCATTER,
        )
    assert_same(result, sequential_add(operand, rows, updates))


@pytest.mark.parametrize("dtype", ["int32", "uint16", "float32", "float64"])
def test_numpy_add_over_more_than_65536_rows_is_exact(dtype):
    """Row numbers above 16 bits: the integer path sorts them by two 16-bit digits."""
    rng = np.random.default_rng(3)
    operand = values_of(rng, (70_000, 2), dtype)
    rows = rng.choice([0, 131, 65_535, 65_536, 65_537, 69_999], size=(400, 1))
    updates = values_of(rng, (400, 2), dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # wrapping, overflow, inf - inf
        result = indexops.scatter(operand, rows, updates, update_computation="add", **ROW_SCATTER)
    assert_bits_equal(result, sequential_add(operand, rows, updates))


ROUTES = {  # (_AT_ROWS_MAX_ELEMENTS, _SUM_MIN_WIDTH) that send an add down each route
    "element indices": (0, 2**20),
    "ufunc.at on rows": (2**20, 2**20),
    "integers summed per row": (0, 1),
}


@given(
    dtype=st.sampled_from(["float32", "float64", *INTEGER_DTYPES]),
    width=st.sampled_from([1, 2, 5, 6]),
    layout=st.sampled_from(["contiguous", "strided updates", "strided operand"]),
    route=st.sampled_from(list(ROUTES)),
    tail=st.sampled_from([0, 2**30]),  # occurrence passes only, or reduced at once
)
def test_numpy_add_with_duplicates_equals_the_sequence_bit_for_bit(
    monkeypatch, dtype, width, layout, route, tail
):
    """Floats added in column pairs (as complex numbers) or by ufunc.at on the rows (small
    adds) and integers by either or summed per row (wide rows) give exactly the sequential
    sums, signed zeros and NaNs included, across chunk and block boundaries (made small
    here) and for any memory layout."""
    assume(route != "integers summed per row" or np.dtype(dtype).kind != "f")  # never
    at_rows_max, sum_min_width = ROUTES[route]
    monkeypatch.setattr(_numpy, "_AT_ROWS_MAX_ELEMENTS", at_rows_max)
    monkeypatch.setattr(_numpy, "_AT_CHUNK_ELEMENTS", 16)
    monkeypatch.setattr(_numpy, "_SUM_BLOCK_ELEMENTS", 16)
    monkeypatch.setattr(_numpy, "_SUM_MIN_WIDTH", sum_min_width)
    monkeypatch.setattr(_numpy, "_RUN_TAIL_ELEMENTS", tail)
    rng = np.random.default_rng(width)
    operand = values_of(rng, (6, width), dtype)
    operand[0] = -0.0 if operand.dtype.kind == "f" else 0  # row 0 gets only signed zeros
    rows = rng.integers(0, 6, size=(250, 1))
    updates = values_of(rng, (250, 2 * width), dtype)
    updates[rows[:, 0] == 0] = -0.0 if operand.dtype.kind == "f" else 0
    if layout == "strided updates":
        updates = updates[:, ::2]
    else:
        updates = np.ascontiguousarray(updates[:, :width])
    if layout == "strided operand":
        operand = np.asfortranarray(operand)
    expected = sequential_add(operand, rows, updates)
    with np.errstate(over="ignore", invalid="ignore"):  # wrapping, overflow, inf - inf
        result = indexops.scatter(operand, rows, updates, update_computation="add", **ROW_SCATTER)
    assert_bits_equal(result, expected)
    if operand.dtype.kind == "f":
        assert np.signbit(result[0]).all()  # -0.0 + -0.0 + ... stays -0.0


# Float add by a sparse-matrix product (scipy): sums reassociate, so they are compared with
# the sequence within rounding; non-finite results and signed zeros where it keeps them, exactly


@pytest.fixture
def sparse_calls(monkeypatch):
    """The tables that went through the sparse-product path in this test."""
    calls = []
    run = _numpy._add_by_sparse_product

    def spy(table, rows, values):
        calls.append(table.shape)
        return run(table, rows, values)

    monkeypatch.setattr(_numpy, "_add_by_sparse_product", spy)
    return calls


@pytest.fixture
def without_scipy(monkeypatch):
    """``import scipy`` fails, as where it is not installed (the import is cached)."""
    _numpy._scipy_sparse.cache_clear()
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    yield
    _numpy._scipy_sparse.cache_clear()


def finite_values_with_specials(rng, shape, dtype):
    """Normal values with -0.0, NaN and infinities among them, nothing that overflows when
    summed (so that every order of the sums gives the same non-finite results)."""
    values = rng.standard_normal(shape).astype(dtype)
    special = rng.random(shape) < 0.02
    values[special] = rng.choice(
        np.array([-0.0, np.nan, np.inf, -np.inf], dtype=dtype), size=int(special.sum())
    )
    return values


def assert_sums_close(actual, expected):
    """``actual`` is ``expected`` up to rounding: the same dtype, NaN and infinities in the
    same places, finite values within a few units in the last place of the sums."""
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(
        actual[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)]
    )
    tolerance = 1e-5 if expected.dtype == np.float32 else 1e-13
    np.testing.assert_allclose(actual[finite], expected[finite], rtol=tolerance, atol=tolerance)


def add_rows(operand, rows, updates, **kwargs):
    attributes = {**ROW_SCATTER, **kwargs}
    with np.errstate(invalid="ignore"):  # inf - inf
        return indexops.scatter(
            operand, rows[:, None], updates, update_computation="add", **attributes
        )


def add_at(operand, rows, updates):
    expected = operand.copy()
    with np.errstate(invalid="ignore"):  # inf - inf
        np.add.at(expected, rows, updates)
    return expected


@pytest.mark.skipif(_numpy._scipy_sparse() is None, reason="needs scipy")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("width", [3, 4, 64])
@pytest.mark.parametrize("mode", ["drop", "promise_in_bounds"])
def test_numpy_float_add_by_sparse_product_equals_the_sequence(
    monkeypatch, sparse_calls, dtype, width, mode
):
    monkeypatch.setattr(_numpy, "_SPARSE_MIN_ELEMENTS", 16)
    rng = np.random.default_rng(width)
    operand = finite_values_with_specials(rng, (20, width), dtype)
    operand[:2] = -0.0  # row 0 is written with -0.0 only, row 1 not at all
    rows = rng.integers(2, 20, size=300)
    rows[:7] = 0
    updates = finite_values_with_specials(rng, (300, width), dtype)
    updates[:7] = -0.0
    if mode == "drop":
        rows[7:9] = [-1, 20]  # dropped: these updates add -0.0 instead
    expected = sequential_add(operand, rows[:, None], updates, mode=mode)
    result = add_rows(operand, rows, updates, mode=mode)
    assert sparse_calls == [(20, width)]
    assert_sums_close(result, expected)
    assert np.signbit(result[:2]).all()
    assert np.isnan(result).any() and np.isinf(result).any()  # the specials reached the sums


@pytest.mark.skipif(_numpy._scipy_sparse() is None, reason="needs scipy")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "shape, count, takes_it",
    [
        ((128, 64), 2**15 // 64 - 1, False),  # one row short of the threshold
        ((128, 64), 2**15 // 64, True),
        ((2**15 // 4 + 1, 4), 2**15 // 4, False),  # more table rows than updates
        ((2**15 // 4, 4), 2**15 // 4, True),
        ((2**14, 2), 2**16, False),  # two columns: ufunc.at is as fast
        ((2**14,), 2**16, False),  # 1-D
    ],
)
def test_numpy_float_add_takes_the_sparse_product_only_where_it_pays(
    sparse_calls, dtype, shape, count, takes_it
):
    rng = np.random.default_rng(count)
    operand = rng.standard_normal(shape).astype(dtype)
    rows = rng.integers(0, shape[0], size=count)
    updates = rng.standard_normal((count, *shape[1:])).astype(dtype)
    result = add_rows(operand, rows, updates, update_window_dims=tuple(range(1, len(shape))))
    assert len(sparse_calls) == int(takes_it)
    if takes_it:
        assert_sums_close(result, add_at(operand, rows, updates))
    else:  # the paths of ufunc.at: bit for bit
        assert_bits_equal(result, add_at(operand, rows, updates))


@pytest.mark.skipif(_numpy._scipy_sparse() is None, reason="needs scipy")
def test_numpy_float_add_of_a_strided_table_or_rows_outside_skips_the_sparse_product(sparse_calls):
    rng = np.random.default_rng(5)
    operand = np.asfortranarray(rng.standard_normal((512, 64)).astype("float32"))
    rows = rng.integers(0, 512, size=1024)
    updates = rng.standard_normal((1024, 64)).astype("float32")
    assert_bits_equal(add_rows(operand, rows, updates), add_at(operand, rows, updates))
    rows[5] = 512  # scipy would write outside the table; ufunc.at raises, as before
    with pytest.raises(IndexError):
        add_rows(np.ascontiguousarray(operand), rows, updates, mode="promise_in_bounds")
    assert sparse_calls == []


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numpy_float_add_without_scipy_is_the_same_sum(without_scipy, sparse_calls, dtype):
    rng = np.random.default_rng(6)
    operand = finite_values_with_specials(rng, (512, 64), dtype)
    rows = rng.integers(0, 512, size=1024)
    updates = finite_values_with_specials(rng, (1024, 64), dtype)
    expected = add_at(operand, rows, updates)
    assert_bits_equal(add_rows(operand, rows, updates), expected)  # ufunc.at in pairs
    assert sparse_calls == []
    assert _numpy._scipy_sparse() is None


ROW_GATHER = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}


@DRAWN
@given(
    dtype=st.sampled_from(["float32", "int16", "int64", "uint16", "uint32", "uint64"]),
    size=st.sampled_from([(8, 16), (300, 128)]),  # within torch's parallel grain, above it
    mode=st.sampled_from(["clip", "promise_in_bounds"]),
)
def test_row_gather_clips_in_the_take(xp, dtype, size, mode):
    """``mode="clip"`` row gathers clip inside the take, on both sides of torch's parallel
    grain (see test_torch_row_gather_on_each_path)."""
    operand, rows, attrs, expected = row_gather_case(dtype, size, mode)
    result = indexops.gather(from_numpy(xp, operand), from_numpy(xp, rows), **attrs)
    assert_same(result, expected)


@functools.cache
def row_gather_case(dtype, size, mode):
    """The operand, rows, attributes and the reference's result (slow: computed once)."""
    count, width = size
    rng = np.random.default_rng(count)
    operand = values_of(rng, (40, width), dtype)
    low, high = (-50, 90) if mode == "clip" else (0, 40)
    rows = rng.integers(low, high, size=(count, 1))
    rows[:4, 0] = [low, high - 1, 0, 39]
    attrs = {**ROW_GATHER, "index_vector_dim": 1, "slice_sizes": (1, width), "mode": mode}
    return operand, rows, attrs, gather_reference.gather(operand, rows, **attrs)


@pytest.mark.parametrize(
    "operand_shape, slice_sizes, collapsed, offset_dims",
    [
        ((40,), (1,), (0,), ()),  # elements of a vector
        ((40, 3, 2), (1, 3, 2), (0,), (1, 2)),  # rows of whole [3, 2] blocks
        ((40, 3), (2, 3), (), (1, 2)),  # windows two rows tall: clamped to 38, not 39
        ((40, 3), (1, 2), (0,), (1,)),  # part of each row: not a take of whole rows
    ],
)
def test_gather_clip_of_other_windows_matches_reference(
    xp, operand_shape, slice_sizes, collapsed, offset_dims
):
    rng = np.random.default_rng(0)
    operand = values_of(rng, operand_shape, "float32")
    rows = rng.integers(-50, 90, size=(64, 1))
    attrs = {
        "offset_dims": offset_dims,
        "collapsed_slice_dims": collapsed,
        "start_index_map": (0,),
        "index_vector_dim": 1,
        "slice_sizes": slice_sizes,
    }
    result = indexops.gather(from_numpy(xp, operand), from_numpy(xp, rows), **attrs)
    assert_same(result, gather_reference.gather(operand, rows, **attrs))


def test_only_one_row_tall_windows_of_whole_rows_clip_in_the_take():
    def plan(operand_shape, index_shape, slice_sizes, collapsed, offset_dims, start_map=(0,)):
        vector_dim = len(index_shape) - 1
        return gather_plan(
            operand_shape, index_shape, offset_dims, collapsed, start_map, vector_dim,
            slice_sizes, (), (),
        )  # fmt: skip

    assert plan((40, 3), (5, 1), (1, 3), (0,), (1,)).rows_are_clamped_starts
    assert plan((40,), (5, 1), (1,), (0,), ()).rows_are_clamped_starts
    assert not plan((40, 3), (5, 1), (2, 3), (), (1, 2)).rows_are_clamped_starts
    assert not plan((40, 3), (5, 2), (1, 1), (0, 1), (), (0, 1)).rows_are_clamped_starts
    assert not plan((40, 3), (5, 1), (40, 1), (1,), (1,), (1,)).rows_are_clamped_starts


@pytest.mark.backends("torch")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "count, width, numpy_allocated_min_bytes",
    [(8, 16, 2**25), (300, 128, 2**25), (300, 128, 2**17)],
    ids=["within the grain", "above the grain", "above, NumPy-allocated result"],
)
@pytest.mark.parametrize("dtype", ["float32", "uint16", "bfloat16"])
@pytest.mark.parametrize("mode", ["clip", "promise_in_bounds"])
def test_torch_row_gather_on_each_path(
    monkeypatch, threads, count, width, numpy_allocated_min_bytes, dtype, mode
):
    """torch's row gather above the parallel grain: NumPy's take on one thread, else
    index_select into NumPy-allocated memory for big results; index_select within the
    grain, and for bfloat16 (which NumPy cannot view) on one thread."""
    import torch

    from indexops._backends import _torch

    monkeypatch.setattr(_torch, "NUMPY_ALLOCATED_MIN_BYTES", numpy_allocated_min_bytes)
    taken, allocated = [], []
    monkeypatch.setattr(_torch, "take_large_rows", _Recorder(_torch.take_large_rows, taken))
    monkeypatch.setattr(_torch, "_numpy_allocated", _Recorder(_torch._numpy_allocated, allocated))
    rng = np.random.default_rng(count)
    operand = values_of(rng, (400, width), "float32" if dtype == "bfloat16" else dtype)
    low, high = (-50, 450) if mode == "clip" else (0, 400)
    rows = rng.integers(low, high, size=(count, 1))
    rows[:4, 0] = [low, high - 1, 0, 399]
    attrs = {**ROW_GATHER, "index_vector_dim": 1, "slice_sizes": (1, width), "mode": mode}
    table = torch.from_numpy(operand)
    if dtype == "bfloat16":
        table = table.to(torch.bfloat16)
        operand = table.float().numpy()  # the values bfloat16 holds, exactly
    expected = gather_reference.gather(operand, rows, **attrs)
    with _torch_threads(threads):
        result = indexops.gather(table, torch.from_numpy(rows), **attrs)
    assert result.dtype == table.dtype
    assert_same(result.float() if dtype == "bfloat16" else result, expected)
    above_grain = count * width > _torch.PARALLEL_GRAIN_ELEMENTS
    assert bool(taken) == (above_grain and threads == 1 and dtype != "bfloat16")
    big = count * width * table.element_size() >= numpy_allocated_min_bytes
    assert bool(allocated) == (above_grain and threads > 1 and big)


# entry points that read or write a slice with a negative step: (name, call on a torch
# tensor x, the same on its NumPy copy); the read ones return new arrays
NEGATIVE_STEPS = {
    "at get": (
        lambda x: indexops.at(x)[::-2, 1:60:3].get(),
        lambda a: a[::-2, 1:60:3].copy(),
    ),
    "onnx slice": (
        lambda x: indexops.onnx.slice(x, [-1, 1], [-(2**62), 60], [0, 1], [-2, 3]),
        lambda a: a[::-2, 1:60:3].copy(),
    ),
    "at set": (
        lambda x: indexops.at(x)[::-2, 1:60:3].set(_half(x)),
        lambda a: _numpy_set(a, _half(a)),
    ),
    "onnx slice_scatter": (
        lambda x: indexops.onnx.slice_scatter(
            x, _half(x), [-1, 1], [-(2**62), 60], [0, 1], [-2, 3]
        ),
        lambda a: _numpy_set(a, _half(a)),
    ),
}


def _half(x):
    """Updates of the shape of ``x[::-2, 1:60:3]``: the first rows' first 20 columns."""
    return x[: (x.shape[0] + 1) // 2, :20]


def _numpy_set(a, values):
    out = a.copy()
    out[::-2, 1:60:3] = values
    return out


@pytest.mark.backends("torch")
@pytest.mark.parametrize("entry", list(NEGATIVE_STEPS))
@pytest.mark.parametrize("rows", [64, 4096], ids=["within the grain", "above the grain"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kind", ["float32", "bfloat16", "requires grad"])
def test_torch_flips_through_numpy_where_it_may(monkeypatch, entry, rows, threads, kind):
    """A slice with a negative step (torch has none) is read flipped: by NumPy's copy
    of the flipped view above the parallel grain on one thread, for tensors NumPy can
    view without autograd; else ``torch.flip``. The same result either way, through
    every entry point, with the gradient where autograd records."""
    import torch

    from indexops._backends import _torch

    flipped = []
    monkeypatch.setattr(_torch, "np", _Spy(np, "flip", flipped))
    call, reference = NEGATIVE_STEPS[entry]
    operand = values_of(np.random.default_rng(rows), (rows, 64), "float32")
    x = torch.from_numpy(operand)
    if kind == "bfloat16":
        x = x.to(torch.bfloat16)
        operand = x.float().numpy()
    if kind == "requires grad":
        x.requires_grad_(True)
    with _torch_threads(threads):
        result = call(x)
    assert result.dtype == x.dtype
    expected = reference(operand)
    assert_same(result.detach().float() if kind == "bfloat16" else result.detach(), expected)
    elements = ((rows + 1) // 2) * 20
    numpy_may = threads == 1 and kind == "float32" and elements > _torch.PARALLEL_GRAIN_ELEMENTS
    assert bool(flipped) == numpy_may
    if kind == "requires grad" and entry in ("at get", "onnx slice"):
        result.sum().backward()
        grad = np.zeros_like(operand)
        grad[::-2, 1:60:3] = 1
        np.testing.assert_array_equal(x.grad.numpy(), grad)


@pytest.mark.backends("torch")
def test_torch_flips_contiguous_tensors_itself(monkeypatch):
    """Above the grain on one thread, a contiguous tensor (updates given whole) is
    flipped by ``torch.flip``, faster there than NumPy's copy of a reversed view; a
    strided view of the same values by NumPy; both the same result."""
    import torch

    from indexops._backends import _torch
    from indexops._backends._torch import TorchBackend

    flipped = []
    monkeypatch.setattr(_torch, "np", _Spy(np, "flip", flipped))
    whole = torch.arange(4096.0 * 20).reshape(4096, 20)
    strided = torch.arange(4096.0 * 40).reshape(4096, 40)[:, ::2]
    backend = TorchBackend()
    with _torch_threads(1):
        got = backend.flipped(whole, (0,))
        assert not flipped
        got_strided = backend.flipped(strided, (0, 1))
        assert flipped
    assert torch.equal(got, torch.flip(whole, (0,)))
    assert torch.equal(got_strided, torch.flip(strided, (0, 1)))


@pytest.mark.backends("torch")
@pytest.mark.parametrize(
    "rows, clamped",
    [
        ([[3], [17], [5], [39], [0], [8], [39], [22]], False),  # few, in range: no clamp
        ([[3], [-2], [5], [60]], True),  # outside: clamped
        ([[r] for r in range(LIST_ENTRIES + 1)], False),  # in range, more than a list
    ],
    ids=["few in range", "few outside", "many"],
)
@pytest.mark.parametrize("on_device", [False, True], ids=["host", "device paths"])
def test_torch_row_gather_clamps_only_rows_not_shown_in_range(
    monkeypatch, rows, clamped, on_device
):
    """``mode="clip"`` on the host is one ``index_select`` of the rows, which checks them;
    from its first row outside the executor clamps them first (a repeated call alike). On
    the device paths nothing is read, so it clamps."""
    import torch

    from indexops._backends import _torch
    from indexops._testing import device_paths

    clamps = []
    monkeypatch.setattr(_torch, "torch", _Spy(torch, "clamp", clamps))
    operand = values_of(np.random.default_rng(0), (40, 16), "float32")
    starts = np.array(rows)
    attrs = {**ROW_GATHER, "index_vector_dim": 1, "slice_sizes": (1, 16)}
    expected = gather_reference.gather(operand, starts, **attrs)
    hook = device_paths() if on_device else contextlib.nullcontext()
    with hook:
        for _ in range(2):  # the first call, and the repeat of the kept executor
            result = indexops.gather(torch.from_numpy(operand), torch.from_numpy(starts), **attrs)
            assert_same(result, expected)
    assert len(clamps) == (2 if clamped or on_device else 0)


class _Spy:
    """A module whose function ``name`` records that it was called."""

    def __init__(self, module, name, calls):
        self._module, self._name, self._calls = module, name, calls

    def __getattr__(self, attribute):
        found = getattr(self._module, attribute)
        return _Recorder(found, self._calls) if attribute == self._name else found


class _Recorder:
    def __init__(self, function, calls):
        self._function, self._calls = function, calls

    def __call__(self, *args, **kwargs):
        self._calls.append(args)
        return self._function(*args, **kwargs)


COUNTERS = ["numpy", "generic numpy"] + [
    pytest.param(name, marks=pytest.mark.backends("torch"))
    for name in ("torch on the host", "torch on device", "generic torch")
]


def counter(name):
    """The backend (of indexops) named, with its function from a NumPy array to its own."""
    from indexops._backends._base import Backend
    from indexops._backends._numpy import NumpyBackend

    if name == "numpy":
        return NumpyBackend(np), np.asarray
    if name == "generic numpy":
        return Backend(np), np.asarray
    import array_api_compat.torch as torch_namespace
    import torch

    from indexops._backends._torch import TorchBackend

    return {
        "torch on the host": TorchBackend(),
        "torch on device": TorchBackend().variant("device"),
        "generic torch": Backend(torch_namespace),
    }[name], torch.from_numpy


@pytest.mark.parametrize("name", COUNTERS)
@pytest.mark.parametrize("size", [300, LIST_ENTRIES + 1, LIST_ENTRIES])
@pytest.mark.parametrize("case", ["distinct", "one pair", "many repeats", "one row"])
@pytest.mark.parametrize("threads", [1, 2])
def test_count_distinct_rows_counts_the_bitmap(name, size, case, threads):
    """Every bitmap (torch on the host: NumPy's on one thread, its own on more), and the
    set of a small array's list."""
    backend, make = counter(name)
    n = 1000
    rng = np.random.default_rng(7)
    rows = {
        "distinct": rng.permutation(n)[:size],
        "one pair": np.concatenate([rng.permutation(n)[: size - 2], [0, 0]]),
        "many repeats": rng.integers(0, 20, size=size),
        "one row": np.array([n - 1]),
    }[case]
    with _torch_threads(threads):
        assert backend.count_distinct_rows(make(rows), n) == len(np.unique(rows))


@pytest.mark.parametrize("name", COUNTERS)
@pytest.mark.parametrize(
    "case", ["increasing", "a repeat after the head", "a step down at the end", "head unsorted"]
)
@pytest.mark.parametrize("size", [INCREASE_MIN_ROWS - 1, INCREASE_MIN_ROWS, 3000])
def test_rows_increase_only_where_every_neighbour_does(name, case, size):
    """The check that lets replace skip its distinct count: True only for strictly
    increasing rows (a mask's positions), whatever part of them breaks the order; False
    without looking for fewer rows than its threshold."""
    backend, make = counter(name)
    rows = np.arange(0, 3 * size, 3)
    if case == "a repeat after the head":
        rows[-1] = rows[-2]
    elif case == "a step down at the end":
        rows[-1] = rows[-2] - 1
    elif case == "head unsorted":
        rows[[0, 1]] = rows[[1, 0]]
    looked_at = size >= INCREASE_MIN_ROWS or name.startswith("generic")  # host paths: above
    shown = name != "torch on device" and looked_at  # no host read on a device
    assert backend.rows_increase(make(rows)) == (case == "increasing" and shown)


def test_replace_of_rows_increasing_but_for_a_late_repeat_keeps_the_last_write(xp):
    """Rows in increasing order skip the distinct count; one repeated after the first 64
    (the look at the head passes) is still found, and its last write kept."""
    rows = np.arange(INCREASE_MIN_ROWS + 200)
    rows[150] = 149  # rows 149 and 150 of updates both write row 149
    operand = np.zeros((rows.shape[0], 2))
    updates = np.arange(2.0 * rows.shape[0]).reshape(-1, 2)
    expected = reference.scatter(operand, rows[:, None], updates, **ROW_SCATTER)
    result = indexops.scatter(
        from_numpy(xp, operand), from_numpy(xp, rows[:, None]), from_numpy(xp, updates),
        **ROW_SCATTER,
    )  # fmt: skip
    assert_same(result, expected)
    assert expected[149].tolist() == [300.0, 301.0]


@pytest.mark.parametrize("name", [COUNTERS[0], COUNTERS[2]])  # numpy, torch on the host
@pytest.mark.parametrize("size", [0, 1, LIST_ENTRIES, LIST_ENTRIES + 1, 100])
@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint32", "uint64"])
def test_all_in_range_on_both_sides_of_the_list_size(name, size, dtype):
    """The bounds check of host paths: Python's min and max of a small array's list, one
    reduction above it; a bound and one past it at either end, and unsigned values whose
    top bit is set (negative as signed)."""
    backend, make = counter(name)
    info = np.iinfo(dtype)
    high = min(20, int(info.max))
    inside = np.arange(size, dtype=dtype) % (high + 1)
    assert backend.all_in_range(make(inside), high)
    assert backend.all_in_range(make(inside), 0) == (size == 0 or int(inside.max()) == 0)
    assert backend.all_in_range(make(inside), -1) == (size == 0)
    if size == 0:
        return
    for bad in {high + 1, int(info.max), int(info.min) if info.min < 0 else 2 ** (info.bits - 1)}:
        if bad == high:
            continue
        outside = inside.copy()
        outside[size // 2] = bad
        assert not backend.all_in_range(make(outside), high), (bad, outside)


@contextlib.contextmanager
def _torch_threads(threads):
    """torch (where imported already) with ``threads`` threads inside the block."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("duplicate_at", [None, 0, 511], ids=["distinct", "first", "last"])
def test_replace_with_one_repeated_row_keeps_the_last_write(xp, duplicate_at):
    """Replace by rows on the bitmap route (as many rows written as a 64th of the table or
    more): one row written twice is found, distinct rows skip the search for last writes."""
    rng = np.random.default_rng(1)
    targets = rng.permutation(2048)[:512]
    if duplicate_at is not None:
        targets[duplicate_at] = targets[200]
    operand = values_of(rng, (2048, 3), "float32")
    rows = targets.reshape(-1, 1)
    updates = values_of(rng, (512, 3), "float32")
    expected = reference.scatter(operand, rows, updates, **ROW_SCATTER)
    result = indexops.scatter(
        from_numpy(xp, operand), from_numpy(xp, rows), from_numpy(xp, updates), **ROW_SCATTER
    )
    assert_same(result, expected)


def test_numpy_integer_add_by_rows_costs_scratch_in_the_updates_not_the_table(monkeypatch):
    """A handful of adds into a big table sums per row without a count per table row (a
    bincount over 2**22 rows held 32 MiB)."""
    import tracemalloc

    monkeypatch.setattr(_numpy, "_SUM_MIN_WIDTH", 1)
    monkeypatch.setattr(_numpy, "_AT_ROWS_MAX_ELEMENTS", 0)
    calls = []
    monkeypatch.setattr(_numpy, "_combine_by_runs", _Recorder(_numpy._combine_by_runs, calls))
    table = np.zeros((2**22, 1), dtype=np.int8)
    rows = np.array([5, 2**22 - 1, 5, 0, 77, 5, 0, 3])
    values = np.arange(1, 9, dtype=np.int8)[:, None]
    tracemalloc.start()
    try:
        _numpy.NumpyBackend(np).combine_rows(table, rows, values, _numpy.Named.ADD)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(calls) == 1
    assert peak < 2**16
    expected = np.zeros(2**22, dtype=np.int8)
    np.add.at(expected, rows, values[:, 0])
    np.testing.assert_array_equal(table[:, 0], expected)


@pytest.mark.parametrize("bad", [2**63 - 1, 2**31 - 1, 64, -1, -(2**63)])
@pytest.mark.parametrize("how", ["ADD", "MAX"])
def test_numpy_combine_by_runs_checks_rows_before_it_runs(monkeypatch, how, bad):
    """A broken promise_in_bounds never reaches the combine by runs (whose counts once
    came from np.bincount, which wrote outside its memory): ufunc.at raises or wraps as
    before."""
    taken = []

    def refuse(*args):
        taken.append(args)
        raise AssertionError("rows outside the table reached the combine by runs")

    monkeypatch.setattr(_numpy, "_combine_by_runs", refuse)
    monkeypatch.setattr(_numpy, "_SUM_MIN_WIDTH", 1)
    monkeypatch.setattr(_numpy, "_AT_ROWS_MAX_ELEMENTS", 0)
    monkeypatch.setattr(_numpy, "_MIN_MAX_RUNS_MIN_ELEMENTS", 0)
    table = np.zeros((64, 4), dtype=np.int64)
    rows = np.array([0, bad, 3])
    values = np.ones((3, 4), dtype=np.int64)
    try:
        _numpy.NumpyBackend(np).combine_rows(table, rows, values, _numpy.Named[how])
    except IndexError:
        pass  # element indices outside the table (some wrap into it: a value unspecified)
    else:
        assert table[3].tolist() == [1] * 4
    assert taken == []


@pytest.mark.parametrize("tail", [0, 32 * 3, 2**30])  # passes, both, reduced at once
@pytest.mark.parametrize("how", ["min", "max"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint64"])
def test_numpy_min_max_by_runs_match_ufunc_at(monkeypatch, dtype, how, tail):
    """Min and max of wide rows combine each row's updates first: the values of the
    sequential reference, NaNs and infinities included, and the signed zeros of IEEE-754
    minimum and maximum (the fix after the combine), with rows repeating up to many times
    across row blocks, by occurrence passes, by reducing the rest of long runs at once,
    or both (passes until fewer than three rows of a block still combine)."""
    monkeypatch.setattr(_numpy, "_SUM_BLOCK_ELEMENTS", 32 * 5)  # five rows per block
    monkeypatch.setattr(_numpy, "_RUN_TAIL_ELEMENTS", tail)
    calls = []
    monkeypatch.setattr(_numpy, "_combine_by_runs", _Recorder(_numpy._combine_by_runs, calls))
    rng = np.random.default_rng(3)
    n, k, d = 40, 2**13, 32  # k * d = 2**18: the threshold
    table = values_of(rng, (n, d), dtype)
    values = values_of(rng, (k, d), dtype)
    rows = np.concatenate([rng.integers(0, n, k - 64), np.full(64, 7)])  # row 7 many times
    rng.shuffle(rows)
    if table.dtype.kind == "f":  # rows 0-3: zeros of both signs meet, nothing beats them
        below = 1.0 if how == "min" else -1.0
        table[:4] = -0.0 if how == "max" else 0.0
        to_zero = rows < 4
        choices = np.array([-0.0, 0.0, below], dtype=dtype)
        values[to_zero] = rng.choice(choices, size=(int(to_zero.sum()), d))
    got = indexops.scatter(table, rows[:, None], values, **ROW_SCATTER, update_computation=how)
    assert len(calls) == 1
    expected = ieee_at(how, table, rows, values)
    assert_same(got, expected)
    assert np.array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize(
    "how, dtype", [("add", "int64"), ("add", "uint8"), ("max", "float32"), ("min", "float64")]
)
def test_numpy_by_runs_of_skewed_rows_match_ufunc_at(monkeypatch, dtype, how):
    """Rows drawn from a Zipf law (one row thousands of times, most once): the long runs'
    remaining updates are reduced at once, with the values of ufunc.at (integer sums wrap,
    NaNs propagate) and IEEE-754's signed zeros, through the default thresholds."""
    rng = np.random.default_rng(7)
    n, k, d = 4096, 2**14, 32  # k * d = 2**19: by runs
    table = values_of(rng, (n, d), dtype)
    values = values_of(rng, (k, d), dtype)
    rows = np.minimum(rng.zipf(1.5, k) - 1, n - 1)
    assert np.bincount(rows).max() > 1000
    calls = []
    monkeypatch.setattr(_numpy, "_combine_by_runs", _Recorder(_numpy._combine_by_runs, calls))
    got = indexops.scatter(table, rows[:, None], values, **ROW_SCATTER, update_computation=how)
    assert len(calls) == 1
    if how == "add":
        expected = table.copy()
        np.add.at(expected, rows, values)
    else:
        expected = ieee_at(how, table, rows, values)
    assert_same(got, expected)
    if table.dtype.kind == "f":
        assert np.array_equal(np.signbit(got), np.signbit(expected))


def ieee_at(how, table, rows, values):
    """``ufunc.at`` (NaN propagates) with IEEE-754's signed zeros: a zero result is min's
    -0.0 where some zero that met there was -0.0, max's +0.0 where some was +0.0, and the
    other zero where none was."""
    result = table.copy()
    (np.minimum if how == "min" else np.maximum).at(result, rows, values)
    if result.dtype.kind != "f":
        return result
    wins_sign = how == "min"  # the sign bit of the winning zero

    def winning(x):
        return (x == 0) & (np.signbit(x) == wins_sign)

    won = winning(table)
    np.logical_or.at(won, rows, winning(values))
    zero = result == 0
    winner, loser = (-0.0, 0.0) if how == "min" else (0.0, -0.0)
    result[zero] = np.where(won[zero], winner, loser)
    return result


@pytest.mark.backends(lambda backend: backend.values_on_host)
@pytest.mark.parametrize("how", ["min", "max"])
@pytest.mark.parametrize("block", [1, 5 * 8, 2**18])  # a row, five rows, every row at once
@pytest.mark.parametrize("n", [6, 48])  # 64 updates: the zeros found in the result, in them
@pytest.mark.parametrize("copy", [True, None])  # None: in place where the array allows
def test_signed_zeros_of_min_max_found_block_by_block(xp, monkeypatch, how, block, n, copy):
    """The rows that hold a zero, of the updates or (into a copy, with at least two
    updates per table row) of the result, are found a block at a time: zeros in the first
    and last rows, at a block's edges and in blocks of their own all get IEEE-754's sign,
    from the updates and from the table's values before the call, and a call without
    zeros in the updates gives the native result."""
    monkeypatch.setattr(_host, "ZERO_SCAN_BLOCK", block)
    rng = np.random.default_rng(block)
    k, d = 64, 8
    loser, winner = (-0.0, 0.0) if how == "max" else (0.0, -0.0)
    table = rng.standard_normal((n, d)).astype(np.float32)
    table[:3], table[3] = loser, winner  # row 3 gets losing zeros only: stays the winner
    below = -1 if how == "max" else 1  # no update beats a zero: rows 0-3 stay zeros
    values = below * np.abs(rng.standard_normal((k, d))).astype(np.float32)
    for row in (0, 4, 5, 39, 40, 41, 63):  # blocks of five rows end at 4, 9, ..., 39
        values[row, row % d] = 0.0 if row % 2 else -0.0
    rows = rng.integers(4, n, k)
    rows[[0, 39, 40, 63]] = [0, 1, 1, 2]  # zeros of both signs meet in rows 0-2
    rows[[1, 2]] = 3
    values[[1, 2]] = loser
    for updates in (values, np.where(values == 0, 1.5, values)):
        got = indexops.scatter(
            from_numpy(xp, table),
            from_numpy(xp, rows[:, None]),
            from_numpy(xp, updates),
            **ROW_SCATTER,
            update_computation=how,
            copy=copy,
        )
        expected = ieee_at(how, table, rows, updates)
        assert_same(got, expected)
        assert np.array_equal(np.signbit(np.asarray(got)), np.signbit(expected))


@pytest.mark.backends(lambda backend: backend.values_on_host)
@pytest.mark.parametrize("how", ["min", "max"])
def test_zeros_found_in_the_result_with_updates_that_view_the_input(xp, how):
    """Into a copy, three updates per row, the zeros looked for in the result: updates
    that overlap the input (both views of one buffer) give the result of their values,
    and neither the input nor the updates change."""
    loser, winner = (-0.0, 0.0) if how == "max" else (0.0, -0.0)
    rng = np.random.default_rng(11)
    n, d = 4, 8
    buffer = (-1 if how == "max" else 1) * np.abs(rng.standard_normal((3 * n, d)))
    buffer[:n] = loser  # the input: zeros that lose, unless a winning zero meets them
    buffer[n + 1, 2], buffer[2 * n + 3, 5] = winner, loser
    before = buffer.copy()
    shared = from_numpy(xp, buffer)
    x, updates = shared[:n], shared  # the updates' first rows are the input itself
    rows = np.arange(3 * n) % n
    got = indexops.scatter(
        x, from_numpy(xp, rows[:, None]), updates, **ROW_SCATTER, update_computation=how
    )
    expected = ieee_at(how, before[:n], rows, before)
    assert_same(got, expected)
    assert np.array_equal(np.signbit(np.asarray(got)), np.signbit(expected))
    assert_bits_equal(np.asarray(shared), before)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float8_e4m3fnuz"])
@pytest.mark.parametrize("block", [2, 2**18])  # several blocks, one
def test_zero_rows_and_holds_zero_count_what_equals_zero(monkeypatch, dtype, block):
    """The zero scans of min's and max's signed-zero fix, which first count nonzero
    entries: -0.0 counts as zero, NaN and infinities do not (as ``== 0``), a zero in the
    last block or row alone is found, views of every other row or column are read as
    their elements, and an array without zeros gives None and False."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    monkeypatch.setattr(_host, "ZERO_SCAN_BLOCK", block)
    kind = np.dtype(getattr(ml_dtypes, dtype, dtype))
    values = np.full((6, 3), np.nan).astype(kind)
    values[1, 0], values[4, 1] = np.inf, -np.inf
    assert _host.zero_rows(values) is None and not _host.holds_zero(values)
    for rows, zero in [((5,), 0.0), ((2, 5), -0.0), ((0, 3, 5), 0.0)]:
        with_zeros = values.copy()
        with_zeros[list(rows), 2] = zero
        expected = np.flatnonzero(np.equal(with_zeros.astype(np.float32), 0).any(axis=1))
        assert _host.zero_rows(with_zeros).tolist() == expected.tolist() == list(rows)
        assert _host.holds_zero(with_zeros)
        even = [row // 2 for row in rows if row % 2 == 0]  # the rows of a strided view
        found = _host.zero_rows(with_zeros[::2])
        assert (found is None and not even) or found.tolist() == even
    strided = np.ones((4, 6)).astype(kind)[:, ::2]
    strided[3, 1] = -0.0
    assert _host.zero_rows(strided).tolist() == [3]


ALIAS_ROUTES = [  # (dtype, how, shape, sum_min_width): one route of _combine each
    ("float64", "add", (3, 65536), 2**20),  # column pairs as complex, chunked
    ("float64", "multiply", (3, 65536), 2**20),  # chunked element indices
    ("float32", "min", (3, 65537), 2**20),
    ("float32", "max", (3, 65537), 2**20),
    ("int32", "add", (3, 65536), 1),  # integer sums per row, one row per block
    ("float32", "max", (3, 65536), 1),  # min and max by runs too
    ("int16", "min", (3, 65536), 1),
    ("int32", "add", (3, 65536), 2**20),  # integers by ufunc.at
    ("float64", "multiply", (3, 8), 2**20),  # ufunc.at on the rows (small)
]


@pytest.mark.parametrize("dtype, how, shape, sum_min_width", ALIAS_ROUTES)
def test_numpy_combine_reads_values_that_view_the_table_before_writing(
    monkeypatch, dtype, how, shape, sum_min_width
):
    """Each route of the NumPy backend's combine, with values that view the rows it
    writes: the result is that of the updates as they were before the call, even where
    the rows are processed in chunks (later chunks would read rows an earlier one wrote)."""
    monkeypatch.setattr(_numpy, "_SUM_MIN_WIDTH", sum_min_width)
    monkeypatch.setattr(_numpy, "_MIN_MAX_RUNS_MIN_ELEMENTS", sum_min_width)
    monkeypatch.setattr(_numpy, "_SUM_BLOCK_ELEMENTS", shape[1])  # one row per block
    named = {"add": "ADD", "multiply": "MUL", "min": "MIN", "max": "MAX"}[how]
    ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum}[how]
    rng = np.random.default_rng(2)
    table = values_of(rng, shape, dtype)
    expected = table.copy()
    rows = np.array([1, 2])
    with np.errstate(all="ignore"):
        ufunc.at(expected, rows, expected[0:2].copy())
        _numpy.NumpyBackend(np).combine_rows(table, rows, table[0:2], _numpy.Named[named])
    assert_bits_equal(table, expected)


@pytest.mark.parametrize("tail", [0, 2**30])  # occurrence passes, the rest reduced at once
@pytest.mark.parametrize("dtype, how", [("int32", "add"), ("float32", "max"), ("int16", "min")])
def test_numpy_runs_of_repeated_rows_read_values_that_view_the_table(monkeypatch, dtype, how, tail):
    """Min, max and integer add by runs with rows written several times, from values that
    view the table's rows (one of them a row written twice): the result of the values as
    they were, by either way of combining a run."""
    monkeypatch.setattr(_numpy, "_SUM_MIN_WIDTH", 1)
    monkeypatch.setattr(_numpy, "_MIN_MAX_RUNS_MIN_ELEMENTS", 1)
    monkeypatch.setattr(_numpy, "_RUN_TAIL_ELEMENTS", tail)
    monkeypatch.setattr(_numpy, "_SUM_BLOCK_ELEMENTS", 64)  # a row per block: later blocks
    calls = []  # read values after earlier ones wrote
    monkeypatch.setattr(_numpy, "_combine_by_runs", _Recorder(_numpy._combine_by_runs, calls))
    named = {"add": "ADD", "min": "MIN", "max": "MAX"}[how]
    ufunc = {"add": np.add, "min": np.minimum, "max": np.maximum}[how]
    table = values_of(np.random.default_rng(5), (5, 64), dtype)
    rows = np.array([1, 2, 1, 1, 3])
    expected = table.copy()
    with np.errstate(all="ignore"):
        ufunc.at(expected, rows, expected.copy())
        _numpy.NumpyBackend(np).combine_rows(table, rows, table[0:5], _numpy.Named[named])
    assert len(calls) == 1
    assert_bits_equal(table, expected)


def test_numpy_combine_reads_rows_that_view_the_table_before_writing(monkeypatch):
    """Rows that are a column of the integer table written by ufunc.at in chunks: the
    second chunk's row is the one given, not the one the first chunk's add made of it."""
    monkeypatch.setattr(_numpy, "_SUM_MIN_WIDTH", 2**20)
    table = np.zeros((3, 65536), dtype=np.int64)
    table[1, 0], table[2, 0] = 2, 1
    rows = table[1:, 0]  # [2, 1]; adding 1 into row 2 would turn rows[1] into 2
    values = np.ones((2, 65536), dtype=np.int64)
    expected = table.copy()
    np.add.at(expected, rows.copy(), values)
    _numpy.NumpyBackend(np).combine_rows(table, rows, values, _numpy.Named.ADD)
    np.testing.assert_array_equal(table, expected)


@pytest.mark.parametrize("method", ["add", "multiply", "min", "max", "set"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_at_update_from_a_view_of_the_array_written_in_place(method, dtype):
    """``at(x)[[1, 2]].<method>(x[0:2], copy=False)``: the updates are x's rows as they
    were before the call (rows 0 and 1; row 1 is written by the first update)."""
    rng = np.random.default_rng(4)
    x = values_of(rng, (3, 65536), dtype)
    with np.errstate(all="ignore"):  # the same call on copies: no aliasing
        expected = getattr(indexops.at(x.copy())[[1, 2]], method)(x[0:2].copy())
        result = getattr(indexops.at(x)[[1, 2]], method)(x[0:2], copy=False)
    assert result is x
    assert_bits_equal(x, expected)


# -- combines of rows proven distinct: one gather, ufunc and assignment, not ufunc.at --------

DISTINCT_METHODS = ("add", "subtract", "multiply", "min", "max")


def _updated_twice(x, rows, y, method, copy):
    """A repeated ``at(x)[rows].<method>(y)``: the first call makes the row writer, the
    second takes the repeat path; with ``copy=False`` both write ``x``."""
    with np.errstate(all="ignore"):
        first = getattr(indexops.at(x)[rows], method)(y, copy=copy)
        return first, getattr(indexops.at(x)[rows], method)(y, copy=copy)


def _by_ufunc_at(x, rows, y, method, copy):
    """:func:`_updated_twice` with the combine of distinct rows turned off: ``ufunc.at``,
    the way every combine of rows went before."""
    with mock.patch.object(_numpy.NumpyBackend, "_combine_distinct", lambda *args: None):
        return _updated_twice(x, rows, y, method, copy)


def _special_pairs(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """A [6, 25] x and [4, 25] updates for the rows [4, 0, 5, 2]: every pair of
    :data:`FLOAT_SPECIALS` (zeros of both signs, NaN, infinities) meets once."""
    pairs = np.array(list(itertools.product(FLOAT_SPECIALS, repeat=2)), dtype=dtype)
    x = np.arange(150, dtype=dtype).reshape(6, 25)
    x[[4, 0, 5, 2]] = pairs[:, 0].reshape(4, 25)
    return x, pairs[:, 1].reshape(4, 25).copy()


@pytest.mark.parametrize("method", DISTINCT_METHODS)
@pytest.mark.parametrize("dtype", ["float64", "float32", ">f8", "int8"])
@pytest.mark.parametrize("copy", [True, False])
def test_repeated_at_updates_of_distinct_rows_match_ufunc_at(method, dtype, copy):
    """Repeated updates of rows the call proves distinct give ``ufunc.at``'s result bit
    for bit (signed zeros, NaN, infinities, integer wrap, the dtype and byte order),
    in place or into a copy."""
    rows = np.array([4, 0, 5, 2])
    if np.dtype(dtype).kind == "f":
        x, y = _special_pairs(dtype)
    else:
        rng = np.random.default_rng(7)
        x, y = values_of(rng, (6, 25), dtype), values_of(rng, (4, 25), dtype)
    expected = _by_ufunc_at(x.copy(), rows, y, method, copy)
    got = _updated_twice(x, rows, y, method, copy)
    for result, reference_result in zip(got, expected, strict=True):
        assert result.dtype == np.dtype(dtype)
        assert_bits_equal(result, reference_result)
    assert (got[1] is x) == (not copy)


@pytest.mark.parametrize("method", DISTINCT_METHODS)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_repeated_at_updates_of_distinct_rows_read_updates_that_view_x(method, dtype):
    """In place, with updates that are rows of ``x`` itself, two of them rows the call
    writes: each call's result is that of the updates as they were before it."""
    rng = np.random.default_rng(3)
    x = _special_pairs(dtype)[0] if dtype == "float64" else values_of(rng, (6, 25), dtype)
    rows = np.array([1, 2, 5])
    expected = x.copy()
    for _ in range(2):
        with np.errstate(all="ignore"):
            expected = getattr(indexops.at(expected)[rows], method)(expected[0:3].copy())
    got = _updated_twice(x, rows, x[0:3], method, False)[1]
    assert got is x
    assert_bits_equal(x, expected)


@pytest.mark.parametrize("method", DISTINCT_METHODS)
def test_repeated_at_updates_of_distinct_rows_skip_ufunc_at(monkeypatch, method):
    """The repeat path of distinct rows never reaches the accumulating scatter (updates
    without zeros: min and max have no signs to fix); repeated rows do."""

    def refused(*args):
        raise AssertionError("the accumulating combine was called")

    x, y = np.zeros((6, 4)), np.arange(1.0, 9.0).reshape(2, 4)
    _updated_twice(x, np.array([3, 1]), y, method, True)  # the writer, before the patch
    monkeypatch.setattr(_numpy.NumpyBackend, "_combine", refused)
    _updated_twice(x, np.array([3, 1]), y, method, True)
    with pytest.raises(AssertionError, match="accumulating combine"):
        _updated_twice(x, np.array([3, 3]), y, method, True)


@pytest.mark.parametrize("size", ["at the bound", "above it"])
def test_numpy_combine_of_distinct_rows_gives_way_to_the_other_routes_above_its_size(
    monkeypatch, size
):
    """Rows proven distinct (``unique=True``) are combined by one gather, ufunc and
    assignment up to ``_DISTINCT_MAX_ELEMENTS`` updated elements; above, by the routes
    for any rows (one read-modify-write pass per element: faster there), with the same
    sums."""
    monkeypatch.setattr(_numpy, "_DISTINCT_MAX_ELEMENTS", 64)
    width = 16 if size == "at the bound" else 17
    rng = np.random.default_rng(5)
    table, values = rng.standard_normal((9, width)), rng.standard_normal((4, width))
    rows = np.array([7, 0, 3, 5])
    expected = table.copy()
    np.add.at(expected, rows, values)
    taken = []
    monkeypatch.setattr(_numpy.NumpyBackend, "_set", lambda self, *a: taken.append(a) or a[0])
    backend = _numpy.NumpyBackend(np)
    backend.combine_rows(table, rows, values, _numpy.Named.ADD, unique=True)
    if size == "at the bound":
        assert len(taken) == 1
        np.testing.assert_array_equal(taken[0][2], expected[rows])
    else:
        assert not taken
        np.testing.assert_array_equal(table, expected)


@settings(max_examples=25)
@given(
    dtype=st.sampled_from(["float32", "float64", "int16", "uint8"]),
    method=st.sampled_from(DISTINCT_METHODS),
    picked=st.lists(st.integers(0, 8), min_size=1, max_size=9, unique=True),
    width=st.sampled_from([1, 3]),
    seed=st.integers(0, 2**16),
)
def test_drawn_repeated_at_updates_of_distinct_rows_match_ufunc_at(
    dtype, method, picked, width, seed
):
    rng = np.random.default_rng(seed)
    x, y = values_of(rng, (9, width), dtype), values_of(rng, (len(picked), width), dtype)
    rows = np.array(picked)
    expected = _by_ufunc_at(x.copy(), rows, y, method, True)
    for result, reference_result in zip(_updated_twice(x, rows, y, method, True), expected):
        assert_bits_equal(result, reference_result)


@pytest.mark.backends("torch")
@pytest.mark.parametrize("how", [None, "add", "mul", "min", "max"])
@pytest.mark.parametrize("count", [64, 3000])  # rows: torch's loop on one thread, in parallel
def test_torch_broken_promise_in_place_leaves_the_input_as_it_was(how, count):
    """torch's ``index_add_``, ``scatter_reduce_`` and ``index_copy_`` check each index
    as they reach it: a start outside under ``promise_in_bounds`` (a broken promise) is
    found before them, in place, and named in NumPy's :class:`IndexError` with the input
    as it was (as NumPy's writes leave it). Rows, windows of two rows (the general
    path's starts) and elements along a batching dim; the core form and ``at``'s."""
    import torch

    rng = np.random.default_rng(count)
    table = rng.standard_normal((1000, 16))
    rows = rng.integers(0, 1000, count)
    rows[count // 2] = 1003
    rows[count - 1] = -7  # later: the first outside is named
    values = rng.standard_normal((count, 16))
    promise = {"mode": "promise_in_bounds", "copy": False, "update_computation": how}
    windows = {
        "update_window_dims": (1, 2), "inserted_window_dims": (), "index_vector_dim": 1,
        "scatter_dims_to_operand_dims": (0,),
    }  # fmt: skip
    element_rows = rng.integers(0, 16, (1000, 3, 1))
    element_rows[500, 1] = 16
    element_values = rng.standard_normal((1000, 3))
    elements = {
        "update_window_dims": (), "inserted_window_dims": (1,), "index_vector_dim": 2,
        "scatter_dims_to_operand_dims": (1,), "input_batching_dims": (0,),
        "scatter_indices_batching_dims": (0,),
    }  # fmt: skip
    method = {None: "set", "add": "add", "mul": "multiply", "min": "min", "max": "max"}[how]
    r = torch.from_numpy(rows)
    calls = {
        "index 1003 is out of bounds for axis 0 with size 1000": [
            lambda x: indexops.scatter(
                x, r[:, None], torch.from_numpy(values), **ROW_SCATTER, **promise
            ),
            lambda x: getattr(indexops.at(x)[r], method)(
                torch.from_numpy(values), mode="promise_in_bounds", copy=False
            ),
        ],
        "index 1004 is out of bounds for axis 0 with size 1000": [
            lambda x: indexops.scatter(
                x,
                r[:, None],
                torch.from_numpy(np.stack([values] * 2, 1)),
                **windows,
                **promise,
            ),
        ],
        "index 16 is out of bounds for axis 1 with size 16": [
            lambda x: indexops.scatter(
                x,
                torch.from_numpy(element_rows),
                torch.from_numpy(element_values),
                **elements,
                **promise,
                unique_indices=how is None,
            ),
        ],
    }
    for message, writes in calls.items():
        for write in writes:
            x = torch.from_numpy(table.copy())
            with pytest.raises(IndexError, match=message):
                write(x)
            np.testing.assert_array_equal(x.numpy(), table)
