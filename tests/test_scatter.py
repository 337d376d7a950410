"""scatter and dynamic_update_slice against the StableHLO transcription, on every backend."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from backends import DRAWN, WITH_VALUES
from helpers import ROW_SCATTER, assert_same, from_numpy, to_numpy
from hypothesis import given
from hypothesis import strategies as st
from reference import gather as gather_reference
from reference import scatter as reference
from strategies import VALUE_DTYPES, arrays_of, value_dtypes, window_cases

import indexops
from indexops._testing import device_paths, generic_only

# Drawn values meet infinities and NaN on purpose (inf - inf, 0 * inf) and integers wrap:
# NumPy's ufuncs warn, as they do for the same arithmetic of their own. The calls below run
# within np.errstate, but Dask computes when a test reads the result, outside it.
pytestmark = pytest.mark.filterwarnings(
    "ignore:(invalid value|overflow) encountered:RuntimeWarning"
)

MODES = ("drop", "drop_window", "clip")
COMBINERS = (None, "add", "mul", "min", "max", "callable")


def old_times_two_plus_new(old, new):
    """Not associative nor commutative: any change of application order shows."""
    return old * 2 + new


def draw_scatter(data, dtype_choices=VALUE_DTYPES):
    case = data.draw(window_cases())
    dtype = data.draw(st.sampled_from(dtype_choices))
    operand = arrays_of(data.draw, case.operand_shape, dtype)
    updates = arrays_of(data.draw, case.window_layout_shape(), dtype)
    return case, operand, updates


def expected_of(case, operand, updates, combiner, mode):
    computation = old_times_two_plus_new if combiner == "callable" else combiner
    with np.errstate(over="ignore", invalid="ignore"):  # integers wrap, inf - inf is NaN
        return reference.scatter(
            operand,
            case.indices,
            updates,
            update_computation=computation,
            mode=mode,
            **case.scatter_attrs(),
        )


def run(xp, case, operand, updates, combiner, mode, **kwargs):
    computation = old_times_two_plus_new if combiner == "callable" else combiner
    with np.errstate(over="ignore", invalid="ignore"):  # as above (NumPy warns)
        return indexops.scatter(
            from_numpy(xp, operand),
            from_numpy(xp, case.indices),
            from_numpy(xp, updates),
            update_computation=computation,
            mode=mode,
            **case.scatter_attrs(),
            **kwargs,
        )


@DRAWN
@given(data=st.data())
@pytest.mark.parametrize("mode", MODES)
def test_scatter_matches_reference(xp, backend, mode, data):
    combiner = data.draw(st.sampled_from(COMBINERS))
    dtypes = ("int32", "int64", "uint8") if combiner in ("mul", "callable") else VALUE_DTYPES
    # extension dtypes round after each combine, as the sequential reference does
    case, operand, updates = draw_scatter(data, value_dtypes(backend.extension_dtypes, dtypes))
    expected = expected_of(case, operand, updates, combiner, mode)
    assert_same(run(xp, case, operand, updates, combiner, mode), expected)


@DRAWN
@WITH_VALUES
@given(data=st.data())
def test_native_fast_paths_equal_the_generic_path(xp, data):
    combiner = data.draw(st.sampled_from(COMBINERS))
    mode = data.draw(st.sampled_from(MODES))
    case, operand, updates = draw_scatter(data, ("int32", "int64"))
    native = to_numpy(run(xp, case, operand, updates, combiner, mode))
    with generic_only():
        generic = to_numpy(run(xp, case, operand, updates, combiner, mode))
    np.testing.assert_array_equal(native, generic)


@DRAWN
@given(data=st.data())
@pytest.mark.parametrize("copy", [True, False, None])
def test_scatter_copy_semantics(xp, backend, copy, data):
    case, operand, updates = draw_scatter(data, ("float64",))
    expected = expected_of(case, operand, updates, "add", "drop")
    target = from_numpy(xp, operand)
    writable = backend.writable
    if copy is False and not writable:
        with pytest.raises(indexops.IndexOpsValueError, match="copy"):
            run(xp, case, operand, updates, "add", "drop", copy=copy)
        return
    result = indexops.scatter(
        target,
        from_numpy(xp, case.indices),
        from_numpy(xp, updates),
        update_computation="add",
        **case.scatter_attrs(),
        copy=copy,
    )
    assert_same(result, expected)
    in_place = copy is False or (copy is None and writable)
    assert (result is target) == in_place
    assert_same(target, expected if in_place else operand)


@WITH_VALUES
def test_float_add_with_many_duplicates_only_reassociates(xp):
    rng = np.random.default_rng(0)
    operand = rng.standard_normal((5, 3)).astype(np.float32)
    updates = rng.standard_normal((200, 3)).astype(np.float32)
    rows = rng.integers(0, 5, size=(200, 1))
    attrs = ROW_SCATTER
    expected = reference.scatter(operand, rows, updates, update_computation="add", **attrs)
    result = indexops.scatter(
        from_numpy(xp, operand),
        from_numpy(xp, rows),
        from_numpy(xp, updates),
        update_computation="add",
        **attrs,
    )
    np.testing.assert_allclose(to_numpy(result), expected, rtol=1e-5, atol=1e-5)


def test_replace_last_write_wins_and_callable_sees_the_sequence(xp):
    operand = from_numpy(xp, np.zeros((3, 2), dtype=np.int64))
    rows = from_numpy(xp, np.array([[1], [1], [1], [0]]))
    updates = from_numpy(xp, np.array([[1, 1], [2, 2], [3, 3], [4, 4]]))
    attrs = ROW_SCATTER
    assert_same(indexops.scatter(operand, rows, updates, **attrs), [[4, 4], [3, 3], [0, 0]])
    digits = indexops.scatter(
        operand, rows, updates, update_computation=lambda a, b: a * 10 + b, **attrs
    )
    assert_same(digits, [[4, 4], [123, 123], [0, 0]])


WIDE_UNSIGNED = ("uint16", "uint32", "uint64")


def low_byte_then_new(old, new):
    """Bitwise only (all that torch has for uint16/32/64), and order shows: applying
    ``n1`` then ``n2`` keeps all of ``n2`` but only the low byte of ``n1``."""
    return (old & 0xFF) ^ new


def whole_range(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Values over the whole range of an unsigned ``dtype``; the first rows hold 0, 1, the
    sign-bit boundary ``2**(bits-1) - 1``, ``2**(bits-1)`` and the maximum."""
    info = np.iinfo(dtype)
    values = rng.integers(0, info.max, size=shape, dtype=dtype, endpoint=True)
    half = 2 ** (info.bits - 1)
    special = np.array([0, 1, half - 1, half, info.max], dtype=dtype)
    values[: len(special)] = special.reshape(-1, *([1] * (len(shape) - 1)))
    return values


