"""Semantics at the edges, on every backend: signed zeros and NaN in scatter's min and max."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from backends import WITH_VALUES
from helpers import (
    ROW_GATHER,
    ROW_SCATTER,
    assert_same,
    check_array,
    comparable,
    from_numpy,
    to_numpy,
)

import indexops

# NaN meets numbers here on purpose and propagates without a warning, as the ufuncs and
# torch's own functions give it (NumPy's ufunc.at alone warns: the library quiets it)
pytestmark = pytest.mark.filterwarnings("error:invalid value encountered:RuntimeWarning")

NAN = math.nan

# (value before, updates) per row of a [n, 1] table; the rows are written in this order,
# so duplicates within a case meet in the order given
MIN_MAX_CASES = (
    (0.0, ()),  # first and last rows: where out-of-bounds updates are clipped to
    (-0.0, ()),
    (-0.0, (0.0,)),
    (0.0, (-0.0,)),
    (0.0, (0.0,)),
    (-0.0, (-0.0,)),
    (1.0, (0.0, -0.0)),
    (1.0, (-0.0, 0.0)),
    (0.0, (-0.0, 0.0, -0.0)),
    (-0.0, (0.0, 0.0)),
    (-1.0, (0.0, -0.0)),
    (-1.0, (-0.0,)),
    (-1.0, (-0.0, -0.0)),
    (math.inf, (0.0, -0.0)),
    (-math.inf, (0.0,)),
    (NAN, (-0.0,)),
    (0.0, (NAN, -0.0)),
    (-0.0, (0.0, NAN)),
    (2.0, (3.0, 1.0, 5.0)),
    (0.0, ()),
    (-0.0, ()),
)
# dropped updates (mode="drop"), one of each sign of zero at each index: if they counted,
# the unwritten zeros of the first and last rows would change sign
DROPPED = tuple((i, z) for i in (-1, -5, len(MIN_MAX_CASES), 100) for z in (-0.0, 0.0))


def ieee(how: str, a: float, b: float) -> float:
    """IEEE-754 ``minimum``/``maximum``: StableHLO's min and max."""
    if math.isnan(a) or math.isnan(b):
        return NAN
    if a == b == 0.0:  # zeros of either sign: min's -0.0 and max's +0.0 win
        negative = math.copysign(1, a) < 0, math.copysign(1, b) < 0
        return -0.0 if (any(negative) if how == "min" else all(negative)) else 0.0
    return min(a, b) if how == "min" else max(a, b)


def min_max_problem() -> tuple[np.ndarray, np.ndarray, np.ndarray, list[float]]:
    """Table, rows and updates of :data:`MIN_MAX_CASES` with :data:`DROPPED` mixed in
    (float64 [n, 1], int64 [k, 1], float64 [k, 1])."""
    writes = [(row, v) for row, (_, updates) in enumerate(MIN_MAX_CASES) for v in updates]
    for position, dropped in enumerate(DROPPED):
        writes.insert(3 * position, dropped)
    table = np.array([[before] for before, _ in MIN_MAX_CASES])
    rows = np.array([[row] for row, _ in writes])
    updates = np.array([[v] for _, v in writes])
    return table, rows, updates, [before for before, _ in MIN_MAX_CASES]


def expected_min_max(how: str, table: np.ndarray, rows: np.ndarray, updates: np.ndarray):
    """The updates applied one by one with :func:`ieee`, out-of-bounds ones dropped."""
    result = table.astype(np.float64)
    for row, value in zip(rows[:, 0], updates.astype(np.float64)):
        if 0 <= row < result.shape[0]:
            result[row] = [ieee(how, a, b) for a, b in zip(result[row], value)]
    return result


def assert_same_bits(actual: Any, expected: np.ndarray) -> None:
    """Values equal (NaNs equal) and, where not NaN, signs equal: -0.0 is not +0.0."""
    check_array(actual)
    got = comparable(to_numpy(actual)).astype(np.float64)
    np.testing.assert_array_equal(got, expected)
    wrong = (np.signbit(got) != np.signbit(expected)) & ~np.isnan(expected)
    assert not wrong.any(), f"signs differ at {np.argwhere(wrong).tolist()}: {got[wrong]}"


def run_min_max(xp: Any, how: Any, dtype: str, table, rows, updates, **kwargs: Any) -> Any:
    return indexops.scatter(
        from_numpy(xp, table.astype(dtype)),
        from_numpy(xp, rows),
        from_numpy(xp, updates.astype(dtype)),
        update_computation=how,
        **ROW_SCATTER,
        **kwargs,
    )


