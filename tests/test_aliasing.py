"""In-place writes whose updates (or indices) view the array written: the result equals
the same call on copies, i.e. the values read before the call, on every backend."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from backends import DRAWN, WITH_VALUES
from helpers import ROW_SCATTER, assert_same, from_numpy, to_numpy
from hypothesis import assume, given
from hypothesis import strategies as st

import indexops

COMBINERS = (None, "add", "mul", "min", "max", lambda old, new: old - new)


def scatter_rows(x, rows, updates, how, copy):
    return indexops.scatter(
        x, rows[:, None], updates, **ROW_SCATTER, update_computation=how, copy=copy
    )


def _scatter_update(x, dim, slots, src, copy):
    return indexops.scatter_update(x, dim, slots, src, copy=copy)


def on_copies(xp, op, x, *args):
    """What ``op`` gives on copies of ``x`` and of the array arguments (no aliasing)."""
    fresh = [from_numpy(xp, to_numpy(a).copy()) if hasattr(a, "shape") else a for a in args]
    return op(from_numpy(xp, to_numpy(x).copy()), *fresh)


@DRAWN
@WITH_VALUES
@pytest.mark.backends(lambda backend: backend.writable)  # elsewhere copy=None copies
@given(
    rows=st.integers(2, 6),
    width=st.sampled_from([1, 3, 8]),
    targets=st.lists(st.integers(0, 5), min_size=1, max_size=4),
    source=st.integers(0, 4),
    how=st.sampled_from(COMBINERS),
    dtype=st.sampled_from(["float64", "int32", "uint16"]),
)
def test_scatter_updates_viewing_the_input(xp, rows, width, targets, source, how, dtype):
    assume(not (callable(how) and dtype == "uint16"))  # torch has no uint16 subtraction
    table = np.arange(rows * width, dtype=dtype).reshape(rows, width) % 7 + 1
    count = min(len(targets), rows - source % rows)
    start = min(source, rows - count)
    x = from_numpy(xp, table)
    targets_array = from_numpy(xp, np.array(targets[:count]) % rows)
    window = slice(start, start + count)
    expected = on_copies(xp, scatter_rows, x, targets_array, x[window, ...], how, True)
    got = scatter_rows(x, targets_array, x[window, ...], how, None)
    assert_same(got, to_numpy(expected))


@WITH_VALUES
@pytest.mark.parametrize("how", COMBINERS)
def test_chunked_native_scatter_reads_its_updates_first(xp, how):
    # rows of 65536 elements: NumPy's ufunc.at runs chunk by chunk over these
    table = (np.arange(3 * 65536, dtype=np.float64).reshape(3, 65536) % 5) + 1
    x = from_numpy(xp, table)
    rows = from_numpy(xp, np.array([1, 2]))
    expected = on_copies(xp, scatter_rows, x, rows, x[0:2, ...], how, True)
    got = scatter_rows(x, rows, x[0:2, ...], how, None)
    assert_same(got, to_numpy(expected))


@WITH_VALUES
def test_at_with_updates_viewing_x(xp):
    table = np.arange(3.0 * 4).reshape(3, 4) + 1
    for method in ("set", "add", "multiply", "min", "max"):
        x = from_numpy(xp, table.copy())
        expected = getattr(indexops.at(from_numpy(xp, table))[[1, 2]], method)(
            from_numpy(xp, table[0:2])
        )
        got = getattr(indexops.at(x)[[1, 2]], method)(x[0:2, ...], copy=None)
        assert_same(got, to_numpy(expected))


@WITH_VALUES
def test_at_index_array_with_updates_viewing_x_twice(xp):
    """An index array: from the second call on, the core executor at's lowering keeps."""
    table = np.arange(3.0 * 4).reshape(3, 4) + 1
    for method in ("set", "add", "multiply", "min", "max"):
        for _ in range(2):
            x = from_numpy(xp, table.copy())
            rows = from_numpy(xp, np.array([1, 2, 1]))
            expected = getattr(indexops.at(from_numpy(xp, table))[rows], method)(
                from_numpy(xp, table[0:3])
            )
            got = getattr(indexops.at(x)[rows], method)(x[0:3, ...], copy=None)
            assert_same(got, to_numpy(expected))


