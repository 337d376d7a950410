"""scatter_update against the PyPTO loop transcription, on every backend."""

from __future__ import annotations

import numpy as np
import pytest
from backends import DRAWN, WITH_VALUES, Backend
from helpers import assert_same, from_numpy, to_numpy
from hypothesis import given
from hypothesis import strategies as st
from reference import scatter_update as reference

import indexops
from indexops import IndexOpsTypeError, IndexOpsValueError

VALUE_DTYPES = ("float32", "float16", "int32", "int16", "int64", "uint8", "bool")
INDEX_DTYPES = ("int16", "int32", "int64", "int8", "uint8", "uint16")

# The seed's two examples (PyPTO docs), already 0-based.
SEED_2D_INDEX = [[1, 2], [4, 5]]
SEED_2D_SRC = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]
SEED_2D_OUT = [
    [0, 0, 0],
    [1, 2, 3],
    [4, 5, 6],
    [0, 0, 0],
    [7, 8, 9],
    [10, 11, 12],
    [0, 0, 0],
    [0, 0, 0],
]
SEED_4D_INDEX = [[1, 8], [4, 10]]
SEED_4D_SRC = [[[[1, 2, 3]], [[4, 5, 6]]], [[[7, 8, 9]], [[10, 11, 12]]]]
SEED_4D_OUT = [
    [[[0, 0, 0]], [[1, 2, 3]], [[0, 0, 0]], [[0, 0, 0]], [[7, 8, 9]], [[0, 0, 0]]],
    [[[0, 0, 0]], [[0, 0, 0]], [[4, 5, 6]], [[0, 0, 0]], [[10, 11, 12]], [[0, 0, 0]]],
]


def _run(xp, backend, input, index, src):
    """In place where the backend's arrays can be written, else with copy=True."""
    x = from_numpy(xp, np.asarray(input))
    out = indexops.scatter_update(
        x,
        -2,
        from_numpy(xp, np.asarray(index)),
        from_numpy(xp, np.asarray(src)),
        copy=not backend.writable,
    )
    return x, out


@pytest.mark.parametrize(
    ("shape", "index", "src", "expected"),
    [
        ((8, 3), SEED_2D_INDEX, SEED_2D_SRC, SEED_2D_OUT),
        ((2, 6, 1, 3), SEED_4D_INDEX, SEED_4D_SRC, SEED_4D_OUT),
    ],
    ids=["2d", "4d"],
)
def test_seed_examples(xp, backend, shape, index, src, expected):
    input = np.zeros(shape, dtype=np.int32)
    index = np.asarray(index, dtype=np.int64)
    src = np.asarray(src, dtype=np.int32)
    x, out = _run(xp, backend, input, index, src)
    assert_same(out, np.asarray(expected, dtype=np.int32))
    np.testing.assert_array_equal(reference.scatter_update(input, index, src), expected)
    if backend.writable:
        assert out is x


@st.composite
def cases(draw, dtypes=VALUE_DTYPES):
    """Random legal problems with padding and duplicate slots, 2-D or 4-D."""
    rank = draw(st.sampled_from((2, 4)))
    d = draw(st.integers(0, 3))
    if rank == 2:
        shape: tuple[int, ...] = (draw(st.integers(0, 7)), d)
        slots = shape[0]
    else:
        shape = (draw(st.integers(0, 3)), draw(st.integers(1, 3)), 1, d)
        slots = shape[0] * shape[1]
    index_dtype = draw(st.sampled_from(INDEX_DTYPES))
    low = 0 if index_dtype.startswith("u") else -2
    most = 0 if slots == 0 and low == 0 else 4  # unsigned slots into an empty cache: none
    b, s = draw(st.integers(0, most)), draw(st.integers(0, most))
    slot = st.integers(low, slots - 1) if slots > low else st.just(-1)
    index = np.asarray(draw(st.lists(slot, min_size=b * s, max_size=b * s)), dtype=np.int64)
    index = np.maximum(index, -1).reshape(b, s).astype(index_dtype)
    src_shape = (b * s, d) if rank == 2 else (b, s, 1, d)
    dtype = draw(st.sampled_from(dtypes))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    input = rng.integers(0, 100, size=shape).astype(dtype)
    src = rng.integers(0, 100, size=src_shape).astype(dtype)
    return input, index, src


