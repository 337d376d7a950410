"""The host fast paths (NumPy, torch on the CPU) against the StableHLO transcription.

Each path is chosen by dtype, layout or size; these tests put data on both sides of each
choice and compare with the sequential reference: exactly, bit for bit where the path
promises it (integer add, float add in column pairs, gathers).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from helpers import ROW_SCATTER, assert_same, from_numpy
from reference import gather as gather_reference
from reference import scatter as reference

import indexops
from indexops._backends import _numpy
from indexops._gather import _plan as gather_plan

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


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
@pytest.mark.parametrize("width", [1, 3, 8])
def test_integer_add_with_duplicates_is_exact(xp, dtype, width):
    rng = np.random.default_rng(width)
    operand = values_of(rng, (9, width), dtype)
    rows = rng.integers(-2, 11, size=(300, 1))  # duplicates, and some outside: dropped
    updates = values_of(rng, (300, width), dtype)
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
    result = indexops.scatter(operand, rows, updates, update_computation="add", **ROW_SCATTER)
    assert_bits_equal(result, sequential_add(operand, rows, updates))


@pytest.mark.parametrize("dtype", ["float32", "float64", *INTEGER_DTYPES])
@pytest.mark.parametrize("width", [1, 2, 5, 6])
@pytest.mark.parametrize("layout", ["contiguous", "strided updates", "strided operand"])
def test_numpy_add_with_duplicates_equals_the_sequence_bit_for_bit(
    monkeypatch, dtype, width, layout
):
    """Floats added in column pairs (as complex numbers) and integers summed per row give
    exactly the sequential sums, signed zeros and NaNs included, across chunk and block
    boundaries (made small here) and for any memory layout."""
    monkeypatch.setattr(_numpy, "_AT_CHUNK_ELEMENTS", 16)
    monkeypatch.setattr(_numpy, "_SUM_BLOCK_ELEMENTS", 16)
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
    result = indexops.scatter(operand, rows, updates, update_computation="add", **ROW_SCATTER)
    assert_bits_equal(result, expected)
    if operand.dtype.kind == "f":
        assert np.signbit(result[0]).all()  # -0.0 + -0.0 + ... stays -0.0


ROW_GATHER = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}


@pytest.mark.parametrize("dtype", ["float32", "int16", "int64", "uint16", "uint32", "uint64"])
@pytest.mark.parametrize(
    "count, width", [(8, 16), (300, 128)], ids=["within the grain", "above the grain"]
)
@pytest.mark.parametrize("mode", ["clip", "promise_in_bounds"])
def test_row_gather_clips_in_the_take(xp, dtype, count, width, mode):
    """``mode="clip"`` row gathers clip inside the take, on both sides of torch's parallel
    grain (see test_torch_row_gather_on_each_path)."""
    rng = np.random.default_rng(count)
    operand = values_of(rng, (40, width), dtype)
    low, high = (-50, 90) if mode == "clip" else (0, 40)
    rows = rng.integers(low, high, size=(count, 1))
    rows[:4, 0] = [low, high - 1, 0, 39]
    attrs = {**ROW_GATHER, "index_vector_dim": 1, "slice_sizes": (1, width), "mode": mode}
    result = indexops.gather(from_numpy(xp, operand), from_numpy(xp, rows), **attrs)
    assert_same(result, gather_reference.gather(operand, rows, **attrs))


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
    torch = pytest.importorskip("torch")
    from indexops._backends import _torch

    monkeypatch.setattr(_torch, "NUMPY_ALLOCATED_MIN_BYTES", numpy_allocated_min_bytes)
    taken, allocated = [], []
    monkeypatch.setattr(_torch, "np", _Spy(np, "take", taken))
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


def _count_distinct_backends():
    """Every backend with a count_distinct_rows of its own, and the generic one."""
    from indexops._backends._base import Backend
    from indexops._backends._numpy import NumpyBackend

    found = [
        pytest.param(NumpyBackend(np), np.asarray, id="numpy"),
        pytest.param(Backend(np), np.asarray, id="generic numpy"),
    ]
    try:
        import array_api_compat.torch as torch_namespace
        import torch

        from indexops._backends._torch import TorchBackend
    except ImportError:
        return found
    torch_backend = TorchBackend()
    return [
        *found,
        pytest.param(torch_backend, torch.from_numpy, id="torch on the host"),
        pytest.param(torch_backend.without_host_reads(), torch.from_numpy, id="torch on device"),
        pytest.param(Backend(torch_namespace), torch.from_numpy, id="generic torch"),
    ]


@pytest.mark.parametrize("backend, make", _count_distinct_backends())
@pytest.mark.parametrize("case", ["distinct", "one pair", "many repeats", "one row"])
@pytest.mark.parametrize("threads", [1, 2])
def test_count_distinct_rows_counts_the_bitmap(backend, make, case, threads):
    """Every bitmap (torch on the host: NumPy's on one thread, its own on more)."""
    n = 1000
    rng = np.random.default_rng(7)
    rows = {
        "distinct": rng.permutation(n)[:300],
        "one pair": np.concatenate([rng.permutation(n)[:299], [0, 0]]),
        "many repeats": rng.integers(0, 20, size=300),
        "one row": np.array([n - 1]),
    }[case]
    with _torch_threads(threads):
        assert backend.count_distinct_rows(make(rows), n) == len(np.unique(rows))


@contextlib.contextmanager
def _torch_threads(threads):
    """torch (where installed) with ``threads`` threads inside the block."""
    try:
        import torch
    except ImportError:
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
