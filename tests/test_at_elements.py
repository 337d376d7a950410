"""``at`` on a tuple of index arrays, one per dim of ``x``, selecting few elements (NumPy's
``take_along_axis`` idiom ``x[rows[:, None], idx]`` among them): read and combined by the
library's own steps where every entry is in range (``Backend.take_elements``,
``combine_elements``: NumPy's indexing and ``ufunc.at``, torch's ``take`` and a flat
``index_add_``), against the generic path, through ``get`` and the updates, in place and
into a copy, with repeats in order, negative and outside entries (the general path), updates
and index arrays that view ``x``, byte orders and extension dtypes, autograd and many threads.
"""

from __future__ import annotations

import contextlib
import itertools

import ml_dtypes  # noqa: F401 (gives NumPy bfloat16 by name)
import numpy as np
import pytest
from helpers import comparable, map_in_threads, to_numpy

import indexops
from indexops._testing import generic_only, without_kernels

torch = pytest.importorskip("torch")

LIBRARIES = ("numpy", "torch")
# method -> whether the library's own step takes it (NumPy, torch); "pairs": only the
# kernels' pass of two index arrays into a 2-D x, of the types it has compiled ahead;
# "compared": integers and real floats (ufunc.at, or the pass), and the pass's types
METHODS = {
    "get": (True, True),
    "add": (True, True),
    "subtract": (True, True),
    "multiply": (True, "pairs"),
    "max": ("compared", "compared"),
    "min": ("compared", "compared"),
    "set": (True, True),
}
PAIR_TYPES = ("float32", "float64", "int32", "int64")


def steps_take(library: str, method: str, dtype: str, shape: tuple, index: tuple) -> bool:
    """Whether the library's own element step takes the call (:data:`METHODS`)."""
    takes = METHODS[method][LIBRARIES.index(library)]
    if takes == "compared" and np.dtype(dtype).kind in "iuf":
        return True
    if takes not in ("pairs", "compared"):
        return bool(takes)
    from indexops._backends._host import load_kernels

    kernels = load_kernels() is not None  # (loaded now: the steps ask whether they have)
    return kernels and len(index) == 2 and len(shape) == 2 and dtype in PAIR_TYPES


@contextlib.contextmanager
def element_steps():
    """Count the element steps that took a call (returned an array), by library."""
    from indexops._backends._numpy import NumpyBackend
    from indexops._backends._torch import TorchBackend

    taken: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        for owner, name in itertools.product(
            (NumpyBackend, TorchBackend), ("take_elements", "combine_elements")
        ):
            function = getattr(owner, name)

            def counted(self, *args, _f=function, _name=name, **options):
                result = _f(self, *args, **options)
                if result is not None:
                    taken.append(f"{self.name} {_name}")
                return result

            patch.setattr(owner, name, counted)
        yield taken


def arrays(library: str, *values: np.ndarray) -> tuple:
    if library == "numpy":
        return values
    return tuple(torch.from_numpy(np.ascontiguousarray(v)) for v in values)


def table_values(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Values of ``dtype`` whose sums in another order differ (floats of many magnitudes,
    NaN and infinities; integers over the whole range, wrapping)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    drawn = rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 6, shape)
    if np.dtype(dtype).kind == "c":
        drawn = drawn + 1j * rng.standard_normal(shape)
    specials = np.array([np.nan, np.inf, -0.0])
    drawn.reshape(-1)[:3] = specials[: drawn.size]
    return drawn.astype(dtype)


def call(library: str, method: str, x, index, y, copy):
    target = indexops.at(x)[index]
    if method == "get":
        return target.get()
    return getattr(target, method)(y, copy=copy)