@DRAWN
@given(data=st.data())
def test_matches_reference(xp, backend, data):
    dtypes = [name for name in VALUE_DTYPES if hasattr(xp, name)]
    input, index, src = data.draw(cases(dtypes))
    expected = reference.scatter_update(input, index, src)
    x, out = _run(xp, backend, input, index, src)
    assert_same(out, expected)
    if not backend.writable:
        assert_same(x, input)  # functional: the input is untouched
    else:
        assert out is x


def test_duplicates_last_in_row_major_order_wins(xp, backend):
    index = np.array([[2, 0], [2, 2]], dtype=np.int32)
    src = np.arange(8, dtype=np.float32).reshape(4, 2)
    _, out = _run(xp, backend, np.zeros((3, 2), np.float32), index, src)
    assert_same(out, np.array([[2, 3], [0, 0], [6, 7]], np.float32))


def test_negative_slots_are_padding(xp, backend):
    index = np.array([[-1, 1], [-5, -1]], dtype=np.int64)
    src = np.ones((2, 2, 1, 2), dtype=np.int16)
    _, out = _run(xp, backend, np.zeros((1, 2, 1, 2), np.int16), index, src)
    assert_same(out, np.array([[[[0, 0]], [[1, 1]]]], dtype=np.int16))


def test_one_d_index_is_one_row_of_tokens(xp, backend):
    """vLLM's slot_mapping ``[s]`` as PyPTO's ``[1, s]``, padding and duplicates included."""
    slots = np.array([3, -1, 0, 3], dtype=np.int64)
    src = np.arange(8, dtype=np.float32).reshape(1, 4, 1, 2)
    cache = np.zeros((2, 2, 1, 2), np.float32)
    _, out = _run(xp, backend, cache, slots, src)
    assert_same(out, reference.scatter_update(cache, slots[None], src))
    _, out = _run(xp, backend, np.zeros((4, 2), np.float32), slots, src.reshape(4, 2))
    assert_same(out, reference.scatter_update(np.zeros((4, 2), np.float32), slots[None],
                                              src.reshape(4, 2)))  # fmt: skip


