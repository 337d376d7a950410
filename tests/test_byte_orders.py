"""NumPy dtypes in either byte order, ml_dtypes' included, in every op, on the backends
whose arrays hold them (NumPy's and Dask's; see ``Backend.byte_orders``).

Big-endian arrays are what FITS files, network formats and many HDF5 files give NumPy.
Each call's values equal those of the same call on native-order copies (which the rest of
the suite checks against the references), and its result comes back in the input's dtype,
byte order included. Scatter sizes are drawn on both sides of every threshold at which the
host paths change (the constants are read from the modules that use them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from backends import Backend
from helpers import ROW_GATHER, ROW_SCATTER, check_array
from hypothesis import given, settings
from hypothesis import strategies as st

# the ops as they are: the xp fixture makes indexops' attributes call them the backend's
# way (lazily, for Dask), which the tests here apply to whole calls instead
from indexops import (
    at,
    dynamic_slice,
    dynamic_update_slice,
    gather,
    onnx,
    scatter,
    scatter_update,
    slice_scatter,
)
from indexops._backends import _host, _numpy, backend_for
from indexops._execute import rows as _rows
from indexops._ops import at as _at

pytestmark = [
    pytest.mark.backends(lambda backend: backend.byte_orders),
    # NaN meets numbers on purpose; integers wrap; products overflow; at divides by 0
    pytest.mark.filterwarnings(
        "ignore:(invalid value|overflow|divide by zero) encountered:RuntimeWarning"
    ),
    # Dask's own take, where the drawn rows of a small table cross many chunks, and where
    # it casts a complex array's meta to the integer type of the rows (values are right)
    pytest.mark.filterwarnings("ignore:Increasing number of chunks"),
    pytest.mark.filterwarnings("ignore:Casting complex values to real"),
]

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes comes with jax
    EXTENSION: tuple[str, ...] = ()
else:
    EXTENSION = tuple(
        name for name in ("bfloat16", "float8_e4m3fn", "int4") if hasattr(ml_dtypes, name)
    )

FLOATS = ("float16", "float32", "float64", *(n for n in EXTENSION if "float" in n))
DTYPES = (*FLOATS, "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
          "complex64", "complex128", *(n for n in EXTENSION if "int" in n))  # fmt: skip
INDEX_DTYPES = ("int64", "int32", "uint16")
ORDERS = ("swapped", "native")
COMBINERS = (None, "add", "mul", "min", "max", "callable")
MODES = ("drop", "drop_window", "clip", "promise_in_bounds")

_BY_RUNS = _numpy._MIN_MAX_RUNS_MIN_ELEMENTS // _numpy._SUM_MIN_WIDTH
_SPARSE = _numpy._SPARSE_MIN_ELEMENTS // 4
# (table rows, row width, update rows) on both sides of each host path's threshold
SHAPES = (
    (5, 3, _host.LIST_ENTRIES),  # index arrays read as a list, or by one reduction
    (5, 3, _host.LIST_ENTRIES + 1),
    (9, 16, _numpy._AT_ROWS_MAX_ELEMENTS // 16),  # ufunc.at on rows, or on elements
    (9, 16, _numpy._AT_ROWS_MAX_ELEMENTS // 16 + 1),
    (40, _numpy._SUM_MIN_WIDTH - 1, 9),  # integer add row by row from this width
    (40, _numpy._SUM_MIN_WIDTH, 9),
    (_rows.SCRATCH_ROWS_PER_UPDATE * 8, 2, 8),  # the last writers in scratch, or sorted
    (_rows.SCRATCH_ROWS_PER_UPDATE * 8 + 1, 2, 8),
    (8, 3, _rows.RESULT_SCAN_MIN_UPDATES * 8 - 1),  # zeros looked for in the updates,
    (8, 3, _rows.RESULT_SCAN_MIN_UPDATES * 8),  # or in the result
    (_SPARSE, 4, _SPARSE - 1),  # float add by SciPy's sparse product
    (_SPARSE, 4, _SPARSE),
    (64, _numpy._SUM_MIN_WIDTH, _BY_RUNS - 1),  # min and max by runs; 2**18 elements
    (64, _numpy._SUM_MIN_WIDTH, _BY_RUNS + 1),  # scanned for zeros in two blocks
)
INCREASING = _host.INCREASE_MIN_ROWS  # rows that increase, looked at from this many


def in_order(dtype: str, order: str) -> np.dtype:
    """``dtype`` in the native byte order, or swapped (1-byte types have none)."""
    native = np.dtype(dtype)
    return native if order == "native" else native.newbyteorder("S")


def values_of(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Small values that every dtype holds: halves with zeros of both signs and some NaN
    for floats, small integers (complex: with an imaginary part)."""
    native = dtype.newbyteorder("=")
    if native.kind in "iu" or "int" in native.name:
        low = 0 if native.kind == "u" or native.name.startswith("uint") else -3
        return rng.integers(low, 4, shape).astype(dtype)
    values = rng.integers(-6, 7, shape) / 2
    if native.kind == "c":
        return (values + 1j * rng.integers(-2, 3, shape)).astype(dtype)
    values[rng.random(shape) < 0.2] = -0.0
    values[rng.random(shape) < 0.02] = np.nan
    return values.astype(dtype)


