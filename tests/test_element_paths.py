"""Element gathers and scatters (GatherElements, ScatterElements, ``take_along_axis``,
``torch.gather``, ``scatter_reduce_``) on their fast paths equal the generic path (on
NumPy arrays: torch's generic path has no kernels for uint16 and wider unsigned types).

A gather or scatter is an *element* one when every operand dim is a batching dim or its
one start dim: each index entry addresses one element. NumPy and torch read those with
their own element gather, torch writes them with its element scatter; the draws cover
every layout of the index (its batch dims in any order, the index vector dim anywhere),
every mode, indices outside on both sides, duplicates, and dtypes with signed zeros, NaN,
unsigned types torch has no kernels for, and bool.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import from_numpy, to_numpy
from hypothesis import given
from hypothesis import strategies as st
from reference import scatter as scatter_reference

import indexops
from indexops._ops.gather import _plan as gather_plan
from indexops._testing import generic_only

HOST_LIBRARIES = pytest.mark.backends(
    lambda backend: backend.library in ("numpy", "torch") and backend.has_values
)
GATHER_DTYPES = ("float32", "float64", "int32", "uint16", "uint64", "bool")
SCATTER_DTYPES = ("float32", "float64", "int32", "uint16", "uint8")
INDEX_DTYPES = ("int64", "int32", "uint8", "uint64")
SPECIALS = (np.nan, np.inf, -np.inf, 1.5, -2.25)


@dataclasses.dataclass(frozen=True)
class ElementCase:
    """An element gather or scatter: ``axis`` is read along, the index's batch axis ``j``
    runs along operand dim ``order[j]``, its vector dim of size 1 sits at ``vector_dim``."""

    shape: tuple[int, ...]
    axis: int
    order: tuple[int, ...]
    vector_dim: int
    count: int  # index entries along the axis

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return tuple(self.count if d == self.axis else self.shape[d] for d in self.order)

    @property
    def index_shape(self) -> tuple[int, ...]:
        shape = list(self.batch_shape)
        shape.insert(self.vector_dim, 1)
        return tuple(shape)

    def _batching(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The batching pairs: operand dims in order, and the index dims along them."""
        operand_dims = tuple(d for d in range(len(self.shape)) if d != self.axis)
        index_dims = tuple(
            j + (j >= self.vector_dim) for j in (self.order.index(d) for d in operand_dims)
        )
        return operand_dims, index_dims

    def gather_attrs(self) -> dict:
        operand_dims, index_dims = self._batching()
        return {
            "offset_dims": (),
            "collapsed_slice_dims": (self.axis,),
            "start_index_map": (self.axis,),
            "index_vector_dim": self.vector_dim,
            "slice_sizes": (1,) * len(self.shape),
            "operand_batching_dims": operand_dims,
            "start_indices_batching_dims": index_dims,
        }

    def scatter_attrs(self) -> dict:
        operand_dims, index_dims = self._batching()
        return {
            "update_window_dims": (),
            "inserted_window_dims": (self.axis,),
            "scatter_dims_to_operand_dims": (self.axis,),
            "index_vector_dim": self.vector_dim,
            "input_batching_dims": operand_dims,
            "scatter_indices_batching_dims": index_dims,
        }