@WITH_VALUES
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("how", ["min", "max"])
def test_min_max_are_ieee_on_signed_zeros_and_nan(xp, how, dtype):
    table, rows, updates, _ = min_max_problem()
    result = run_min_max(xp, how, dtype, table, rows, updates)
    assert_same_bits(result, expected_min_max(how, table, rows, updates))


@WITH_VALUES
@pytest.mark.parametrize("form", ["builtin", "xp"])
@pytest.mark.parametrize("how", ["min", "max"])
def test_callables_that_are_min_max_are_ieee_too(xp, how, form):
    table, rows, updates, _ = min_max_problem()
    fn = {"builtin": {"min": min, "max": max}, "xp": {"min": xp.minimum, "max": xp.maximum}}
    result = run_min_max(xp, fn[form][how], "float32", table, rows, updates)
    assert_same_bits(result, expected_min_max(how, table, rows, updates))


def check_narrow_float(xp, how, dtype):
    """The signed-integer views of 16 and 8 bits (ml_dtypes' types on NumPy and JAX)."""
    if dtype != "float16":
        dtype = getattr(pytest.importorskip("ml_dtypes"), dtype)
    table, rows, updates, _ = min_max_problem()
    result = run_min_max(xp, how, dtype, table, rows, updates)
    assert_same_bits(result, expected_min_max(how, table, rows, updates))


@pytest.mark.backends(
    lambda backend: backend.library in ("numpy", "torch", "jax") and backend.has_values
)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("how", ["min", "max"])
def test_min_max_are_ieee_in_half_floats(xp, how, dtype):
    check_narrow_float(xp, how, dtype)


@pytest.mark.backends(lambda backend: backend.extension_dtypes)
@pytest.mark.parametrize("how", ["min", "max"])
def test_min_max_are_ieee_in_float8(xp, how):
    check_narrow_float(xp, how, "float8_e5m2")


@WITH_VALUES
@pytest.mark.parametrize("how", ["min", "max"])
def test_min_max_many_duplicates_and_wide_rows(xp, how):
    """Zeros of both signs and NaN meeting many times over in rows wide enough for
    NumPy's chunked element path, some updates dropped."""
    rng = np.random.default_rng(3)
    choices = np.array([0.0, -0.0, 1.0, -1.0, NAN])
    table = rng.choice(choices, size=(9, 40), p=[0.3, 0.3, 0.15, 0.15, 0.1])
    updates = rng.choice(choices, size=(60, 40), p=[0.35, 0.35, 0.14, 0.14, 0.02])
    rows = rng.integers(-2, 11, size=(60, 1))
    result = run_min_max(xp, how, "float32", table, rows, updates)
    assert_same_bits(result, expected_min_max(how, table, rows, updates))


@WITH_VALUES
@pytest.mark.parametrize("how", ["min", "max"])
def test_at_min_max_are_ieee(xp, how):
    x = from_numpy(xp, np.array([0.0, -0.0, 1.0], dtype=np.float32))
    y = from_numpy(xp, np.array([-0.0, 0.0, 0.0, -0.0], dtype=np.float32))
    result = getattr(indexops.at(x)[from_numpy(xp, np.array([0, 1, 2, 2]))], how)(y)
    expected = [-0.0, -0.0, -0.0] if how == "min" else [0.0, 0.0, 1.0]
    assert_same_bits(result, np.array(expected))


