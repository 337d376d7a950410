"""NumPy's extension dtypes (ml_dtypes' bfloat16, float8, float4, int4, ...) in every op.

NumPy, Dask and JAX arrays hold them; the Array API's ``isdtype`` cannot name them. Every
combine rounds to the element type after each update, as StableHLO applies the combiner
in the element type: the references here do the same, one update at a time.
"""

from __future__ import annotations

import numpy as np
import pytest
from backends import DRAWN, Backend
from helpers import ROW_GATHER, ROW_SCATTER, assert_same, from_numpy
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import gather as gather_reference
from reference import scatter as scatter_reference
from reference import scatter_update as scatter_update_reference
from reference import slice_scatter as slice_scatter_reference
from strategies import EXTENSION_DTYPES

import indexops
from indexops._backends import _numpy, backend_for
from indexops._testing import device_paths, generic_only

ml_dtypes = pytest.importorskip("ml_dtypes")

# beyond the three in the strategies: no infinity, no NaN, no zero, no negative zero, ints
MORE_DTYPES = ("float8_e4m3fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int4", "uint4")
DTYPES = EXTENSION_DTYPES + tuple(name for name in MORE_DTYPES if hasattr(ml_dtypes, name))
COMBINERS = (None, "add", "mul", "min", "max", "callable")
MODES = ("drop", "drop_window", "clip", "promise_in_bounds")

# windows two wide along dim 1 of a (4, 3) input: duplicates, and starts that leave it
WINDOWS = dict(
    update_window_dims=(1,),
    inserted_window_dims=(0,),
    scatter_dims_to_operand_dims=(0, 1),
    index_vector_dim=1,
)
STARTS = np.array([[1, 0], [3, 1], [1, 0], [2, 2], [-1, 0], [1, 1], [1, 0]])
IN_BOUNDS = np.clip(STARTS, 0, [3, 1])


# On the backends whose arrays hold the extension dtypes (NumPy's, Dask's and JAX's)
pytestmark = pytest.mark.backends(lambda backend: backend.extension_dtypes)