def as_bits(library: str, a) -> np.ndarray:
    """The values as NumPy compares them (NaNs equal): torch's bfloat16 and float16, and
    ml_dtypes' types, as float64."""
    if library == "torch" and a.dtype in (torch.bfloat16, torch.float16):
        a = a.to(torch.float64)
    return comparable(to_numpy(a))


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "int8", "int32", "uint64", "complex64", "bfloat16"]
)
@pytest.mark.parametrize("method", list(METHODS))
def test_element_tuples_equal_the_generic_path(library, dtype, method):
    """The idiom ``x[rows[:, None], idx]`` (repeated columns within rows), a 3-D ``x``
    with three broadcast arrays, and two arrays of one element each: the generic path's
    result (repeats in the updates' order, integers wrapping), in place and into a copy,
    taken by the library's own step where it has one."""
    if library == "torch" and (
        dtype == "bfloat16" or (dtype == "uint64" and method not in ("get", "set"))
    ):
        return  # (torch's bfloat16 below; torch has no arithmetic on uint64)
    if dtype == "complex64" and method in ("max", "min"):
        return  # (complex numbers are not ordered)
    rng = np.random.default_rng(5)
    cases = [
        ((16, 7), (np.arange(16)[:, None], rng.integers(0, 7, (16, 5)))),
        ((4, 5, 6), (
            rng.integers(0, 4, (3, 1, 1)), rng.integers(0, 5, (1, 2, 1)),
            rng.integers(0, 6, (3, 2, 4)),
        )),
        ((9, 3), (np.array([4]), np.array([2]))),
        ((9, 3), (np.array(4), np.array(2))),  # 0-d arrays: a 0-d array
        # few repeated elements of a large x (a replace's last writes by a sort)
        ((64, 40), (np.array([[5], [5], [9]]), np.array([[1, 1, 3]]))),
    ]  # fmt: skip
    for (shape, index), copy in itertools.product(cases, (True, False)):
        takes = steps_take(library, method, dtype, shape, index)
        table = table_values(dtype, shape, seed=len(shape))
        result_shape = np.broadcast_shapes(*(i.shape for i in index))
        values = table_values(dtype, result_shape, seed=7)
        if method == "multiply" and np.dtype(dtype).kind in "fc":
            # small integers: products of many magnitudes overflow in any order, and a
            # complex product is not one rounding (ufunc.at's loop and the vectorised
            # multiply differ in the last bit): exact ones are compared
            values = (np.arange(values.size).reshape(values.shape) % 3 - 1).astype(dtype)
        x_expected, x, *ids = arrays(library, table.copy(), table.copy(), *index)
        (y,) = arrays(library, values)
        with generic_only(), np.errstate(invalid="ignore", over="ignore"):
            expected = call(library, method, x_expected, tuple(ids), y, copy)
        if method == "set":  # (NumPy's way of finding the last writes, then the kernels')
            x_numpy = arrays(library, table.copy())[0]
            with without_kernels(), element_steps() as taken:
                got = call(library, method, x_numpy, tuple(ids), y, copy)
            np.testing.assert_array_equal(as_bits(library, got), as_bits(library, expected))
            assert len(taken) == 1, taken
        with element_steps() as taken, np.errstate(invalid="ignore", over="ignore"):
            got = call(library, method, x, tuple(ids), y, copy)
        assert type(got) is type(expected) and got.dtype == expected.dtype
        assert tuple(got.shape) == tuple(expected.shape)
        np.testing.assert_array_equal(as_bits(library, got), as_bits(library, expected))
        if method != "get":
            assert (got is x) == (not copy)
            np.testing.assert_array_equal(
                as_bits(library, x), as_bits(library, expected if not copy else x_expected)
            )
        assert len(taken) == (1 if takes else 0), taken


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("method", ["get", "add", "set"])
def test_entries_outside_or_negative_take_the_general_path(library, method):
    """Negative entries (counted from the end: by the general path, or a replace's
    compiled pass), entries outside (``get`` clips, the updates drop them by default,
    ``promise_in_bounds`` raises with ``x`` as it was) and a broken promise on one of the
    index arrays: the general path's results, the library's step declining before it
    writes anything."""
    table = np.arange(6.0 * 4).reshape(6, 4)
    rows = np.arange(6)[:, None]
    for columns in (
        np.array([[0, -1]] * 6), np.array([[-4, -4]] * 6), np.array([[0, 4]] * 6),
        np.array([[9, 2]] * 6), np.array([[-5, 2]] * 6),
    ):  # fmt: skip
        x, r, c = arrays(library, table.copy(), rows, columns)
        (y,) = arrays(library, np.arange(12.0).reshape(6, 2))
        with generic_only():
            expected = call(library, method, arrays(library, table.copy())[0], (r, c), y, False)
        got = call(library, method, x, (r, c), y, False)
        np.testing.assert_array_equal(to_numpy(got), to_numpy(expected))
        if method == "add" and columns.min() >= 0:  # (negative entries are in range)
            target = arrays(library, table.copy())[0]
            with pytest.raises(IndexError):
                indexops.at(target)[r, c].add(y, mode="promise_in_bounds", copy=False)
            np.testing.assert_array_equal(to_numpy(target), table)