@pytest.mark.backends(lambda backend: backend.values_on_host and backend.writable)
def test_at_rows_in_range_with_updates_viewing_x_on_repeat_calls(xp):
    """int64 rows in range on the host: from the second call on, the row writer (told
    whether the rows are distinct) writes them, reading y, a view of x, first."""
    table = np.arange(3.0 * 4).reshape(3, 4) + 1
    steps = {"set": lambda old, new: new, "add": np.add, "min": np.minimum}
    for method, step in steps.items():
        for positions in ([1, 2, 1], [2, 0]):
            expected = table.copy()
            for row, value in zip(positions, table[0 : len(positions)]):
                expected[row] = step(expected[row], value)
            for copy in (None, None, False):
                x = from_numpy(xp, table.copy())
                rows = from_numpy(xp, np.array(positions))
                got = getattr(indexops.at(x)[rows], method)(x[0 : len(positions), ...], copy=copy)
                assert_same(got, expected)
                assert got is x


# (idx, what y views): x[idx] shifted by a row, reversed, and x[idx] itself
VIEWING_X = [
    ((slice(1, None), slice(None)), (slice(None, -1), slice(None))),
    ((slice(None, None, -1), 0), (slice(None), 0)),
    ((-1, slice(1, 3)), (-1, slice(1, 3))),
]


@WITH_VALUES
@pytest.mark.parametrize(("idx", "viewed"), VIEWING_X, ids=str)
def test_at_slices_with_updates_viewing_x(xp, idx, viewed):
    """Basic expressions (the library's own slicing where it has it) with y a view of x,
    in place where the library writes so and into a copy (add and multiply write into
    the view of the copy: y is x's, apart)."""
    table = np.arange(3.0 * 4).reshape(3, 4) + 1
    for method, copy in itertools.product(("set", "add", "multiply", "max", "apply"), (None, True)):
        x = from_numpy(xp, table.copy())
        values = table[viewed].copy()
        old = table[idx]
        expected = table.copy()
        expected[idx] = {
            "set": values,
            "add": old + values,
            "multiply": old * values,
            "max": np.maximum(old, values),
            "apply": old * 2 + values,
        }[method]
        y = x[viewed]
        args = (lambda old, new: old * 2 + new, y) if method == "apply" else (y,)
        got = getattr(indexops.at(x)[idx], method)(*args, copy=copy)
        assert_same(got, expected)
        if copy:
            assert_same(x, table)


def test_paged_cache_copying_blocks_within_itself(xp):
    # vLLM's copy_blocks: blocks 0 and 1 of a cache copied into blocks 1 and 2
    cache = np.arange(4 * 2 * 1 * 3, dtype=np.float32).reshape(4, 2, 1, 3)
    expected = cache.copy()
    expected[1:3] = cache[0:2]
    x = from_numpy(xp, cache.copy())
    slots = from_numpy(xp, np.array([[2, 3], [4, 5]]))
    got = indexops.scatter_update(x, -2, slots, x[0:2, ...], copy=None)
    assert_same(got, expected)


@WITH_VALUES
@pytest.mark.backends(lambda backend: backend.writable)  # elsewhere copy=None copies
def test_repeated_row_writes_read_their_updates_first_on_every_call(xp):
    """The row writer an executor keeps per signature looks for overlap on each call:
    a repeated scatter and scatter_update whose updates view the input, and one whose
    updates do not, give the values read before each call."""
    cache = np.arange(4 * 2 * 1 * 3, dtype=np.float32).reshape(4, 2, 1, 3)
    x = from_numpy(xp, cache.copy())
    slots, rows = from_numpy(xp, np.array([[2, 3], [4, 5]])), from_numpy(xp, np.array([3, 1]))
    for updates in (lambda: x[0:2, ...], lambda: from_numpy(xp, cache[2:4]), lambda: x[1:3, ...]):
        for how in (None, "max"):
            flat = xp.reshape(x, (4, 6))
            expected = on_copies(
                xp, scatter_rows, flat, rows, xp.reshape(updates(), (2, 6)), how, True
            )
            got = scatter_rows(flat, rows, xp.reshape(updates(), (2, 6)), how, None)
            assert_same(got, to_numpy(expected))
        expected = on_copies(xp, _scatter_update, x, -2, slots, updates(), True)
        got = _scatter_update(x, -2, slots, updates(), None)
        assert_same(got, to_numpy(expected))