@DRAWN
@given(
    dtype=st.sampled_from(WIDE_UNSIGNED),
    combiner=st.sampled_from(COMBINERS),
    mode=st.sampled_from((*MODES, "promise_in_bounds")),
    seed=st.integers(0, 2**16),
)
def test_wide_unsigned_every_combiner_matches_reference(xp, dtype, combiner, mode, seed):
    """torch has few kernels for uint16/32/64: each combiner over their whole range, sums
    and products wrapping, min and max across the sign bit, repeated rows in order."""
    rng = np.random.default_rng(seed)
    operand = whole_range(rng, (7, 3), dtype)
    low, high = (0, 7) if mode == "promise_in_bounds" else (-2, 9)
    rows = rng.integers(low, high, size=(40, 1))
    rows[:10, 0] = [2, 3, 4, 2, 3, 4, 1, 1, 0, 0]  # boundary values meet each other
    updates = whole_range(rng, (40, 3), dtype)
    computation = low_byte_then_new if combiner == "callable" else combiner
    with np.errstate(over="ignore"):  # the wrap-around is the point
        expected = reference.scatter(
            operand,
            rows,
            updates,
            update_computation=computation,
            mode="drop" if mode == "promise_in_bounds" else mode,
            **ROW_SCATTER,
        )
    result = indexops.scatter(
        from_numpy(xp, operand),
        from_numpy(xp, rows),
        from_numpy(xp, updates),
        update_computation=computation,
        mode=mode,
        **ROW_SCATTER,
    )
    assert_same(result, expected)


@pytest.mark.parametrize("dtype", WIDE_UNSIGNED)
def test_wide_unsigned_dynamic_slices_match_reference(xp, dtype):
    rng = np.random.default_rng(1)
    operand = whole_range(rng, (6, 4), dtype)
    update = whole_range(rng, (5, 2), dtype)
    starts = [from_numpy(xp, np.array(s)) for s in (2, -1)]  # 2 is clamped to 1
    assert_same(
        indexops.dynamic_slice(from_numpy(xp, operand), starts, (5, 2)),
        gather_reference.dynamic_slice(operand, [2, -1], (5, 2)),
    )
    assert_same(
        indexops.dynamic_update_slice(from_numpy(xp, operand), from_numpy(xp, update), starts),
        reference.dynamic_update_slice(operand, update, [2, -1]),
    )