@pytest.mark.parametrize("library", LIBRARIES)
def test_in_place_updates_read_updates_and_indices_that_view_x(library):
    """In place, updates that are ``x``'s own elements and index arrays that are ``x``'s
    own memory (an int64 table whose columns index it) are read before anything is
    written: the sequence of writes in order, of values read before the first."""
    table = np.array([[1, 0, 2], [2, 2, 0], [0, 1, 1]], dtype=np.int64)
    for views, method in itertools.product(
        ("updates", "contiguous updates", "indices"), ("add", "set")
    ):
        x, rows, columns, apart = arrays(
            library, table.copy(), np.arange(3)[:, None], np.array([[0, 0], [1, 2], [2, 2]]),
            np.array([[5, 6], [7, 8], [9, 10]]),
        )  # fmt: skip
        index, y = {
            "updates": ((rows, columns), x[:, 1:]),
            "contiguous updates": ((rows[:2], x[1:] * 0), x[1:]),  # y: rows 1, 2; 1 written
            "indices": ((rows, x[:, :2]), apart),
        }[views]
        expected = table.copy()
        positions = np.broadcast_arrays(*(to_numpy(i).copy() for i in index))
        for at_position, value in zip(
            zip(*(p.reshape(-1) for p in positions)), to_numpy(y).copy().reshape(-1)
        ):
            expected[at_position] = value + (expected[at_position] if method == "add" else 0)
        with element_steps() as taken:
            got = getattr(indexops.at(x)[index], method)(y, copy=False)
        assert got is x
        np.testing.assert_array_equal(to_numpy(x), expected)
        assert taken == [f"{library} combine_elements"]


def test_numpy_byte_orders_and_extension_dtypes():
    """NumPy's step keeps a big-endian ``x``'s dtype and byte order, and bfloat16's
    rounding after each add (repeats in order), as the generic path does."""
    rng = np.random.default_rng(3)
    index = (np.arange(8)[:, None], rng.integers(0, 4, (8, 6)))
    for dtype in (">f8", ">i4", "bfloat16", "float8_e4m3fn"):
        table = (rng.standard_normal((8, 4)) * 4).astype(dtype)
        values = (rng.standard_normal((8, 6)) * 4).astype(dtype)
        with generic_only():
            expected = indexops.at(table)[index].add(values)
        with element_steps() as taken:
            got = indexops.at(table)[index].add(values)
            written = indexops.at(table)[index].set(values)
            read = indexops.at(table)[index].get()
            one = indexops.at(table)[np.array(3), np.array(-1)].get()  # (0-d, from the end)
        assert got.dtype == expected.dtype == table.dtype
        np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))
        with generic_only():
            expected = indexops.at(table)[index].set(values)
        assert written.dtype == table.dtype
        np.testing.assert_array_equal(written.view(np.uint8), expected.view(np.uint8))
        np.testing.assert_array_equal(read.astype(np.float64), table[index].astype(np.float64))
        assert read.dtype == table.dtype
        assert type(one) is np.ndarray and one.shape == () and one.dtype == table.dtype
        assert one.astype(np.float64) == table[3, -1].astype(np.float64)
        assert taken == ["numpy combine_elements"] * 2 + ["numpy take_elements"] * 2


def _replaced_in_order(table: np.ndarray, index: tuple, values: np.ndarray) -> np.ndarray:
    """``table`` with ``table[index] = values`` written one element at a time, in order."""
    out = table.copy()
    positions = np.broadcast_arrays(*index)
    for at_position, value in zip(zip(*(p.reshape(-1) for p in positions)), values.reshape(-1)):
        out[at_position] = value
    return out