def native(x: np.ndarray) -> np.ndarray:
    return x.astype(x.dtype.newbyteorder("="))


def to_host(x: Any) -> np.ndarray:
    return np.asarray(x.compute() if hasattr(x, "compute") else x)


def of_backend(backend: Backend, xp: Any, x: np.ndarray) -> Any:
    """``x`` as an array of the backend, dtype and byte order kept (``helpers.from_numpy``
    goes through the dtype's name)."""
    if backend.library == "dask":
        return xp.asarray(x)  # split into two chunks per axis
    x = x.copy()
    x.flags.writeable = backend.writable
    return x


def assert_same_result(result: Any, expected: np.ndarray, dtype: np.dtype, signs: bool) -> None:
    """``result`` in ``dtype`` exactly (byte order included) with the values of
    ``expected``: NaNs where it has them and, with ``signs``, the same signed zeros. A
    Dask result computes to ``dtype`` too (its graph's dtype alone could differ)."""
    check_array(result)
    assert result.dtype == dtype, f"dtype {result.dtype.str} != {dtype.str}"
    host = to_host(result)
    assert host.dtype == dtype, f"computed dtype {host.dtype.str} != {dtype.str}"
    got = native(host)
    assert got.dtype == expected.dtype
    if got.dtype.kind == "V":  # ml_dtypes: compared through float64, which holds them
        got, expected = got.astype(np.float64), expected.astype(np.float64)
    np.testing.assert_array_equal(got, expected)
    if signs and got.dtype.kind == "f":
        numbers = ~np.isnan(expected)
        np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(expected[numbers]))


def old_times_two_minus_new(old: Any, new: Any) -> Any:
    return old * 2 - new