@pytest.mark.parametrize("table_rows", [6, 5000], ids=["scratch", "sorted"])
@pytest.mark.parametrize("repeats", [False, True], ids=["distinct", "repeated"])
def test_replace_finds_duplicates_in_small_and_large_tables(xp, table_rows, repeats):
    # A few rows into a large table take the sorting route, many rows into a small table
    # the scratch-array route of last_occurrences; both must keep the last write.
    rng = np.random.default_rng(table_rows)
    count = 6 if repeats else min(table_rows, 6)
    targets = rng.integers(0, 3, size=count) if repeats else rng.permutation(table_rows)[:count]
    operand = np.zeros((table_rows, 2), dtype=np.int32)
    rows = targets.reshape(-1, 1)
    updates = np.arange(2 * count, dtype=np.int32).reshape(count, 2)
    expected = reference.scatter(operand, rows, updates, **ROW_SCATTER)
    result = indexops.scatter(
        from_numpy(xp, operand), from_numpy(xp, rows), from_numpy(xp, updates), **ROW_SCATTER
    )
    assert_same(result, expected)


def test_empty_index_vector_combines_every_update(xp):
    # openxla/xla #48716: indices of shape (3, 0) all hit the same window
    operand = from_numpy(xp, np.array([10], dtype=np.int32))
    indices = from_numpy(xp, np.zeros((3, 0), dtype=np.int32))
    updates = from_numpy(xp, np.array([[1], [2], [4]], dtype=np.int32))
    result = indexops.scatter(
        operand,
        indices,
        updates,
        update_window_dims=(1,),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=(),
        index_vector_dim=1,
        update_computation="add",
    )
    assert_same(result, [17])


@WITH_VALUES
def test_narrow_index_dtypes_bound_checks_do_not_overflow(xp):
    # openxla/xla #48718: uint8 200 and int8 100 into 300 elements are in bounds
    operand = from_numpy(xp, np.zeros(300, dtype=np.int32))
    for dtype, position in (("uint8", 200), ("int8", 100)):
        indices = from_numpy(xp, np.array([[position]], dtype=dtype))
        result = indexops.scatter(
            operand,
            indices,
            from_numpy(xp, np.array([7], np.int32)),
            update_window_dims=(),
            inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,),
            index_vector_dim=1,
        )
        assert to_numpy(result)[position] == 7


@WITH_VALUES
def test_recognised_namespace_combiners_equal_their_names(xp):
    import operator

    operand = from_numpy(xp, np.arange(6, dtype=np.int64).reshape(3, 2))
    rows = from_numpy(xp, np.array([[2], [2]]))
    updates = from_numpy(xp, np.array([[5, 1], [2, 9]]))
    attrs = ROW_SCATTER
    for name, fn in (
        ("add", operator.add),
        ("max", xp.maximum),
        ("mul", xp.multiply),
        ("min", min),
    ):
        assert_same(
            indexops.scatter(operand, rows, updates, update_computation=fn, **attrs),
            to_numpy(indexops.scatter(operand, rows, updates, update_computation=name, **attrs)),
        )


@DRAWN
@WITH_VALUES
@pytest.mark.filterwarnings("ignore:Increasing number of chunks")  # dask, on drawn shapes
@given(data=st.data())
def test_gather_then_scatter_rebuilds_the_operand(xp, data):
    case = data.draw(window_cases())
    operand = arrays_of(data.draw, case.operand_shape, "int64")
    starts = case.indices
    gathered = indexops.gather(
        from_numpy(xp, operand), from_numpy(xp, starts), **case.gather_attrs()
    )
    blank = np.zeros_like(operand)
    rebuilt = to_numpy(
        indexops.scatter(
            from_numpy(xp, blank),
            from_numpy(xp, starts),
            gathered,
            mode="clip",
            **case.scatter_attrs(),
        )
    )
    # every element that some clamped window covers comes back, the rest stays zero
    mask = (
        to_numpy(
            indexops.scatter(
                from_numpy(xp, blank),
                from_numpy(xp, starts),
                xp.ones_like(gathered),
                mode="clip",
                **case.scatter_attrs(),
            )
        )
        != 0
    )
    np.testing.assert_array_equal(rebuilt[mask], operand[mask])
    np.testing.assert_array_equal(rebuilt[~mask], 0)