@pytest.mark.parametrize("kernels", [False, True], ids=["numpy", "kernels"])
@pytest.mark.parametrize("size", [1, 5, 511, 512, 513, 4096])
def test_a_replace_leaves_each_element_its_last_write(size, kernels):
    """``put_in_order`` by the kernels' pass, and without them by a scatter of positions up
    to ``OWNERS_PER_WRITE`` elements per write and by a sort above: each element holds
    the value of its last write (8 writes, all repeated, none, or some), in whatever order
    ``put`` would apply repeats; a big-endian ``out`` keeps its byte order, read-only
    values and values that view ``out`` are read before the write."""
    from indexops._backends._host import OWNERS_PER_WRITE, load_kernels, put_in_order

    compiled = load_kernels() if kernels else None
    if kernels and compiled is None:
        pytest.skip("numba is not installed (the fast extra)")
    assert OWNERS_PER_WRITE * 8 == 512
    rng = np.random.default_rng(size)
    drawn = [np.full(8, size - 1), np.arange(8) % size, rng.integers(0, size, 8)]
    for numbers, dtype in itertools.product(drawn, ("float64", ">f8")):
        out = np.arange(size, dtype=dtype)
        expected = out.copy()
        read_only = rng.standard_normal(8).astype(dtype)
        read_only.flags.writeable = False
        viewing = out[:8] if size >= 8 else np.zeros(8, dtype)  # (out's own elements)
        for values in (read_only, viewing):
            for number, value in zip(numbers.tolist(), values.copy().tolist()):
                expected[number] = value
            if compiled is not None:
                assert compiled.put_in_order(out, numbers, values)  # (taken)
            else:
                with without_kernels():
                    put_in_order(out, numbers, values)
            np.testing.assert_array_equal(out, expected)
            assert out.dtype == np.dtype(dtype)
    if compiled is not None:  # a number outside: refused before the first write
        with pytest.raises(IndexError):
            compiled.put_in_order(out, np.array([0, size]), np.ones(2, out.dtype))
        np.testing.assert_array_equal(out, expected)
        strided = np.zeros((size + 1, 2))[:, 0]  # (not C-contiguous: not taken)
        assert not compiled.put_in_order(strided, np.array([0]), np.ones(1))


def test_the_pairs_pass_writes_in_order_what_numpy_assigns():
    """``replace_pairs`` (two index arrays into a 2-D ``x``, compiled): the writes of
    ``x[rows, columns] = values`` in order (the last of a repeated element wins), entries
    from the end counted, for broadcast, 1-D, 0-d, int32, read-only and strided index
    arrays, read-only values, a big-endian and an int64 ``x`` whose own memory holds the
    indices or the values; an entry outside leaves ``x`` as it was; arrays it does not
    take (3-D indices, uint64 ones, a strided ``x``, values of another dtype or shape)
    are refused with nothing written."""
    from indexops._backends._host import load_kernels

    compiled = load_kernels()
    if compiled is None:
        pytest.skip("numba is not installed (the fast extra)")
    rng = np.random.default_rng(8)

    def expected_of(x, rows, columns, values):
        expected = x.copy()
        rows, columns = np.broadcast_arrays(rows, columns)
        for r, c, v in zip(rows.reshape(-1), columns.reshape(-1), values.copy().reshape(-1)):
            expected[r, c] = v
        return expected

    read_only = rng.integers(-5, 5, (6, 1))
    read_only.flags.writeable = False
    strided = rng.integers(0, 5, (6, 8))[:, ::2]
    cases = [
        (np.arange(6)[:, None], rng.integers(-5, 5, (6, 4))),
        (rng.integers(-6, 6, 7), rng.integers(0, 5, 7).astype(np.int32)),
        (np.array(-1), np.array(3)),
        (read_only, strided),
    ]
    for (rows, columns), dtype in itertools.product(cases, ("float64", ">f4", "int16")):
        x = (rng.standard_normal((6, 5)) * 9).astype(dtype)
        shape = np.broadcast_shapes(rows.shape, columns.shape)
        values = np.array(rng.standard_normal(shape) * 9, dtype=dtype)
        values.flags.writeable = False
        expected = expected_of(x, rows, columns, values)
        assert compiled.combine_pairs(x, rows, columns, values, None)
        np.testing.assert_array_equal(x, expected)
    x = np.arange(30, dtype=np.int64).reshape(6, 5) % 5  # (its own rows and columns)
    expected = expected_of(x, x[:, :1], x[:1, :], x[:, ::-1])
    assert compiled.combine_pairs(x, x[:, :1], x[:1, :], x[:, ::-1], None)
    np.testing.assert_array_equal(x, expected)
    x = np.arange(30.0).reshape(6, 5)
    for refused in (
        (np.array([[0, 6]]), np.array([[1, 1]]), np.ones((1, 2))),  # outside
        (np.array([[0, -7]]), np.array([[1, 1]]), np.ones((1, 2))),
        (np.zeros((1, 1, 2), np.int64), np.zeros(2, np.int64), np.ones((1, 1, 2))),
        (np.zeros(2, np.uint64), np.zeros(2, np.int64), np.ones(2)),
        (np.zeros(2, np.int64), np.zeros(2, np.int64), np.ones(2, np.float32)),
        (np.zeros(2, np.int64), np.zeros(2, np.int64), np.ones(3)),
    ):
        assert not compiled.combine_pairs(x, *refused, None)
        np.testing.assert_array_equal(x, np.arange(30.0).reshape(6, 5))
    assert not compiled.combine_pairs(
        np.zeros((6, 10))[:, ::2], np.zeros(2, np.int64), np.zeros(2, np.int64), np.ones(2), None
    )