@pytest.mark.backends("jax")
@pytest.mark.parametrize("how", ["min", "max"])
def test_ieee_oracle_agrees_with_jax(how):
    """The oracle above is what XLA's scatter min and max give (negative indices dropped,
    as in StableHLO, not counted from the end as in ``.at``)."""
    lax = pytest.importorskip("jax.lax")
    table, rows, updates, _ = min_max_problem()
    numbers = lax.ScatterDimensionNumbers(
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    scatter = {"min": lax.scatter_min, "max": lax.scatter_max}[how]
    got = scatter(
        table.astype(np.float32),
        rows.astype(np.int32),
        updates.astype(np.float32),
        numbers,
        mode=lax.GatherScatterMode.FILL_OR_DROP,
    )
    assert_same_bits(np.asarray(got), expected_min_max(how, table, rows, updates))


# Named combiners on NumPy dtypes without the standard's arithmetic; replace moves values
# only, so it takes any dtype
NON_NUMERIC = {
    "datetime64": np.array(["2020-01-01", "2021-06-30", "1999-12-31"], dtype="datetime64[D]"),
    "timedelta64": np.array([1, 2, 3], dtype="timedelta64[s]"),
    "void": np.array([b"ab", b"cd", b"ef"], dtype="V2"),
    "structured": np.array([(1, 2.0), (3, 4.0), (5, 6.0)], dtype=[("a", "i4"), ("b", "f8")]),
    "object": np.array([1, "x", None], dtype=object),
    "str": np.array(["a", "bb", "c"]),
    "bool": np.array([True, False, True]),
}


@pytest.mark.parametrize("how", ["add", "mul", "min", "max", np.minimum, max])
@pytest.mark.parametrize("dtype", NON_NUMERIC)
def test_named_combiners_on_non_numeric_dtypes_are_named_errors(dtype, how):
    table = NON_NUMERIC[dtype][:, None]
    with pytest.raises(indexops.IndexOpsTypeError) as caught:
        indexops.scatter(table, np.array([[1]]), table[:1], update_computation=how, **ROW_SCATTER)
    message = str(caught.value)
    assert message.startswith(f"scatter: update_computation={how!r} is not allowed")
    assert f"dtype {table.dtype}" in message
    assert "None or a callable" in message


@pytest.mark.parametrize("dtype", NON_NUMERIC)
def test_replace_and_callables_take_non_numeric_dtypes(dtype):
    """Duplicates (the last wins) and a dropped update (row 7) as for numbers."""
    table = NON_NUMERIC[dtype][:, None]
    rows, updates = np.array([[1], [7], [1], [0]]), table[[2, 1, 0, 2]]
    expected = table[[2, 0, 2]]
    result = indexops.scatter(table, rows, updates, **ROW_SCATTER)
    assert result.dtype == table.dtype
    assert result.tolist() == expected.tolist()
    last = indexops.scatter(table, rows, updates, update_computation=lambda a, b: b, **ROW_SCATTER)
    assert last.tolist() == expected.tolist()


@pytest.mark.parametrize("dtype", [name for name in NON_NUMERIC if name != "bool"])
def test_gather_fill_of_non_numeric_dtypes_needs_fill_value(dtype):
    """No default: NaN cast to them is no fill ('n' in a string array, NaN among objects)."""
    table = NON_NUMERIC[dtype][:, None]
    rows = np.array([[2], [7]])  # 7 is out of range: filled
    attributes = dict(**ROW_GATHER, slice_sizes=(1, 1), mode="fill")
    with pytest.raises(indexops.IndexOpsTypeError, match="fill_value=None is not allowed"):
        indexops.gather(table, rows, **attributes)
    with pytest.raises(indexops.IndexOpsTypeError, match="fill_value=None is not allowed"):
        indexops.at(table)[rows[:, 0]].get(mode="fill")
    fill = table[0]  # a 1-element array of the dtype; its value as the fill
    filled = indexops.gather(table, rows, **attributes, fill_value=fill[0])
    assert filled.dtype == table.dtype
    assert filled.tolist() == [table[2].tolist(), fill.tolist()]


NOT_FLAGS = (np.array([True]), np.array(True), "False", 1, 0, None, [True])


@pytest.mark.parametrize("flag", ["unique_indices", "indices_are_sorted"])
@pytest.mark.parametrize("value", NOT_FLAGS, ids=repr)
def test_scatter_and_gather_flags_must_be_bools(flag, value):
    table = np.zeros((3, 2))
    calls = {
        "scatter": lambda: indexops.scatter(
            table, np.array([[1]]), np.ones((1, 2)), **ROW_SCATTER, **{flag: value}
        ),
        "gather": lambda: indexops.gather(
            table, np.array([[1]]), slice_sizes=(1, 2), **ROW_GATHER, **{flag: value}
        ),
    }
    for op, call in calls.items():
        with pytest.raises(indexops.IndexOpsTypeError) as caught:
            call()
        assert str(caught.value) == (
            f"{op}: {flag}={value!r} is not allowed: True or False (a Python or NumPy bool; "
            "no arrays)"
        )


@pytest.mark.parametrize("value", NOT_FLAGS, ids=repr)
def test_at_unique_indices_must_be_a_bool(value):
    with pytest.raises(indexops.IndexOpsTypeError, match=r"^at\.add: unique_indices="):
        indexops.at(np.zeros(3))[[1]].add(1.0, unique_indices=value)


@pytest.mark.parametrize("value", [True, False, np.True_, np.False_])
def test_flags_take_python_and_numpy_bools(value):
    table = np.zeros((3, 2))
    result = indexops.scatter(
        table,
        np.array([[1]]),
        np.ones((1, 2)),
        unique_indices=value,
        indices_are_sorted=value,
        **ROW_SCATTER,
    )
    np.testing.assert_array_equal(result, [[0, 0], [1, 1], [0, 0]])
    got = indexops.gather(
        table, np.array([[2]]), slice_sizes=(1, 2), unique_indices=value, **ROW_GATHER
    )
    np.testing.assert_array_equal(got, [[0, 0]])


def test_dynamic_slices_of_a_0d_array_are_0d_arrays(xp):
    operand = from_numpy(xp, np.array(5.0))
    for starts in ((), [], from_numpy(xp, np.zeros(0, dtype=np.int64))):
        window = indexops.dynamic_slice(operand, starts, ())
        updated = indexops.dynamic_update_slice(operand, from_numpy(xp, np.array(7.0)), starts)
        for result, value in ((window, 5.0), (updated, 7.0)):
            assert type(result) is type(operand), f"a {type(result)}, not a 0-d array"
            assert_same(result, np.array(value))


# (table rows, width, updates) of the host's min and max paths: a few distinct rows, ufunc.at
# on rows and on elements chunk by chunk, and the runs of repeated rows (2**18 elements on)
HOST_MIN_MAX_SHAPES = ((8, 16, 8), (64, 16, 40), (200, 16, 5000), (64, 2048, 160))


def ieee_of_rows(how: str, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """IEEE-754's minimum or maximum of two arrays: NaN propagates, -0.0 < +0.0."""
    found = np.minimum(old, new) if how == "min" else np.maximum(old, new)
    negative = (
        np.signbit(old) | np.signbit(new) if how == "min" else np.signbit(old) & np.signbit(new)
    )
    return np.where((old == 0) & (new == 0), np.where(negative, -0.0, 0.0), found)


@pytest.mark.parametrize("library", ["numpy", "torch"])
@pytest.mark.parametrize("shape", HOST_MIN_MAX_SHAPES)
@pytest.mark.parametrize("form", ["rows", "elements"])
@pytest.mark.parametrize("how", ["min", "max"])
def test_host_min_max_meet_nan_without_a_warning(library, shape, form, how):
    """Min and max on the host's NumPy paths (the kernels off), where NaN meets numbers:
    no warning (NumPy's ufunc.at warns of each NaN it meets, the ufuncs and torch's own
    functions do not), so that with warnings made errors the write in place completes with
    IEEE-754's values in order; it stopped midway, before the signed zeros were fixed."""
    from indexops._testing import without_kernels

    n, width, count = shape
    rng = np.random.default_rng(5)
    choices = np.array([0.0, -0.0, 1.0, -1.0, NAN])
    table = rng.choice(choices, size=(n, width))
    rows = rng.integers(0, n, count)
    columns = rng.integers(0, width, count)
    values = rng.choice(choices, size=(count, width) if form == "rows" else count)
    expected = table.copy()
    for k in range(count):
        if form == "rows":
            expected[rows[k]] = ieee_of_rows(how, expected[rows[k]], values[k])
        else:
            expected[rows[k], columns[k]] = ieee_of_rows(
                how, expected[rows[k], columns[k]], values[k]
            )
    convert = np.asarray if library == "numpy" else pytest.importorskip("torch").from_numpy
    x = convert(table.astype(np.float32))
    index = (convert(rows),) if form == "rows" else (convert(rows), convert(columns))
    with without_kernels(), warnings.catch_warnings():
        warnings.simplefilter("error")
        result = getattr(indexops.at(x)[index], how)(convert(values.astype(np.float32)), copy=False)
    assert result is x
    assert_same_bits(x, expected)


@pytest.mark.parametrize("how", ["add", "multiply", "min", "max"])
@pytest.mark.parametrize("shape", [(64, 16, 40), (1000, 64, 20000), (4000, 64, 3000)])
def test_float_writes_in_several_steps_complete_under_warnings_as_errors(how, shape):
    """NumPy's combines of float rows in several steps (``ufunc.at`` chunk by chunk,
    runs of repeated rows; the kernels off) where products and sums overflow to inf and
    inf meets inf: IEEE-754's values, as ``ufunc.at`` gives them at once (a float sum as
    the same call gives it with warnings ignored: its order of additions is the
    library's), and no warning, which made an error stopped the write after its first
    chunk."""
    from indexops._testing import without_kernels

    n, width, count = shape
    rng = np.random.default_rng(6)
    table = rng.choice(np.array([1e30, -1e30, 2.0, NAN], np.float32), size=(n, width))
    rows = rng.integers(0, n, count)
    values = rng.choice(np.array([1e30, -1e30, 0.5], np.float32), size=(count, width))
    expected = table.copy()
    with without_kernels(), warnings.catch_warnings():
        if how == "add":
            warnings.simplefilter("ignore")
            getattr(indexops.at(expected)[rows], how)(values, copy=False)
        else:
            ufunc = getattr(np, {"min": "minimum", "max": "maximum"}.get(how, how))
            with np.errstate(all="ignore"):
                ufunc.at(expected, rows, values)
        x = table.copy()
        warnings.simplefilter("error")
        assert getattr(indexops.at(x)[rows], how)(values, copy=False) is x
    np.testing.assert_array_equal(x, expected)