@DRAWN
@given(data=st.data())
def test_dynamic_update_slice_matches_reference(xp, data):
    rank = data.draw(st.integers(0, 4))
    shape = tuple(data.draw(st.integers(0, 5)) for _ in range(rank))
    update_shape = tuple(data.draw(st.integers(0, n)) for n in shape)
    starts = [data.draw(st.integers(-8, 8)) for _ in range(rank)]
    operand = arrays_of(data.draw, shape, "float32")
    update = arrays_of(data.draw, update_shape, "float32") + 1000
    expected = reference.dynamic_update_slice(operand, update, starts)
    if data.draw(st.booleans(), label="0-d array starts"):  # (else Python ints)
        starts = [xp.asarray(s, dtype=xp.int8) for s in starts]
    result = indexops.dynamic_update_slice(from_numpy(xp, operand), from_numpy(xp, update), starts)
    assert_same(result, expected)


@WITH_VALUES
def test_dynamic_update_slice_spec_examples_and_copy(xp, backend):
    operand = from_numpy(xp, np.zeros((4, 4), dtype=np.int32))
    patch = from_numpy(xp, np.ones((2, 2), dtype=np.int32))
    expected = np.zeros((4, 4), np.int32)
    expected[0:2, 2:4] = 1
    assert_same(indexops.dynamic_update_slice(operand, patch, (-1, 3)), expected)
    assert_same(operand, np.zeros((4, 4), np.int32))
    update23 = from_numpy(xp, np.ones((2, 3), dtype=np.int32))
    expected = np.zeros((4, 4), np.int32)
    expected[2:4, 1:4] = 1
    assert_same(indexops.dynamic_update_slice(operand, update23, (4, 4)), expected)
    if not backend.writable:
        with pytest.raises(indexops.IndexOpsValueError, match="copy"):
            indexops.dynamic_update_slice(operand, patch, (0, 0), copy=False)
    else:
        same = indexops.dynamic_update_slice(operand, patch, (0, 0), copy=False)
        assert same is operand
        assert to_numpy(operand)[0, 0] == 1


# An input with a zero-size dim has no element to write: every update is dropped (or, with
# "clip", its window is clamped onto nothing) and the result is the input.
ZERO_SIZE_INPUTS = {
    "issue_example": ((5, 0), [[0]], (1, 1), {"update_window_dims": (0,)}, (1,)),
    "moved_dim_empty": ((5, 0), [[0], [3]], (3, 2), {"update_window_dims": (0,)}, (1,)),
    "other_dim_moved": ((5, 0), [[2]], (1, 1), {"update_window_dims": (0,)}, (0,)),
    "empty_dim_first": ((0, 4), [[0, 1]], (1, 2), {"update_window_dims": (1,)}, (0, 1)),
    "middle": ((2, 0, 3), [[0], [0]], (2, 2, 3), {"update_window_dims": (1, 2)}, (1,)),
    "elements": ((0,), [[0], [1]], (2,), {"update_window_dims": ()}, (0,)),  # torch's element path
}


@DRAWN
@given(
    name=st.sampled_from(list(ZERO_SIZE_INPUTS)),
    combiner=st.sampled_from(COMBINERS),
    mode=st.sampled_from((*MODES, "promise_in_bounds")),
)
def test_scatter_into_a_zero_size_input_drops_every_update(xp, backend, name, combiner, mode):
    shape, rows, updates_shape, window, scatter_map = ZERO_SIZE_INPUTS[name]
    empty_dim = shape.index(0)
    attrs = {
        **window,
        "inserted_window_dims": (empty_dim,),
        "scatter_dims_to_operand_dims": scatter_map,
        "index_vector_dim": 1,
    }
    operand = np.zeros(shape, dtype=np.int32)
    updates = np.full(updates_shape, 3, dtype=np.int32)
    expected = reference.scatter(operand, np.array(rows), updates, **attrs)
    target = from_numpy(xp, operand)
    computation = old_times_two_plus_new if combiner == "callable" else combiner
    result = indexops.scatter(
        target,
        from_numpy(xp, np.array(rows)),
        from_numpy(xp, updates),
        update_computation=computation,
        mode=mode,
        copy=True,
        **attrs,
    )
    assert_same(result, expected)
    assert result is not target
    if backend.writable:
        same = indexops.scatter(
            target,
            from_numpy(xp, np.array(rows)),
            from_numpy(xp, updates),
            update_computation=computation,
            mode=mode,
            copy=False,
            **attrs,
        )
        assert same is target
        assert_same(same, expected)