@pytest.mark.parametrize("method", ["add", "multiply", "min", "max"])
def test_the_pairs_pass_combines_in_order_as_the_general_path(method):
    """``combine_pairs`` with each combiner: the general path's values (repeats in order,
    NaN, infinities and signed zeros, integers wrapping), for the types compiled ahead;
    others (int16, float16, big-endian, complex min) refused with nothing written."""
    from indexops._backends._host import load_kernels
    from indexops._validate.combiners import Named

    compiled = load_kernels()
    if compiled is None:
        pytest.skip("numba is not installed (the fast extra)")
    how = {"add": Named.ADD, "multiply": Named.MUL, "min": Named.MIN, "max": Named.MAX}[method]
    rng = np.random.default_rng(12)
    rows, columns = np.arange(-8, 8)[:, None], rng.integers(-5, 5, (16, 6))  # (repeats)
    for dtype in PAIR_TYPES:
        x = table_values(dtype, (16, 5), seed=1)
        values = table_values(dtype, (16, 6), seed=2)
        if method == "multiply" and np.dtype(dtype).kind == "f":
            values = (np.arange(96).reshape(16, 6) % 3 - 1).astype(dtype)  # (exact products)
        with generic_only(), np.errstate(invalid="ignore", over="ignore"):
            expected = getattr(indexops.at(x)[rows, columns], method)(values)
        assert compiled.combine_pairs(x, rows, columns, values, how)
        np.testing.assert_array_equal(comparable(x), comparable(expected))
    for dtype in ("int16", "float16", ">f8", "complex64"):
        x = np.zeros((16, 5), dtype)
        assert not compiled.combine_pairs(x, rows, columns, np.ones((16, 6), dtype), how)
        assert not x.any()


def ieee_in_order(method: str, x: np.ndarray, index: tuple, values: np.ndarray) -> np.ndarray:
    """``x`` with ``values`` combined into ``x[index]`` one at a time in row-major order by
    IEEE-754's ``minimum`` or ``maximum``: NaN wins, and of two zeros -0 (min) or +0 (max)."""
    out = x.astype(np.float64)
    positions = np.broadcast_arrays(*index)
    for k in np.ndindex(values.shape):
        at = tuple(int(p[k]) for p in positions)
        a, b = float(out[at]), float(values[k])
        if np.isnan(a) or np.isnan(b):
            out[at] = np.nan
        elif a == b == 0:
            negative = (
                np.signbit(a) or np.signbit(b)
                if method == "min"
                else np.signbit(a) and np.signbit(b)
            )
            out[at] = -0.0 if negative else 0.0
        else:
            out[at] = min(a, b) if method == "min" else max(a, b)
    return out.astype(x.dtype)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("kernels", [False, True], ids=["without kernels", "kernels"])