def test_window_updates_viewing_the_operand(xp):
    base = np.arange(10.0)
    expected = base.copy()
    expected[1:5] = base[0:4]
    x = from_numpy(xp, base.copy())
    assert_same(indexops.dynamic_update_slice(x, x[0:4], (1,), copy=None), expected)
    x = from_numpy(xp, base.copy())  # a start array: on a device, the backend's window write
    start = from_numpy(xp, np.array([1]))
    assert_same(indexops.dynamic_update_slice(x, x[0:4], start, copy=None), expected)
    expected = base.copy()
    expected[1::2] = base[0:5]
    x = from_numpy(xp, base.copy())
    assert_same(indexops.slice_scatter(x, x[0:5], [1], [10], [2], copy=None), expected)


def test_indices_viewing_the_input(xp):
    # the rows come from the table itself and are overwritten by the write
    table = np.array([[1, 7], [0, 7], [2, 7]], dtype=np.int64)
    expected = table.copy()
    np.add.at(expected, table[:, 0], 5)
    x = from_numpy(xp, table.copy())
    got = scatter_rows(x, x[:, 0], from_numpy(xp, np.full((3, 2), 5, np.int64)), "add", None)
    assert_same(got, expected)


ELEMENT_SCATTER = {
    "update_window_dims": (),
    "inserted_window_dims": (1,),
    "scatter_dims_to_operand_dims": (1,),
    "index_vector_dim": 2,
    "input_batching_dims": (0,),
    "scatter_indices_batching_dims": (0,),
}


@WITH_VALUES
@pytest.mark.parametrize("how", [None, "add", "mul", "min", "max"])
def test_element_scatter_with_updates_and_indices_viewing_the_input(xp, how):
    # ScatterElements along axis 1: the updates are columns 0-1 of the input, the indices
    # (distinct per row, so replace may take the element path) columns 2-3
    table = np.array([[1, 2, 3, 0], [5, 4, 0, 1], [2, 6, 1, 2]], dtype=np.int64)

    def scatter(x, indices, updates):
        return indexops.scatter(
            x, indices[..., None], updates, **ELEMENT_SCATTER, update_computation=how,
            unique_indices=how is None, copy=None,
        )  # fmt: skip

    expected = on_copies(xp, scatter, from_numpy(xp, table), table[:, 2:], table[:, :2])
    x = from_numpy(xp, table.copy())
    assert_same(scatter(x, x[:, 2:], x[:, :2]), to_numpy(expected))


def test_copy_true_never_writes_the_input(xp):
    """Every writing op with ``copy=True``: a new array, the input as it was."""
    zeros = np.zeros((4, 2), dtype=np.int32)
    ones = from_numpy(xp, np.ones((1, 2), dtype=np.int32))
    row = from_numpy(xp, np.array([[2]]))
    calls = {
        "scatter": lambda x: indexops.scatter(x, row, ones, **ROW_SCATTER, copy=True),
        "dynamic_update_slice": lambda x: indexops.dynamic_update_slice(x, ones, (2, 0), copy=True),
        "slice_scatter": lambda x: indexops.slice_scatter(x, ones, [2], [3], [1], copy=True),
        "scatter_update": lambda x: indexops.scatter_update(x, -2, row, ones, copy=True),
        "at": lambda x: indexops.at(x)[2].set(1, copy=True),
    }
    expected = zeros.copy()
    expected[2] = 1
    for op, call in calls.items():
        x = from_numpy(xp, zeros)
        result = call(x)
        assert result is not x, op
        assert_same(result, expected)
        assert_same(x, zeros)