@pytest.mark.parametrize("paths", ["host", "device"])
@pytest.mark.parametrize("table_rows", [4, 4096], ids=["small table", "large table"])
def test_duplicates_apply_in_order_on_host_and_device_paths(xp, paths, table_rows):
    """Literal results of repeated rows: replace keeps the last write, a callable sees
    the writes in order (on both sides of the scratch-array / sort choice)."""
    operand = from_numpy(xp, np.zeros((table_rows, 2), dtype=np.int64))
    rows = from_numpy(xp, np.array([[1], [3], [1], [1], [0], [3]]))
    updates = from_numpy(xp, np.array([[1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6]]))
    expected = np.zeros((table_rows, 2), dtype=np.int64)
    expected[[0, 1, 3]] = [[5, 5], [4, 4], [6, 6]]
    digits = np.zeros((table_rows, 2), dtype=np.int64)
    digits[[0, 1, 3]] = [[5, 5], [134, 134], [26, 26]]
    with device_paths() if paths == "device" else contextlib.nullcontext():
        replaced = indexops.scatter(operand, rows, updates, **ROW_SCATTER)
        combined = indexops.scatter(
            operand, rows, updates, update_computation=lambda a, b: a * 10 + b, **ROW_SCATTER
        )
    assert_same(replaced, expected)
    assert_same(combined, digits)


@WITH_VALUES
@pytest.mark.parametrize("paths", ["host", "device"])
def test_dropped_adds_leave_negative_zero(xp, paths):
    """A dropped update adds nothing, not +0.0: on the device paths it is masked to the
    add's identity, which must be -0.0 so that a -0.0 it meets stays -0.0."""
    operand = from_numpy(xp, np.full((3, 1), -0.0, dtype=np.float32))
    rows = from_numpy(xp, np.array([[0], [5], [-4]]))
    updates = from_numpy(xp, np.array([[1.5], [2.0], [3.0]], dtype=np.float32))
    with device_paths() if paths == "device" else contextlib.nullcontext():
        result = indexops.scatter(operand, rows, updates, update_computation="add", **ROW_SCATTER)
    assert_same(result, np.array([[1.5], [-0.0], [-0.0]], dtype=np.float32))
    assert np.signbit(to_numpy(result)[1:]).all()


def _fails_on_its_second_call(how: str):
    """``old + new`` on its first call; on its second a result of the wrong shape, a list
    or the function's own error."""
    calls = []

    def f(old, new):
        calls.append(1)
        if len(calls) == 1:
            return old + new
        if how == "shape":
            return (old + new)[..., :1]
        if how == "list":
            return [1.0]
        raise ZeroDivisionError("the function's own error")

    return f


@pytest.mark.backends(lambda backend: backend.writable and backend.has_values)
@pytest.mark.parametrize("paths", ["host", "device"])
@pytest.mark.parametrize("entry", ["scatter", "at.apply"])
@pytest.mark.parametrize("how", ["shape", "list", "raises"])
def test_a_function_failing_on_a_later_pass_leaves_x_as_it_was(xp, paths, entry, how):
    """A function applied in place to repeated rows runs pass by pass, each pass writing;
    where a later pass fails (the library's check of the function's result, or the
    function's own error), the call raises with ``x`` as it was: the passes write a copy,
    which ``x`` takes only at the end."""
    x = from_numpy(xp, np.zeros((4, 2)))
    rows = np.array([1, 1, 2])
    updates = from_numpy(xp, np.ones((3, 2)))
    f = _fails_on_its_second_call(how)
    expected = (ZeroDivisionError,) if how == "raises" else (indexops.IndexOpsError,)
    paths_used = device_paths() if paths == "device" else contextlib.nullcontext()
    with paths_used, pytest.raises(expected):
        if entry == "scatter":
            index = from_numpy(xp, rows[:, None])
            indexops.scatter(x, index, updates, update_computation=f, copy=False, **ROW_SCATTER)
        else:
            indexops.at(x)[from_numpy(xp, rows)].apply(f, updates, copy=False)
    assert_same(x, np.zeros((4, 2)))
    f = _fails_on_its_second_call("none")  # (raises on a second call only)
    two = from_numpy(xp, np.ones((2, 2)))
    result = indexops.at(x)[from_numpy(xp, np.array([1, 2]))].apply(f, two, copy=False)
    assert result is x
    assert_same(x, np.array([[0, 0], [1, 1], [1, 1], [0, 0]], dtype=np.float64))