@pytest.mark.parametrize("method", ["min", "max"])
def test_element_min_and_max_give_ieee_zeros_and_nan(library, kernels, method):
    """Min and max of repeated elements holding zeros of both signs, NaN and others, in
    every order, through the element step (``compare_at`` without the kernels, and for
    float16 with them; the kernels' pass for float32 and float64): IEEE-754's result,
    bit for bit but NaN's payload, as a transcription in order and the generic path give
    it, into a copy and in place, negative entries counted from the end."""
    from indexops._backends._host import load_kernels

    if kernels and load_kernels() is None:
        pytest.skip("numba is not installed (the fast extra)")
    rng = np.random.default_rng(21)
    specials = np.array([0.0, -0.0, np.nan, 1.0, -1.0])
    rows = np.arange(-6, 6)[:, None]
    columns = rng.integers(-4, 4, (12, 9))  # (each element written about twice)
    for dtype, copy in itertools.product(("float16", "float32", "float64"), (True, False)):
        table = rng.choice(specials, (12, 4)).astype(dtype)
        values = rng.choice(specials, (12, 9)).astype(dtype)
        expected = ieee_in_order(method, table, (rows, columns), values)
        x, x_generic, *ids = arrays(library, table.copy(), table.copy(), rows, columns)
        (y,) = arrays(library, values)
        with generic_only():
            generic = getattr(indexops.at(x_generic)[tuple(ids)], method)(y, copy=copy)
        runs = contextlib.nullcontext() if kernels else without_kernels()
        with runs, element_steps() as taken:
            got = getattr(indexops.at(x)[tuple(ids)], method)(y, copy=copy)
        assert taken == [f"{library} combine_elements"]
        assert (got is x) == (not copy)
        for result in (to_numpy(got), to_numpy(generic)):
            nan = np.isnan(expected)
            np.testing.assert_array_equal(np.isnan(result), nan)
            np.testing.assert_array_equal(result[~nan], expected[~nan])
            np.testing.assert_array_equal(np.signbit(result[~nan]), np.signbit(expected[~nan]))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float8_e4m3fn", "uint16"])
def test_torch_reads_and_adds_of_its_own_types(dtype):
    """torch's ``take`` has no kernel for float8 or the wide unsigned types, and NumPy
    no type for bfloat16 and float8: their bits are read and replaced; bfloat16 and
    float16 are added as the general path adds them."""
    torch_dtype = getattr(torch, dtype)
    table = torch.arange(40, dtype=torch.float32).reshape(8, 5)
    x = table.to(torch.int64).to(torch_dtype) if dtype == "uint16" else table.to(torch_dtype)
    index = (torch.arange(8)[:, None], torch.tensor([[4, 0, 4]] * 8))
    with element_steps() as taken:
        read = indexops.at(x)[index].get()
    assert read.dtype == torch_dtype
    assert torch.equal(read.view(torch.uint8), x[index].view(torch.uint8))
    assert taken == ["torch take_elements"]
    new = x[:, :3].flip(0).contiguous()  # (another element's bits in each)
    with generic_only():
        expected = indexops.at(x)[index].set(new)
    with element_steps() as taken:
        got = indexops.at(x)[index].set(new)  # (the last of each repeated column)
    assert got.dtype == torch_dtype
    assert torch.equal(got.view(torch.uint8), expected.view(torch.uint8))
    assert taken == ["torch combine_elements"]
    if dtype in ("bfloat16", "float16"):
        y = torch.full((8, 3), 0.5, dtype=torch_dtype)
        with generic_only():
            expected = indexops.at(x)[index].add(y)
        with element_steps() as taken:
            got = indexops.at(x)[index].add(y)
        assert torch.equal(got.to(torch.float64), expected.to(torch.float64))
        assert taken == ["torch combine_elements"]