def values(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Small values of ``dtype`` with fractions where it has them (so sums round)."""
    rng = np.random.default_rng(seed)
    if _is_integer(dtype):
        info = ml_dtypes.iinfo(dtype)
        return rng.integers(max(int(info.min), -2), min(int(info.max), 3) + 1, shape).astype(dtype)
    return (rng.integers(1, 12, shape) / 4).astype(dtype)


def _is_integer(dtype: str) -> bool:
    try:
        ml_dtypes.iinfo(dtype)
    except ValueError:
        return False
    return True


def old_times_two_plus_new(old, new):
    return old * 2 + new


@DRAWN
@pytest.mark.backends(lambda backend: backend is not Backend.DASK)
@given(data=st.data())
def test_scatter_every_combiner_and_mode(xp, backend, monkeypatch, data):
    check_every_combiner_and_mode(xp, backend, monkeypatch, data)


# Dask: fewer draws (each builds and runs a graph), every dtype; its chunks take NumPy's
# paths, which the test above runs each draw through
@pytest.mark.backends(Backend.DASK)
@settings(max_examples=12)
@given(data=st.data())
def test_scatter_every_combiner_and_mode_chunk_by_chunk(xp, backend, monkeypatch, data):
    check_every_combiner_and_mode(xp, backend, monkeypatch, data)


def check_every_combiner_and_mode(xp, backend, monkeypatch, data):
    # JAX: the strategies' extension dtypes only (each call compiles)
    dtype = data.draw(st.sampled_from(EXTENSION_DTYPES if backend.library == "jax" else DTYPES))
    combiner = data.draw(st.sampled_from(COMBINERS))
    mode = data.draw(st.sampled_from(MODES))
    seed = data.draw(st.integers(0, 2**16))
    starts = IN_BOUNDS if mode == "promise_in_bounds" else STARTS
    operand = values(dtype, (4, 3), seed)
    updates = values(dtype, (len(starts), 2), seed + 1)
    computation = old_times_two_plus_new if combiner == "callable" else combiner
    reference_mode = "drop" if mode == "promise_in_bounds" else mode
    expected = scatter_reference.scatter(
        operand, starts, updates, update_computation=computation, mode=reference_mode, **WINDOWS
    )

    def run():
        return indexops.scatter(
            from_numpy(xp, operand),
            from_numpy(xp, starts),
            from_numpy(xp, updates),
            update_computation=computation,
            mode=mode,
            **WINDOWS,
        )

    assert_same(run(), expected)
    if backend.library != "numpy":
        return
    with device_paths():  # keep masks: each combiner's identity, where the dtype has one
        assert_same(run(), expected)
    with generic_only():  # the standard alone: combines pass by pass
        assert_same(run(), expected)
    with monkeypatch.context() as patch:
        patch.setattr(_numpy, "_has_at_loop", lambda ufunc, dtype: False)
        assert_same(run(), expected)  # no ufunc.at loop: pass by pass


@pytest.mark.parametrize(
    ("dtype", "start", "step", "settles_at"),
    [("bfloat16", 256.0, 1.0, 256.0), ("float8_e4m3fn", 16.0, 1.0, 16.0)],
)
def test_each_add_rounds_to_the_element_type(
    xp, backend, monkeypatch, dtype, start, step, settles_at
):
    # start + step is a tie that rounds back to start: one update at a time nothing moves,
    # while adding the eight steps in float32 first would give start + 8
    operand = np.array([[start]], dtype=dtype)
    updates = np.full((8, 1), step, dtype=dtype)
    rows = np.zeros((8, 1), dtype=np.int32)
    expected = scatter_reference.scatter(
        operand, rows, updates, update_computation="add", **ROW_SCATTER
    )
    assert float(expected[0, 0]) == settles_at

    def run():
        return indexops.scatter(
            from_numpy(xp, operand),
            from_numpy(xp, rows),
            from_numpy(xp, updates),
            update_computation="add",
            **ROW_SCATTER,
        )

    assert_same(run(), expected)
    if backend.library == "numpy":
        monkeypatch.setattr(_numpy, "_has_at_loop", lambda ufunc, dtype: False)
        assert_same(run(), expected)


@DRAWN
@pytest.mark.parametrize("mode", ("clip", "fill"))
@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_and_dynamic_slice(xp, dtype, mode):
    operand = values(dtype, (4, 3), 2)
    attrs = dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1),
                 index_vector_dim=1, slice_sizes=(1, 2))  # fmt: skip
    fill_value = None if mode == "clip" else 1
    expected = gather_reference.gather(operand, STARTS, mode=mode, fill_value=fill_value, **attrs)
    result = indexops.gather(
        from_numpy(xp, operand), from_numpy(xp, STARTS), mode=mode, fill_value=fill_value, **attrs
    )
    assert_same(result, expected)
    window = indexops.dynamic_slice(from_numpy(xp, operand), (2, 5), (2, 2))
    assert_same(window, gather_reference.dynamic_slice(operand, (2, 5), (2, 2)))


@pytest.mark.parametrize(
    ("dtype", "fill"),
    [(dtype, fill) for dtype, fill in
     [("bfloat16", np.nan), ("float8_e4m3fn", np.nan), ("float8_e8m0fnu", np.nan),
      ("float4_e2m1fn", -6.0), ("int4", -8), ("uint4", 15)] if dtype in DTYPES],
)  # fmt: skip
def test_gather_default_fill(xp, dtype, fill):
    # NaN for floats, but float4_e2m1fn has none (NaN would become -0.0): its minimum
    operand = from_numpy(xp, np.zeros((2, 2), dtype=dtype))
    result = indexops.gather(
        operand, from_numpy(xp, np.array([[5]])), **dict(ROW_GATHER, slice_sizes=(1, 2)),
        mode="fill",
    )  # fmt: skip
    assert_same(result, np.full((1, 2), fill).astype(dtype))


@pytest.mark.parametrize(
    ("dtype", "fill_value"),
    [(dtype, fill) for dtype, fill in
     [("bfloat16", 1j), ("bfloat16", True), ("float8_e4m3fn", 449), ("float8_e4m3fn", np.inf),
      ("float8_e5m2", -1e6), ("float4_e2m1fn", np.nan), ("int4", 8), ("int4", 0.5),
      ("uint4", -1)] if dtype in DTYPES],
)  # fmt: skip
def test_gather_fill_value_the_dtype_cannot_hold(xp, dtype, fill_value):
    operand = from_numpy(xp, np.zeros((2, 2), dtype=dtype))
    with pytest.raises(indexops.IndexOpsTypeError, match=f"fill_value=.*{dtype}"):
        indexops.gather(
            operand, from_numpy(xp, np.array([[5]])), **dict(ROW_GATHER, slice_sizes=(1, 2)),
            mode="fill", fill_value=fill_value,
        )  # fmt: skip


@DRAWN
@pytest.mark.parametrize("dtype", DTYPES)
def test_window_writers(xp, backend, dtype):
    operand = values(dtype, (4, 3), 3)
    update = values(dtype, (2, 2), 4)
    result = indexops.dynamic_update_slice(from_numpy(xp, operand), from_numpy(xp, update), (3, 1))
    assert_same(result, scatter_reference.dynamic_update_slice(operand, update, (3, 1)))
    strided = values(dtype, (2, 3), 5)
    result = indexops.slice_scatter(
        from_numpy(xp, operand), from_numpy(xp, strided), [3], [-5], [-2], [0]
    )
    expected = slice_scatter_reference.slice_scatter(operand, strided, [3], [-5], [-2], [0])
    assert_same(result, expected)
    index = np.array([[2, -1], [0, 2]])
    src = values(dtype, (4, 3), 6)
    result = indexops.scatter_update(
        from_numpy(xp, operand), -2, from_numpy(xp, index), from_numpy(xp, src),
        copy=not backend.writable,
    )  # fmt: skip
    assert_same(result, scatter_update_reference.scatter_update(operand, index, src))


KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric")  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
def test_has_kind_classifies_by_ml_dtypes_info(dtype):
    backend = backend_for("test", x=np.zeros(1))
    numpy_dtype = np.dtype(dtype)
    integer = _is_integer(dtype)
    signed = integer and ml_dtypes.iinfo(dtype).min < 0
    expected = {
        "bool": False,
        "signed integer": signed,
        "unsigned integer": integer and not signed,
        "integral": integer,
        "real floating": not integer,
        "complex floating": False,
        "numeric": True,
    }
    assert {kind: backend.has_kind(numpy_dtype, kind) for kind in KINDS} == expected
    info = backend.iinfo(numpy_dtype) if integer else backend.finfo(numpy_dtype)
    assert info.max == (ml_dtypes.iinfo if integer else ml_dtypes.finfo)(dtype).max


@pytest.mark.parametrize("dtype", ["U3", "M8[s]", "V4", np.dtypes.StringDType()], ids=str)
def test_has_kind_of_other_numpy_dtypes_is_false_not_an_error(dtype):
    backend = backend_for("test", x=np.zeros(1))
    assert not any(backend.has_kind(np.dtype(dtype), kind) for kind in KINDS)


def test_integer_extension_dtypes_index_too(xp):
    operand = from_numpy(xp, np.arange(12, dtype=np.int32).reshape(4, 3))
    for dtype in ("int4", "uint4"):
        rows = from_numpy(xp, np.array([[3], [1]], dtype=dtype))
        result = indexops.gather(operand, rows, **dict(ROW_GATHER, slice_sizes=(1, 3)))
        assert_same(result, np.array([[9, 10, 11], [3, 4, 5]], dtype=np.int32))


# -- torch's float8 types: storage without arithmetic --------------------------------------

TORCH_FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


def _float8_moves() -> dict[str, object]:
    """Calls that only move elements, on ``(x, rows, y)``: their result's bits are those
    of the same call on the bits seen as int8."""
    from indexops import onnx

    return {
        "at get": lambda x, rows, y: indexops.at(x)[rows].get(),
        "at set, rows twice": lambda x, rows, y: indexops.at(x)[rows[[0, 0]]].set(y, copy=True),
        "gather": lambda x, rows, y: indexops.gather(
            x, rows[:, None], **ROW_GATHER, slice_sizes=(1, 2)
        ),
        "gather fill": lambda x, rows, y: indexops.gather(
            x, rows[:, None] + 3, **ROW_GATHER, slice_sizes=(1, 2), mode="fill", fill_value=0
        ),
        "scatter": lambda x, rows, y: indexops.scatter(
            x, rows[:, None], y, **ROW_SCATTER, copy=True
        ),
        "dynamic_update_slice": lambda x, rows, y: indexops.dynamic_update_slice(x, y, (1, 0)),
        "slice_scatter": lambda x, rows, y: indexops.slice_scatter(
            x, y, start=(0,), stop=(4,), step=(2,), axes=(0,)
        ),
        "scatter_update": lambda x, rows, y: indexops.scatter_update(
            x.reshape(4, 1, 1, 2), -2, rows[None], y.reshape(1, 2, 1, 2), copy=True
        ),
        "gather_elements": lambda x, rows, y: onnx.gather_elements(
            x, rows[:, None].expand(2, 2) % 2, axis=1
        ),
        "scatter_elements": lambda x, rows, y: onnx.scatter_elements(
            x, rows[None] % 2, y[:1], axis=1
        ),
    }


@pytest.mark.backends("torch")
@pytest.mark.parametrize("call", list(_float8_moves()))
@pytest.mark.parametrize("name", TORCH_FLOAT8)
def test_torch_float8_moves_its_bits(name, call):
    """torch has no index_copy_, scatter_ or comparisons for float8 on the CPU: indexops
    moves the rows as the bits of int8, in place or into a copy, results in float8."""
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, name, None)
    if dtype is None:
        pytest.skip(f"torch {torch.__version__} has no {name}")
    x = torch.arange(1, 9, dtype=torch.float32).reshape(4, 2).to(dtype)
    y = torch.tensor([[9.0, 10.0], [11.0, 12.0]]).to(dtype)
    rows = torch.tensor([2, 0])
    run = _float8_moves()[call]
    got = run(x, rows, y)
    as_int8 = run(x.view(torch.int8), rows, y.view(torch.int8))
    assert got.dtype == dtype
    assert torch.equal(got.view(torch.int8), as_int8)
    assert torch.equal(x, torch.arange(1, 9, dtype=torch.float32).reshape(4, 2).to(dtype))


@pytest.mark.backends("torch")
@pytest.mark.parametrize("method", ["add", "multiply", "min", "max"])
def test_torch_float8_arithmetic_is_a_named_error(method):
    """torch has no arithmetic for float8: a named error before anything is written, not
    torch's NotImplementedError from inside a write."""
    torch = pytest.importorskip("torch")
    x = torch.zeros(3, dtype=torch.float8_e4m3fn)
    y = torch.ones(2, dtype=torch.float8_e4m3fn)
    with pytest.raises(indexops.IndexOpsTypeError, match="torch has no arithmetic for it"):
        getattr(indexops.at(x)[torch.tensor([0, 1])], method)(y)
    assert not x.view(torch.int8).any()


def test_dask_arrays_made_for_one_byte_types_are_named_by_their_type():
    """The arrays the Dask backend makes (a fill, an empty result) are named by their
    shape, dtype and value; ml_dtypes' 1-byte types all have the code "<V1", so the
    name carries the dtype's name too: results of int4, uint4, float8 and float4 tables
    computed in one graph each keep their own dtype and fill (one took another's chunk:
    uint4's empty result came back int4, float8's fill of 0.3 was float4's 0.5)."""
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    names = [
        n for n in ("int4", "uint4", "float8_e4m3fn", "float4_e2m1fn") if hasattr(ml_dtypes, n)
    ]
    dtypes = [np.dtype(getattr(ml_dtypes, n)) for n in names]
    tables = [
        da.from_array(np.zeros((3, 2), dtype), chunks=2, name=f"table-{n}")
        for n, dtype in zip(names, dtypes)
    ]
    empty = np.array([], np.int64)
    rows = np.array([[0], [5]])  # row 5 is filled
    fills = [1 if "int" in n else 0.3 for n in names]
    gathers = [
        indexops.gather(t, rows, **ROW_GATHER, slice_sizes=(1, 2), mode="fill", fill_value=fill)
        for t, fill in zip(tables, fills)
    ]
    empties = [indexops.at(t)[empty].get() for t in tables]
    computed = dask.compute(*gathers, *empties)
    for k, dtype in enumerate(dtypes):
        table = np.zeros((3, 2), dtype)
        expected = indexops.gather(
            table, rows, **ROW_GATHER, slice_sizes=(1, 2), mode="fill", fill_value=fills[k]
        )
        assert computed[k].dtype == dtype and computed[len(dtypes) + k].dtype == dtype
        assert computed[k].tobytes() == expected.tobytes()