def _scatter_case(data: st.DataObject, backend: Backend) -> dict[str, Any]:
    dtype = in_order(data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(ORDERS)))
    combiner = data.draw(st.sampled_from(COMBINERS))
    if dtype.kind == "c" and combiner in ("min", "max"):
        combiner = "add"  # the Array API orders real numbers only
    n, d, k = data.draw(st.sampled_from(SHAPES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    mode = data.draw(st.sampled_from(MODES))
    index_dtype = in_order(
        data.draw(st.sampled_from(INDEX_DTYPES)), data.draw(st.sampled_from(ORDERS))
    )
    if data.draw(st.booleans(), label="increasing rows") and n >= INCREASING:
        k, mode = INCREASING, "promise_in_bounds"
        rows = np.arange(k)
    else:
        low = 0 if mode == "promise_in_bounds" or index_dtype.kind == "u" else -1
        rows = rng.integers(low, n if mode == "promise_in_bounds" else n + 1, k)
    writable = backend.writable
    copies = (True, None, False) if writable else (True, None)
    return dict(
        operand=values_of(rng, (n, d), dtype),
        rows=rows.reshape(k, 1).astype(index_dtype),
        updates=values_of(rng, (k, d), dtype),
        combiner=combiner,
        mode=mode,
        copy=data.draw(st.sampled_from(copies)),
    )


def scatter_rows(operand: Any, rows: Any, updates: Any, combiner: Any, mode: str, copy: Any) -> Any:
    computation = old_times_two_minus_new if combiner == "callable" else combiner
    with np.errstate(over="ignore", invalid="ignore"):
        return scatter(
            operand, rows, updates, update_computation=computation, mode=mode, copy=copy,
            **ROW_SCATTER,
        )  # fmt: skip


@settings(max_examples=25)
@given(data=st.data())
def test_scatter_in_either_byte_order(xp, backend, data):
    case = _scatter_case(data, backend)
    operand, rows, updates = case["operand"], case["rows"], case["updates"]
    options = {key: case[key] for key in ("combiner", "mode")}
    expected = scatter_rows(native(operand), native(rows), native(updates), **options, copy=True)
    target = of_backend(backend, xp, operand)
    call = backend.wrap(scatter_rows) or scatter_rows
    result = call(
        target, of_backend(backend, xp, rows), of_backend(backend, xp, updates), **options,
        copy=case["copy"],
    )  # fmt: skip
    # float add may take SciPy's product in native order only: its sums keep a -0.0 that
    # the sequence turns into +0.0 (documented at _add_by_sparse_product)
    assert_same_result(result, expected, operand.dtype, signs=case["combiner"] != "add")
    in_place = backend.writable and case["copy"] is not True
    assert (result is target) == in_place
    if not in_place:  # the input is untouched
        np.testing.assert_array_equal(to_host(target).view(np.uint8), operand.view(np.uint8))


def test_min_of_big_endian_floats_keeps_the_signed_zero(xp, backend):
    # the integer view of the signed-zero fix read big-endian bits as native ones
    x = of_backend(backend, xp, np.array([0.0, 1.0], ">f8"))
    y = of_backend(backend, xp, np.array([-0.0, 0.0], ">f8"))
    result = (backend.wrap_at(at) or at)(x)[np.array([0, 0])].min(y, copy=True)
    assert_same_result(result, np.array([-0.0, 1.0]), np.dtype(">f8"), signs=True)


@pytest.mark.skipif("bfloat16" not in EXTENSION, reason="needs ml_dtypes' bfloat16")
@pytest.mark.parametrize("how", ["min", "max"])
@pytest.mark.parametrize(
    "rows",
    [[0, 1], [0, 0, 1], [0, 1] * 8 + [0]],
    ids=["distinct", "repeated", "many per row"],  # each way the zeros are looked for
)
def test_min_and_max_of_swapped_bfloat16_keep_the_signed_zero(xp, backend, how, rows):
    # ml_dtypes' nonzero test read swapped bytes as native: a -0.0 update looked nonzero
    bfloat16 = np.dtype(ml_dtypes.bfloat16)
    swapped = bfloat16.newbyteorder("S")
    table = np.array([[0.0, 1.0, -0.0], [-0.0, 2.0, 0.0]], np.float32)
    # (no +0.0 among the updates: its bytes read as zero in either order)
    updates = np.tile(np.array([[-0.0, 3.0, -0.0]], np.float32), (len(rows), 1))
    expected = table.copy()
    for row, update in zip(rows, updates):  # IEEE-754: max(+0, -0) = +0, min(+0, -0) = -0
        old = expected[row]
        signs = (
            np.signbit(old) | np.signbit(update)
            if how == "min"
            else np.signbit(old) & np.signbit(update)
        )
        combined = np.minimum(old, update) if how == "min" else np.maximum(old, update)
        expected[row] = np.where((old == 0) & (update == 0), np.where(signs, -0.0, 0.0), combined)
    result = scatter(
        of_backend(backend, xp, table.astype(bfloat16).astype(swapped)),
        of_backend(backend, xp, np.array(rows)[:, None]),
        of_backend(backend, xp, updates.astype(bfloat16).astype(swapped)),
        update_computation=how, copy=True, **ROW_SCATTER,
    )  # fmt: skip
    assert_same_result(result, expected.astype(bfloat16), swapped, signs=True)


def _window_ops() -> dict[str, Callable[..., Any]]:
    """Every other op, each a function of (operand, updates, index array) drawn below:
    an operand [4, 5, 3], updates [4, 5, 3] and indices [4, 5, 3] in [-4, 4)."""
    whole_rows = dict(ROW_GATHER, offset_dims=(1, 2), slice_sizes=(1, 5, 3))
    return {
        "gather clip": lambda x, u, i: gather(x, i[:, :1, 0], **whole_rows),
        "gather fill": lambda x, u, i: gather(x, i[:, :1, 0], mode="fill", **whole_rows),
        "dynamic_slice": lambda x, u, i: dynamic_slice(x, (1, 2, 0), (2, 3, 3)),
        "dynamic_update_slice": lambda x, u, i: dynamic_update_slice(x, u[:2, :3], (3, 1, 0)),
        "slice_scatter": lambda x, u, i: slice_scatter(x, u[:2], [3], [-5], [-2], [0]),
        "scatter_update": lambda x, u, i: scatter_update(
            x.reshape(20, 3), -2, i[:2, :2, 0] % 20, u.reshape(20, 3)[:4], copy=True
        ),
        "onnx.gather_elements": lambda x, u, i: onnx.gather_elements(x, i, axis=0),
        "onnx.gather_nd": lambda x, u, i: onnx.gather_nd(x, i[:, :2, :2] % 4),
        "onnx.scatter_elements": lambda x, u, i: onnx.scatter_elements(
            x, i, u, axis=0, reduction="add"
        ),
        "onnx.slice": lambda x, u, i: onnx.slice(x, [1], [3], [0], [1]),
    }


WINDOW_OPS = _window_ops()
AT_METHODS = ("get", "set", "add", "subtract", "multiply", "divide", "power", "min", "max",
              "apply")  # fmt: skip
# index expressions of at: integer arrays, basic ones, a mix, a mask of rows
AT_INDICES = ("array", "basic", "mixed", "mask")


def _at_call(method: str, index: str, fill: bool, swapped_y: bool) -> Callable[..., Any]:
    """``at(x)[index].method(y)``: ``y`` a Python int (for a mask) or the same rows of
    ``u``, in the byte order of ``u`` or swapped (``y`` may have any dtype that casts)."""

    def call(at: Callable[..., Any], x: Any, u: Any, i: Any, mask: Any) -> Any:
        key = {"array": i[0, :, 0], "basic": (slice(1, 3), 0), "mixed": (slice(None), i[0, :2, 0])}
        chosen = at(x)[mask if index == "mask" else key[index]]
        if method == "get":
            return chosen.get(mode="fill") if fill else chosen.get()
        y = 2 if index == "mask" else at(u)[key[index]].get()
        if swapped_y and index != "mask":
            y = y.astype(y.dtype.newbyteorder("S"))
        if method == "apply":
            return chosen.apply(old_times_two_minus_new, y, copy=True)
        return getattr(chosen, method)(y, copy=True)

    return call


def _drawn_arrays(
    data: st.DataObject, shape: tuple[int, ...]
) -> tuple[np.dtype, np.ndarray, np.ndarray, np.ndarray]:
    """A dtype in either byte order, an operand and updates of ``shape`` in it, and
    big-endian indices of ``shape`` in [-4, 4)."""
    dtype = in_order(data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(ORDERS)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    index_dtype = in_order(data.draw(st.sampled_from(INDEX_DTYPES[:2])), "swapped")
    indices = rng.integers(-4, 4, shape).astype(index_dtype)
    return dtype, values_of(rng, shape, dtype), values_of(rng, shape, dtype), indices


@settings(max_examples=12)
@given(data=st.data())
def test_other_ops_in_either_byte_order(xp, backend, data):
    dtype, operand, updates, indices = _drawn_arrays(data, (4, 5, 3))
    name = data.draw(st.sampled_from(sorted(WINDOW_OPS)))
    function = WINDOW_OPS[name]
    expected = function(native(operand), native(updates), native(indices))
    call = backend.wrap(function) or function
    result = call(*(of_backend(backend, xp, a) for a in (operand, updates, indices)))
    assert_same_result(result, np.asarray(expected), dtype, signs=True)


# operands of at: rows of a mask narrower than NumPy's own masked write takes, and as wide
AT_SHAPES = ((4, 5, 3), (4, _at.ROW_MASK_MIN_WIDTH // 4, 4))


@settings(max_examples=12)
@given(data=st.data())
def test_at_in_either_byte_order(xp, backend, data):
    shape = data.draw(st.sampled_from(AT_SHAPES))
    dtype, operand, updates, indices = _drawn_arrays(data, shape)
    method = data.draw(st.sampled_from(AT_METHODS))
    if dtype.kind == "c" and method in ("min", "max"):
        method = "add"  # the Array API orders real numbers only
    if method in ("divide", "power") and dtype.newbyteorder("=").kind != "f":
        method = "multiply"  # float results
    index = data.draw(st.sampled_from(AT_INDICES))
    op = _at_call(method, index, fill=data.draw(st.booleans()), swapped_y=data.draw(st.booleans()))
    mask = np.arange(shape[0]) % 2 == data.draw(st.integers(0, 1))
    with np.errstate(all="ignore"):  # 0 ** -1 and the like
        expected = op(at, native(operand), native(updates), native(indices), mask)
        arrays = (of_backend(backend, xp, a) for a in (operand, updates, indices))
        result = op(backend.wrap_at(at) or at, *arrays, mask)
    assert_same_result(result, np.asarray(expected), dtype, signs=True)


# -- the reinterpretations themselves -----------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", *FLOATS[3:]])
@pytest.mark.parametrize("order", ORDERS)
def test_signed_view_reads_the_bits_in_the_arrays_byte_order(dtype, order):
    x = np.array([-0.0, 0.0, 1.0, -1.0]).astype(in_order(dtype, order))
    bits = backend_for("test", x=x).signed_view(x)
    assert bits is not None and np.shares_memory(bits, x)
    width = bits.dtype.itemsize * 8
    assert bits[0] == -(2 ** (width - 1)) and bits[1] == 0  # -0.0 is the smallest
    assert bits[2] > 0 > bits[3]


@pytest.mark.parametrize("size", [_host.LIST_ENTRIES, _host.LIST_ENTRIES + 1])
@pytest.mark.parametrize("dtype", ["int16", "int32", "int64", "uint32"])
def test_all_in_range_reads_indices_in_their_byte_order(dtype, size):
    swapped = in_order(dtype, "swapped")
    big = 2 ** (np.dtype(dtype).itemsize * 8 - 8)  # bytes 01 00 .. 00: 1 when swapped
    assert not _host.all_in_range(np.full(size, big).astype(swapped), 5)
    assert _host.all_in_range(np.full(size, 5).astype(swapped), 5)
    if np.dtype(dtype).kind == "i":
        assert not _host.all_in_range(np.full(size, -1).astype(swapped), 5)


def test_the_npu_emulator_writes_a_big_endian_cache():
    from indexops_npu import emulate_scatter_update

    def run(value: str, index: str) -> np.ndarray:
        cache = np.zeros((4, 4, 1, 2), value)
        slots = np.array([[1, 2, 3], [9, -1, 2]], index)
        tokens = np.arange(12).reshape(2, 3, 1, 2).astype(value)
        emulate_scatter_update(
            cache, -2, slots, tokens, view_shape=(2, 3, 1, 2), tile_shape=(1, 2, 1, 2)
        )
        return cache

    expected = run("float32", "int64")
    for value, index in ((">f4", ">i8"), (">f4", "<i4"), (">i2", ">i2")):
        cache = run(value, index)
        assert cache.dtype == np.dtype(value)
        np.testing.assert_array_equal(cache.astype(np.float32), expected)


@pytest.mark.parametrize(
    ("op", "name", "target"),
    [
        (lambda x, y: scatter(x, np.array([[0], [1]]), y, **ROW_SCATTER), "updates", "input"),
        (lambda x, y: dynamic_update_slice(x, y, (0, 0)), "update", "operand"),
        (lambda x, y: slice_scatter(x, y, start=(0,), stop=(2,), step=(1,), axes=(0,)),
         "updates", "data"),
        (lambda x, y: scatter_update(x.reshape(2, 1, 1, 2), -2, np.array([[0, 1]]),
                                     y.reshape(1, 2, 1, 2)), "src", "input"),
        (lambda x, y: onnx.scatter_nd(x, np.array([[0], [1]]), y), "updates", "data"),
        (lambda x, y: onnx.scatter_elements(x, np.array([[1, 0], [0, 1]]), y), "updates",
         "data"),
    ],
    ids=["scatter", "dynamic_update_slice", "slice_scatter", "scatter_update",
         "onnx.scatter_nd", "onnx.scatter_elements"],
)  # fmt: skip
def test_updates_in_the_other_byte_order_are_a_named_error(op, name, target):
    """Updates of the input's dtype in the other byte order are refused (no conversion
    behind the caller's back), and the error says that the byte order is what differs and
    how to convert, before anything is written."""
    x = np.zeros((2, 2), dtype=in_order("float64", "swapped"))
    y = np.ones((2, 2))
    message = (
        rf"{name}\.dtype='float64' is not allowed: the dtype of {target} \((>f8|<f8)\), "
        rf"byte order included \({name} is native, {target} non-native\): "
        rf"{name}\.astype\({target}\.dtype\) converts it"
    )
    with pytest.raises(TypeError, match=message):
        op(x, y)
    assert not x.any()


# gathers of a Dask table by NumPy rows, which Dask's own take reads from several chunks
DASK_GATHERS: dict[str, Callable[[Any, np.ndarray], Any]] = {
    "at get": lambda x, rows: at(x)[rows].get(),
    "at get, clip": lambda x, rows: at(x)[rows].get(mode="clip"),
    "at get, fill": lambda x, rows: at(x)[rows].get(mode="fill"),
    "at get of a mask": lambda x, rows: at(x)[np.isin(np.arange(8), rows)].get(),
    "gather": lambda x, rows: gather(x, rows[:, None], **ROW_GATHER, slice_sizes=(1, 2)),
    "onnx gather": lambda x, rows: onnx.gather(x, rows),
    "onnx gather_elements": lambda x, rows: onnx.gather_elements(x, rows[:, None] % 2, axis=1),
}


@pytest.mark.parametrize("dtype", [">f4", ">i8", *(("bfloat16",) if EXTENSION else ())])
@pytest.mark.parametrize("call", sorted(DASK_GATHERS))
def test_dask_gathers_across_chunks_compute_in_the_byte_order(dtype, call):
    """A Dask table's rows gathered by NumPy rows from several chunks compute in the
    table's dtype, byte order included, with NumPy's bytes (NumPy's concatenate, which
    joins Dask's pieces, gives the native order)."""
    da = pytest.importorskip("dask.array")
    x = np.arange(16).reshape(8, 2).astype(np.dtype(dtype).newbyteorder(">"))
    rows = np.array([5, 7, 1, 6])  # from three of the chunks below
    expected = DASK_GATHERS[call](x, rows)
    result = DASK_GATHERS[call](da.from_array(x, chunks=(3, 2)), rows)
    computed = result.compute(scheduler="sync")
    assert expected.dtype == result.dtype == computed.dtype == x.dtype
    assert computed.tobytes() == expected.tobytes()