@st.composite
def element_cases(draw: st.DrawFn) -> ElementCase:
    rank = draw(st.integers(2, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    return ElementCase(
        shape=shape,
        axis=draw(st.integers(0, rank - 1)),
        order=tuple(draw(st.permutations(range(rank)))),
        vector_dim=draw(st.integers(0, rank)),
        count=draw(st.integers(1, 6)),
    )


def values_of(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, zeros: bool):
    """Small integers (duplicates meet); floats with NaN, infinities and, where ``zeros``,
    zeros of both signs."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    values = rng.integers(1, 9, size=shape).astype(dtype)
    if values.dtype.kind == "f":
        specials = SPECIALS + ((0.0, -0.0) if zeros else ())
        special = rng.random(shape) < 0.4
        values[special] = rng.choice(np.array(specials, dtype=dtype), size=int(special.sum()))
    return values


def indices_of(rng, case: ElementCase, dtype: str, inside: bool, unique: bool) -> np.ndarray:
    """Indices along the axis (in the index's layout): in range, or some 3 outside on
    either side (none below 0 for unsigned dtypes); distinct per line where ``unique``
    (``case.count`` at most the axis' size)."""
    dim = case.shape[case.axis]
    batch_axis = case.order.index(case.axis)
    if unique:  # the first entries of a shuffle of each line
        assert case.count <= dim
        lines = list(case.batch_shape)
        lines[batch_axis] = dim
        starts = np.argsort(rng.random(lines), axis=batch_axis)
        starts = np.take(starts, np.arange(case.count), axis=batch_axis)
    else:
        low = 0 if inside or dtype.startswith("u") else -3
        starts = rng.integers(low, dim + (0 if inside else 3), size=case.batch_shape)
    return starts.astype(dtype).reshape(case.index_shape)


def assert_bits_equal(actual, expected) -> None:
    actual, expected = to_numpy(actual), to_numpy(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_equal(actual, expected)
    if actual.dtype.kind == "f":
        numbers = ~np.isnan(expected)
        np.testing.assert_array_equal(np.signbit(actual[numbers]), np.signbit(expected[numbers]))


@HOST_LIBRARIES
@given(
    case=element_cases(),
    dtype=st.sampled_from(GATHER_DTYPES),
    index_dtype=st.sampled_from(INDEX_DTYPES),
    mode=st.sampled_from(["clip", "fill", "promise_in_bounds"]),
    inside=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_element_gather_equals_the_generic_path(xp, case, dtype, index_dtype, mode, inside, seed):
    rng = np.random.default_rng(seed)
    operand = values_of(rng, case.shape, dtype, zeros=True)
    inside = inside or mode == "promise_in_bounds"
    indices = from_numpy(xp, indices_of(rng, case, index_dtype, inside, unique=False))
    fast = indexops.gather(from_numpy(xp, operand), indices, mode=mode, **case.gather_attrs())
    with generic_only():
        generic = indexops.gather(operand, to_numpy(indices), mode=mode, **case.gather_attrs())
    assert_bits_equal(fast, generic)


@HOST_LIBRARIES
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # inf * 0, inf - inf
@given(
    case=element_cases(),
    dtype=st.sampled_from(SCATTER_DTYPES),
    index_dtype=st.sampled_from(INDEX_DTYPES),
    how=st.sampled_from([None, "add", "mul", "min", "max"]),
    mode=st.sampled_from(["drop", "drop_window", "clip", "promise_in_bounds"]),
    flags=st.sampled_from(["outside", "inside", "unique", "no zeros"]),
    seed=st.integers(0, 2**16),
)
def test_element_scatter_equals_the_generic_path(
    xp, backend, case, dtype, index_dtype, how, mode, flags, seed
):
    rng = np.random.default_rng(seed)
    unique = flags == "unique"
    if unique:
        case = dataclasses.replace(case, count=min(case.count, case.shape[case.axis]))
    inside = flags != "outside" or mode == "promise_in_bounds"
    operand = values_of(rng, case.shape, dtype, zeros=flags != "no zeros")
    updates = values_of(rng, case.batch_shape, dtype, zeros=flags != "no zeros")
    indices = from_numpy(xp, indices_of(rng, case, index_dtype, inside, unique))
    options = dict(update_computation=how, mode=mode, unique_indices=unique)
    copy = True if not backend.writable else None
    target = from_numpy(xp, operand.copy())  # written in place: not the generic call's
    fast = indexops.scatter(
        target, indices, from_numpy(xp, updates), **options, **case.scatter_attrs(), copy=copy
    )
    assert (fast is target) == (copy is None)
    with generic_only(), np.errstate(all="ignore"):
        generic = indexops.scatter(
            operand, to_numpy(indices), updates, **options, **case.scatter_attrs()
        )
    assert_bits_equal(fast, generic)


@HOST_LIBRARIES
@pytest.mark.parametrize("how", ["add", "max"])
def test_element_scatter_clips_indices_outside_on_both_sides(xp, how):
    """``mode="clip"`` with a named combiner and indices below 0 and past the end: each
    goes to the first or last element of its line, as the spec clamps starts (the draws
    above meet this case only now and then)."""
    case = ElementCase(shape=(2, 4), axis=1, order=(0, 1), vector_dim=2, count=6)
    operand = np.arange(8, dtype=np.int32).reshape(case.shape)
    starts = np.array([[-3, 0, 3, 4, 9, 1], [5, -1, 2, 2, 7, -8]]).reshape(case.index_shape)
    updates = np.arange(11, 23, dtype=np.int32).reshape(case.batch_shape)  # above operand
    options = dict(update_computation=how, mode="clip", **case.scatter_attrs())
    result = indexops.scatter(
        from_numpy(xp, operand), from_numpy(xp, starts), from_numpy(xp, updates), **options
    )
    assert_bits_equal(result, scatter_reference.scatter(operand, starts, updates, **options))


def test_element_plans_are_the_gathers_with_one_element_per_index():
    """take_along_axis's geometry is an element plan, with the index's batch axes in any
    order; windows, several start dims or extra index dims are not."""
    plan = gather_plan((4, 5), (4, 3, 1), (), (1,), (1,), 2, (1, 1), (0,), (0,))
    assert plan.element_axes == (0, 1)
    plan = gather_plan((4, 5), (1, 3, 4), (), (1,), (1,), 0, (1, 1), (0,), (2,))
    assert plan.element_axes == (1, 0)
    window = gather_plan((4, 5), (4, 3, 1), (2,), (), (1,), 2, (1, 2), (0,), (0,))
    assert window.element_axes is None
    assert gather_plan((4, 5), (3, 2), (), (0, 1), (0, 1), 1, (1, 1), (), ()).element_axes is None
    extra = gather_plan((4, 5), (4, 3, 2, 1), (), (1,), (1,), 3, (1, 1), (0,), (0,))
    assert extra.element_axes is None


@pytest.mark.parametrize(
    "library", [pytest.param(name, marks=pytest.mark.backends(name)) for name in ("numpy", "torch")]
)
def test_element_paths_are_taken(library, monkeypatch):
    """The fast paths run (the equalities above would hold without them too)."""
    if library == "torch":
        torch = pytest.importorskip("torch")
        from indexops._backends._torch import TorchBackend as owner

        convert = torch.from_numpy
    else:
        from indexops._backends._numpy import NumpyBackend as owner

        convert = np.asarray
    calls = []
    for name in ("take_along_axis", "combine_along_axis"):
        original = getattr(owner, name)

        def counted(self, *args, name=name, original=original):
            calls.append(name)
            return original(self, *args)

        monkeypatch.setattr(owner, name, counted)
    case = ElementCase(shape=(3, 4), axis=1, order=(0, 1), vector_dim=2, count=5)
    operand = convert(np.arange(12.0).reshape(3, 4))
    indices = convert(np.array([[[0], [3], [1], [3], [2]]] * 3))
    taken = indexops.gather(operand, indices, **case.gather_attrs())
    assert to_numpy(taken).tolist() == [[0, 3, 1, 3, 2], [4, 7, 5, 7, 6], [8, 11, 9, 11, 10]]
    indexops.scatter(operand, indices, taken, update_computation="add", **case.scatter_attrs())
    expected = ["take_along_axis"] + (["combine_along_axis"] if library == "torch" else [])
    assert calls == expected


@pytest.mark.parametrize(
    ("shape", "index_shape", "axis"),
    [((7,), (13,), 0), ((5, 6), (5, 4), 1), ((5, 6), (8, 6), 0), ((3, 5, 4), (3, 2, 4), 1),
     ((2, 5, 4), (2, 7, 4), 1), ((6, 1, 3), (6, 1, 5), 2)],
)  # fmt: skip
def test_numpy_element_gather_in_blocks(monkeypatch, shape, index_shape, axis):
    """NumPy's element gather takes its flat element numbers block by block along the
    leading dim (blocks of 2 elements here, or of one row where rows are longer):
    np.take_along_axis's values, the last block short."""
    from indexops._backends import _numpy

    monkeypatch.setattr(_numpy, "_ELEMENT_BLOCK", 2)
    blocks = []
    numbers = _numpy._flat_numbers
    monkeypatch.setattr(_numpy, "_flat_numbers", lambda *a: blocks.append(a) or numbers(*a))
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape)
    indices = rng.integers(0, shape[axis], index_shape)
    got = _numpy.NumpyBackend(np).take_along_axis(x, indices, axis)
    np.testing.assert_array_equal(got, np.take_along_axis(x, indices, axis))
    assert len(blocks) > 1