@pytest.mark.backends(lambda backend: backend.values_on_host)
def test_one_d_index_past_the_end_names_its_position(xp):
    cache = from_numpy(xp, np.zeros((4, 2), np.float32))
    with pytest.raises(IndexOpsValueError, match=r"index\[2\]=4 .*below 4"):
        indexops.scatter_update(cache, -2, from_numpy(xp, np.array([0, 1, 4])),
                                from_numpy(xp, np.ones((3, 2), np.float32)), copy=None)  # fmt: skip
    assert_same(cache, np.zeros((4, 2), np.float32))


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_wide_unsigned_values(xp, backend, dtype):
    """torch has few kernels for uint16/32/64; duplicates and padding as for any dtype."""
    top = int(np.iinfo(dtype).max)
    index = np.array([[2, -1], [0, 2]], dtype=np.int64)
    src = np.array([[top, 1], [5, 6], [top // 2 + 1, top // 2], [top - 1, 0]], dtype=dtype)
    input = np.full((3, 2), top // 2, dtype=dtype)
    _, out = _run(xp, backend, input, index, src)
    assert_same(out, reference.scatter_update(input, index, src))


@pytest.mark.parametrize(("slot", "dtype"), [(6, "int64"), (2**64 - 1, "uint64")])
def test_slot_past_the_end(xp, backend, slot, dtype):
    """Where the slots are on the host: an error before any write. Elsewhere the token is
    skipped (nothing is written outside input) and the backend reports it its own way."""
    zeros = np.zeros((2, 3, 1, 2), np.float32)
    input = from_numpy(xp, zeros)
    bad = np.array([[0, 1], [slot, 2]], dtype=dtype)
    message = rf"index\[1, 0\]={slot} .*below 6.*nothing was written"
    src = np.ones((2, 2, 1, 2), np.float32)

    def call():
        return indexops.scatter_update(
            input, -2, from_numpy(xp, bad), from_numpy(xp, src), copy=None
        )

    if backend.values_on_host:
        with pytest.raises(IndexOpsValueError, match=message):
            call()
        assert_same(input, zeros)
    elif backend is Backend.DASK:  # the graph builds; computing it raises the same error
        result = call()
        with pytest.raises(IndexOpsValueError, match=message):
            to_numpy(result)
    elif backend in (Backend.TORCH_DEVICE, Backend.TORCH_CUDA):
        if backend is Backend.TORCH_CUDA:
            pytest.skip("a device-side assert ends the CUDA context: see docs/tracing.md")
        with pytest.raises(RuntimeError, match="slot past the end"):  # torch._assert_async
            call()
        assert_same(input, zeros)
    else:  # JAX reports it under checkify (test_tracing.py); the rest skip the token
        skipped = np.where(bad < 6, bad, 0).astype(np.int64) - (bad >= 6)
        assert_same(call(), reference.scatter_update(zeros, skipped, src))


@pytest.mark.parametrize(
    ("input_shape", "index_shape", "src_shape", "match"),
    [
        ((3,), (1, 1), (1,), r"input.shape=\(3,\).*rank 2"),
        ((2, 2, 2), (1, 1), (1, 2, 2), r"input.shape.*rank 2"),
        ((4, 2), (1, 1, 2), (2, 2), r"index.shape=\(1, 1, 2\).*rank 2"),
        ((4, 2), (2,), (1, 2), r"src.shape=\(1, 2\).*\(2, 2\)"),  # [s] is [1, s]
        ((2, 2, 1, 2), (2,), (2, 1, 2), r"src.shape=\(2, 1, 2\).*\(1, 2, 1, 2\)"),
        ((4, 2), (1, 2), (2, 3), r"src.shape=\(2, 3\).*\(2, 2\)"),  # d differs
        ((4, 2), (1, 2), (3, 2), r"src.shape=\(3, 2\).*\[b\*s, d\]"),  # rows != b*s
        ((2, 2, 1, 2), (1, 2), (2, 2), r"src.shape=\(2, 2\).*\(1, 2, 1, 2\)"),
        ((2, 2, 2, 2), (1, 2), (1, 2, 2, 2), r"input.shape.*dim 2 must be 1"),
        # tokens padded past a 1-D index (vLLM V1's key): say which to pass
        ((2, 2, 1, 2), (2,), (1, 3, 1, 2), r"3 tokens for the 2 slots .* pass src\[:, :2\], or"),
        ((4, 2), (2,), (3, 2), r"pass src\[:2\], or key\[:slot_mapping\.shape\[0\]\] before"),
        # heads: say how to pass them (a view with heads and d merged)
        ((2, 2, 2, 2), (1, 2), (1, 2, 2, 2), r"its view \[blockNum, blockSize, 1, H\*d\]"),
    ],
)
def test_shape_errors(xp, input_shape, index_shape, src_shape, match):
    input = from_numpy(xp, np.zeros(input_shape, np.float32))
    index = from_numpy(xp, np.zeros(index_shape, np.int64))
    src = from_numpy(xp, np.zeros(src_shape, np.float32))
    with pytest.raises(IndexOpsValueError, match=match):
        indexops.scatter_update(input, -2, index, src, copy=True)


def test_dim_and_dtype_errors(xp):
    input = from_numpy(xp, np.zeros((4, 2), np.float32))
    index = from_numpy(xp, np.zeros((1, 2), np.int64))
    src = from_numpy(xp, np.zeros((2, 2), np.float32))
    for dim in (0, 1, -1):
        with pytest.raises(IndexOpsValueError, match=f"dim={dim} .*must be -2"):
            indexops.scatter_update(input, dim, index, src, copy=True)
    with pytest.raises(IndexOpsTypeError, match=r"index\.dtype"):
        indexops.scatter_update(input, -2, from_numpy(xp, np.zeros((1, 2), np.float32)), src)
    with pytest.raises(IndexOpsTypeError, match=r"src\.dtype.*dtype of input"):
        indexops.scatter_update(input, -2, index, from_numpy(xp, np.zeros((2, 2), np.float64)))


def test_bfloat16_numpy_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    input = np.zeros((2, 2, 1, 2), dtype=ml_dtypes.bfloat16)
    src = np.array([[[[1.5, -2.0]]]], dtype=ml_dtypes.bfloat16)
    out = indexops.scatter_update(input, -2, np.array([[3]]), src)
    assert out is input
    assert input.dtype == ml_dtypes.bfloat16
    assert input[1, 1, 0].astype(np.float32).tolist() == [1.5, -2.0]


@pytest.mark.backends("torch")
def test_bfloat16_torch():
    import torch

    ml_dtypes = pytest.importorskip("ml_dtypes")
    input = torch.zeros((5, 3), dtype=torch.bfloat16)
    src = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.bfloat16)
    out = indexops.scatter_update(input, -2, torch.tensor([[4, -1]]), src)
    assert out is input
    assert input[4].tolist() == [1.0, 2.0, 3.0]
    assert to_numpy(input).dtype == ml_dtypes.bfloat16


def test_numpy_non_contiguous_view_writes_its_base():
    base = np.zeros((6, 4), dtype=np.float32)
    view = base[::2, 1:3]  # rows 0, 2, 4; columns 1, 2
    out = indexops.scatter_update(view, -2, np.array([[2, 0]]), np.ones((2, 2), np.float32))
    assert out is view
    assert base[4, 1:3].tolist() == [1, 1] and base[0, 1:3].tolist() == [1, 1]
    assert base.sum() == 4


@pytest.mark.backends("torch")
def test_torch_non_contiguous_view_writes_its_base():
    import torch

    base = torch.zeros((2, 4, 1, 6))
    view = base[:, :, :, ::2]  # a strided view of the cache, d = 3
    out = indexops.scatter_update(view, -2, torch.tensor([[5]]), torch.ones((1, 1, 1, 3)))
    assert out is view
    assert base[1, 1, 0].tolist() == [1, 0, 1, 0, 1, 0]
    assert base.sum() == 3


@pytest.mark.backends(lambda backend: not backend.writable)
def test_arrays_that_cannot_be_written(xp, backend):
    input = from_numpy(xp, np.zeros((3, 2), np.float32))
    args = (from_numpy(xp, np.array([[1]])), from_numpy(xp, np.ones((1, 2), np.float32)))
    with pytest.raises(IndexOpsValueError, match=r"cannot be written in place.*copy=True"):
        indexops.scatter_update(input, -2, *args)
    for copy in (None, True):
        out = indexops.scatter_update(input, -2, *args, copy=copy)
        assert out is not input
        assert_same(out, np.array([[0, 0], [1, 1], [0, 0]], np.float32))
    assert_same(input, np.zeros((3, 2), np.float32))


def test_copy_true_returns_new_array_and_keeps_input():
    input = np.zeros((3, 2), np.int32)
    out = indexops.scatter_update(input, -2, np.array([[0]]), np.ones((1, 2), np.int32), copy=True)
    assert out is not input and input.sum() == 0 and out[0].tolist() == [1, 1]


@WITH_VALUES
def test_generic_path_matches_native(xp, backend):
    from indexops._testing import generic_only

    input = np.arange(12, dtype=np.float32).reshape(6, 2)
    index = np.array([[5, -1, 0], [5, 2, 0]], dtype=np.int64)
    src = -np.arange(12, dtype=np.float32).reshape(6, 2)
    with generic_only():
        _, generic = _run(xp, backend, input, index, src)
    _, native = _run(xp, backend, input, index, src)
    assert_same(generic, to_numpy(native))
    assert_same(native, reference.scatter_update(input, index, src))


@pytest.mark.parametrize("shape", [(0, 3), (0, 2, 1, 3)], ids=["2d", "4d"])
def test_empty_cache_takes_padding_slots_only(xp, backend, shape):
    # a cache with no slot: every token is padding, nothing is written, no error
    index = np.full((2, 2), -1, dtype=np.int64)
    src = np.ones((4, 3) if len(shape) == 2 else (2, 2, 1, 3), dtype=np.float32)
    input = np.zeros(shape, dtype=np.float32)
    _, out = _run(xp, backend, input, index, src)
    assert_same(out, reference.scatter_update(input, index, src))