def test_torch_autograd_and_strided_x_take_the_general_path():
    """A write autograd records, and one in place into a strided ``x`` (no flat view),
    go to the general path: the same values, the gradient of the read."""
    x = torch.arange(24.0).reshape(4, 6).requires_grad_()
    index = (torch.arange(4)[:, None], torch.tensor([[1, 1, 5]] * 4))
    y = torch.ones(4, 3)
    with element_steps() as taken:
        got = indexops.at(x)[index].add(y)
        got.sum().backward()
    assert taken == []
    assert torch.equal(x.grad, torch.ones(4, 6))
    strided = torch.arange(48.0).reshape(4, 12)[:, ::2]
    expected = strided.clone()
    expected.index_put_(index, y, accumulate=True)
    with element_steps() as taken:
        indexops.at(strided)[index].add(y, copy=False)
    assert torch.equal(strided, expected)
    assert taken == []


@pytest.mark.parametrize("library", LIBRARIES)
def test_element_steps_from_many_threads(library):
    """Reads, adds, maxima and replaces (repeated elements) of one signature from eight threads
    switching every microsecond, in place into each thread's own ``x`` and into copies,
    replaces and maxima with the kernels and without: every result the serial one."""
    rng = np.random.default_rng(11)
    table = rng.standard_normal((32, 8))
    index = (np.arange(32)[:, None], rng.integers(0, 8, (32, 4)))
    values = rng.standard_normal((32, 4))
    expected = table.copy()
    np.add.at(expected, index, values)
    replaced = _replaced_in_order(table, index, values)
    largest = table.copy()
    np.maximum.at(largest, index, values)  # (no zeros, no NaN: IEEE's max and NumPy's agree)

    def work(k: int):
        x, r, c, y = arrays(library, table.copy(), *index, values)
        read = indexops.at(x)[r, c].get()
        with contextlib.nullcontext() if k % 4 < 2 else without_kernels():
            written = to_numpy(indexops.at(x)[r, c].set(y, copy=k % 2 == 0)).copy()
            x = arrays(library, table.copy())[0]
            maxed = to_numpy(indexops.at(x)[r, c].max(y, copy=k % 2 == 0)).copy()
        x = arrays(library, table.copy())[0]
        added = indexops.at(x)[r, c].add(y, copy=k % 2 == 0)
        return to_numpy(read), written, maxed, to_numpy(added)

    with element_steps() as taken:
        results = map_in_threads(work, range(64), threads=8)
    for read, written, maxed, added in results:
        np.testing.assert_array_equal(read, table[index])
        np.testing.assert_array_equal(written, replaced)
        np.testing.assert_array_equal(maxed, largest)
        np.testing.assert_array_equal(added, expected)
    assert len(taken) == 256  # (max: by the kernels' pass, or compare_at without them)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("count", [1023, 1024, 4096, 4097])
def test_element_steps_stop_where_the_kernels_cost_less(library, count):
    """Reads and replaces up to ``ELEMENT_STEPS_MAX_ELEMENTS`` elements take the
    library's step, and torch's adds; NumPy's adds by ``ufunc.at`` only below
    ``KERNEL_MIN_ELEMENTS``. Either side, the generic path's values."""
    from indexops._backends._host import ELEMENT_STEPS_MAX_ELEMENTS, KERNEL_MIN_ELEMENTS

    rng = np.random.default_rng(count)
    table = rng.standard_normal((count, 8))
    index = (rng.integers(0, count, (count, 1)), rng.integers(0, 8, (count, 1)))  # (repeats)
    values = rng.standard_normal((count, 1))
    x, r, c, y = arrays(library, table, *index, values)
    calls = (
        lambda: indexops.at(x)[r, c].get(),
        lambda: indexops.at(x)[r, c].add(y),
        lambda: indexops.at(x)[r, c].set(y),
    )
    with without_kernels():  # (the replace's other way)
        np.testing.assert_array_equal(
            to_numpy(calls[2]()), _replaced_in_order(table, index, values)
        )
    with generic_only():
        expected = [call() for call in calls]
    with element_steps() as taken:
        got = [call() for call in calls]
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    reads = count <= ELEMENT_STEPS_MAX_ELEMENTS
    adds = reads and (library == "torch" or count < KERNEL_MIN_ELEMENTS)
    writes = adds + reads
    assert taken == [f"{library} take_elements"] * reads + [f"{library} combine_elements"] * writes
