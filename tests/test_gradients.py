"""Gradients through every combiner of ``scatter`` and ``at``: torch's autograd (eagerly,
on the device paths) and ``jax.grad``, against the loops of tests/reference/gradients.py
and ``torch.autograd.gradcheck``, with zeros of both signs, ties, repeated targets,
dropped updates, rows no update reaches, no updates at all and zero-size tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from backends import Backend
from helpers import ROW_SCATTER, to_numpy
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.gradients import row_scatter_gradients

import indexops

AUTOGRAD = pytest.mark.backends(lambda backend: backend.library == "torch" and backend.has_values)
COMBINERS = ("add", "mul", "min", "max", None)
METHODS = {"add": "add", "mul": "multiply", "min": "min", "max": "max", None: "set"}
VALUES = (-0.0, 0.0, 1.0, -1.0, 2.0, 0.5)  # zeros of both signs, and ties
TOLERANCE = {"float64": 1e-12, "float32": 1e-6, "bfloat16": 1e-2}


def write(x: Any, rows: Any, updates: Any, combiner: str | None, form: str, **options: Any) -> Any:
    """``updates[k]`` into row ``rows[k]`` of ``x`` (rows of a 2-D ``x``, elements of a
    1-D one: torch's element scatter) by ``scatter`` or by ``at``."""
    if form == "scatter":
        attributes = ROW_SCATTER if x.ndim == 2 else {**ROW_SCATTER, "update_window_dims": ()}
        return indexops.scatter(
            x, rows[:, None], updates, update_computation=combiner, **options, **attributes
        )
    return getattr(indexops.at(x)[rows], METHODS[combiner])(updates, **options)


def kept_rows(rows: list[int], n: int, form: str) -> list[int | None]:
    """Each update's row, or None where it is dropped: ``at`` counts -1 from the end, a
    scatter drops it."""
    if form == "at":
        rows = [r + n if r < 0 else r for r in rows]
    return [r if 0 <= r < n else None for r in rows]


@st.composite
def row_writes(draw: st.DrawFn) -> tuple[np.ndarray, list[int], np.ndarray, np.ndarray, bool]:
    """A table, rows (repeated, dropped, none at all), updates and the weights of the
    result, of values that tie and zeros of both signs; tables of width 0 stand for 1-D
    ones (a width of 1, read as elements)."""
    n, width, count = draw(st.integers(1, 3)), draw(st.integers(0, 2)), draw(st.integers(0, 5))

    def values(shape: tuple[int, ...], among: tuple[float, ...] = VALUES) -> np.ndarray:
        size = shape[0] * shape[1]
        drawn = draw(st.lists(st.sampled_from(among), min_size=size, max_size=size))
        return np.array(drawn, dtype=np.float64).reshape(shape)

    rows = draw(st.lists(st.integers(-1, n), min_size=count, max_size=count))
    weights = values((n, max(width, 1)), (1.0, 2.0, -3.0))
    return values((n, max(width, 1))), rows, values((count, max(width, 1))), weights, width == 0


@AUTOGRAD
@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(
    case=row_writes(),
    combiner=st.sampled_from(COMBINERS),
    form=st.sampled_from(("scatter", "at")),
    dtype=st.sampled_from(tuple(TOLERANCE)),
    in_place=st.booleans(),
)
def test_gradients_of_every_combiner_are_the_loops(xp, case, combiner, form, dtype, in_place):
    import torch

    table, rows, updates, weights, elements = case
    want = row_scatter_gradients(
        table, kept_rows(rows, table.shape[0], form), updates, combiner, weights
    )
    arrays = (table[:, 0], updates[:, 0]) if elements else (table, updates)
    leaves = [xp.astype(xp.asarray(a), getattr(torch, dtype)).requires_grad_() for a in arrays]
    x = leaves[0] * 1 if in_place else leaves[0]  # a leaf that requires grad is not written
    rows_array = xp.asarray(rows, dtype=xp.int64)
    result = write(x, rows_array, leaves[1], combiner, form, copy=not in_place)
    assert result is x or not in_place
    weights = weights[:, 0] if elements else weights
    loss = (result * xp.astype(xp.asarray(weights), result.dtype)).sum()
    got = torch.autograd.grad(loss, leaves)  # every leaf in the graph, updates or not
    for grad, wanted in zip(got, want, strict=True):
        np.testing.assert_allclose(
            to_numpy(grad).astype(np.float64).reshape(wanted.shape),
            wanted,
            rtol=TOLERANCE[dtype],
            atol=TOLERANCE[dtype],
        )


# Two of the values tie at most (central differences split a tie of two evenly, as the
# backward does): row 0 has +0.0 and -0.0 and repeats, row 1 gets no update, row 2 has a
# single zero (mul: the true derivative there), row 3 is outside (dropped)
TABLE = [[0.0, 1.0], [-0.0, 2.0], [0.5, -0.0]]
ROWS = [0, 2, 0, 3, 2]
UPDATES = [[-0.0, 1.5], [0.0, 0.5], [1.0, 2.0], [9.0, 9.0], [2.0, -1.0]]


def old_times_new_plus_new(old: Any, new: Any) -> Any:
    return old * new + new


@AUTOGRAD
@pytest.mark.parametrize("combiner", [*COMBINERS, "callable"])
def test_gradcheck_of_every_combiner(xp, combiner):
    """(``at`` makes the same scatter, whose gradients the drawn test above compares.)"""
    import torch

    rows = xp.asarray(ROWS, dtype=xp.int64)
    leaves = [xp.asarray(a, dtype=xp.float64).requires_grad_() for a in (TABLE, UPDATES)]
    how = old_times_new_plus_new if combiner == "callable" else combiner

    def written(table: Any, updates: Any) -> Any:
        return write(table, rows, updates, how, "scatter")

    assert torch.autograd.gradcheck(written, leaves)


@pytest.mark.backends(Backend.JAX)
def test_jax_grad_of_every_combiner_is_the_loop(xp):
    """jax.grad splits ties evenly as torch does; JAX differentiates a scatter-multiply
    only of unique rows (docs/tracing.md), so mul drops the repeats. (``at`` makes the
    same scatter, so one form shows it; under jit: eager JAX compiles each primitive of
    the backward pass on its own, which costs several times more.)"""
    import jax

    weights = np.array([[1.0, -3.0], [2.0, 1.0], [2.0, 2.0]])
    for combiner in COMBINERS:
        rows = np.array([0, 2, 0, 3, 0, 2])  # row 0 three times: a tie of three
        updates = np.concatenate([UPDATES, [[0.0, 1.0]]])
        if combiner == "mul":
            rows, updates = rows[[0, 1, 3]], updates[[0, 1, 3]]

        def loss(x: Any, y: Any, combiner: Any = combiner, rows: Any = rows) -> Any:
            unique = combiner == "mul"
            written = write(x, xp.asarray(rows), y, combiner, "scatter", unique_indices=unique)
            return (written * weights).sum()

        want = row_scatter_gradients(
            TABLE, kept_rows(list(rows), 3, "scatter"), updates, combiner, weights
        )
        got = jax.jit(jax.grad(loss, argnums=(0, 1)))(xp.asarray(TABLE), xp.asarray(updates))
        for grad, wanted in zip(got, want, strict=True):
            np.testing.assert_allclose(np.asarray(grad), wanted, atol=1e-12)


@AUTOGRAD
@pytest.mark.parametrize("combiner", ["add", "mul", "min", "max", None, "callable"])
def test_recorded_writes_change_no_tensor_in_place(xp, combiner):
    """Where autograd records, each write makes a new tensor: autograd's backward and
    torch.compile's graphs keep the tensors they read, and one written in place
    afterwards failed the backward (min and max into a zero; a callable on repeated
    rows under plain torch.compile)."""
    import torch
    from torch.overrides import TorchFunctionMode

    written: list[str] = []

    class InPlaceWrites(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            name = getattr(func, "__name__", "")
            target = args[0] if args else None
            in_place = name == "__setitem__" or (name.endswith("_") and not name.endswith("__"))
            if in_place and isinstance(target, torch.Tensor) and target.requires_grad:
                written.append(name)
            return func(*args, **(kwargs or {}))

    table = xp.asarray(TABLE, dtype=xp.float64).requires_grad_()
    rows = xp.asarray([0, 2, 0, 1, 2], dtype=xp.int64)
    how = old_times_new_plus_new if combiner == "callable" else combiner
    with InPlaceWrites():
        result = indexops.scatter(
            table, rows[:, None], table[[1, 0, 2, 1, 0]] * 2, update_computation=how, **ROW_SCATTER
        )
    assert not written
    result.sum().backward()


# -- nothing written: no updates, every update dropped, a zero-size table ---------------------


@AUTOGRAD
@pytest.mark.parametrize("form", ["scatter", "at"])
@pytest.mark.parametrize("combiner", COMBINERS)
@pytest.mark.parametrize(
    ("shape", "rows"),
    [((3, 4), []), ((3, 4), [5, 3]), ((0, 4), []), ((0, 4), [0, 1]), ((0,), [0, 1])],
    ids=["no updates", "all dropped", "zero-size, no updates", "zero-size", "zero-size 1-D"],
)
def test_writes_of_nothing_keep_the_updates_in_the_graph(xp, combiner, form, shape, rows):
    """As torch's own ``index_add`` of no rows: the result requires grad, and the
    updates' gradient is zeros (it was missing, and backward raised)."""
    updates = xp.ones((len(rows), *shape[1:]), dtype=xp.float64).requires_grad_()
    table = xp.zeros(shape, dtype=xp.float64)
    result = write(table, xp.asarray(rows, dtype=xp.int64), updates, combiner, form)
    assert result.requires_grad and tuple(result.shape) == shape
    (result * 2).sum().backward()
    assert updates.grad is not None and not bool(updates.grad.any())


@AUTOGRAD
def test_zero_elements_keep_the_graph_as_pytorch_scatter_tests(xp):
    """Upstream pytorch_scatter's test_zero_elements, ported: reductions of a [0, 0, 0, 16]
    source along dim 0 and the gather back, each with a backward pass."""
    import torch

    source = xp.asarray(torch.randn(0, 0, 0, 16, dtype=torch.float64)).requires_grad_()
    index = xp.zeros((0,), dtype=xp.int64)
    for method in ("add", "min", "max"):
        out = getattr(indexops.at(xp.zeros((0, 0, 0, 16), dtype=xp.float64))[index], method)(source)
        out.backward(torch.randn_like(out))
        assert tuple(out.shape) == (0, 0, 0, 16)
    out = indexops.at(source)[index].get()
    out.backward(torch.randn_like(out))
    assert tuple(out.shape) == (0, 0, 0, 16)


# -- at with a basic index (ints and slices: no element repeats) --------------------------

BASIC_KEYS = {"rows 1:3": (slice(1, 3),), "row 2": (2,), "column 0": (slice(None), 0)}
# a view of x of each key's shape, apart from its elements in part
OVERLAPPING = {"rows 1:3": lambda x: x[0:2], "row 2": lambda x: x[0], "column 0": lambda x: x[:, 1]}
BASIC_METHODS = {
    "multiply": lambda target, y: target.multiply(y),
    "divide": lambda target, y: target.divide(y),
    "power": lambda target, y: target.power(y),
    "apply": lambda target, y: target.apply(lambda old, new: old / new + old * new, y),
}


def _basic_rows(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The same elements as index arrays (NumPy's own reading of the key)."""
    return tuple(np.arange(3)[k] if isinstance(k, slice) else np.asarray(k) for k in key)


@pytest.mark.backends("torch")
@pytest.mark.parametrize("key", sorted(BASIC_KEYS))
@pytest.mark.parametrize("method", sorted(BASIC_METHODS))
@pytest.mark.parametrize("in_place", [False, True])
def test_torch_basic_index_updates_give_the_index_arrays_gradients(key, method, in_place):
    """at(x)[ints and slices] with a function of the old values (multiply, divide, power,
    apply): autograd keeps the old values and y, which the write into x's view changed
    (backward raised "modified by an inplace operation"); in place into a non-leaf too,
    and with y a view of the same tensor. The gradients of the same elements taken by
    index arrays."""
    import torch

    def grads(index: tuple[Any, ...], overlapping: bool) -> list[Any]:
        a = torch.arange(1.0, 7.0, dtype=torch.float64).reshape(3, 2).requires_grad_()
        b = torch.full((3, 2), 1.5, dtype=torch.float64).requires_grad_()
        x = a * 1.0
        y = OVERLAPPING[key](x) if overlapping else b[BASIC_KEYS[key]]
        target = indexops.at(x)[index]
        out = BASIC_METHODS[method](_InPlace(target) if in_place else target, y)
        (out * torch.arange(6.0, dtype=torch.float64).reshape(3, 2)).sum().backward()
        return [a.grad, b.grad]

    as_arrays = tuple(torch.from_numpy(r) for r in _basic_rows(BASIC_KEYS[key]))
    for overlapping in (False, True):
        got = grads(BASIC_KEYS[key], overlapping)
        wanted = grads(as_arrays, overlapping)
        for g, w in zip(got, wanted, strict=True):
            torch.testing.assert_close(g, w, rtol=0, atol=1e-12)


class _InPlace:
    """An ``At`` whose update methods write in place (``copy=False``)."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.target, name)
        return lambda *args, **kwargs: method(*args, copy=False, **kwargs)


@pytest.mark.backends("jax")
@pytest.mark.parametrize("key", sorted(BASIC_KEYS))
@pytest.mark.parametrize("method", sorted(BASIC_METHODS))
def test_jax_basic_index_updates_differentiate_as_jax_at(key, method):
    """jax.grad of at(x)[ints and slices] with multiply, divide, power and apply, eagerly
    and under jit: a basic index repeats no element, so the scatter is unique (JAX's
    scatter_mul of possible repeats, and the loop of a function's passes, have no
    gradient: they raised); the gradients of JAX's own x.at[key]."""
    import jax
    import jax.numpy as jnp

    key_ = BASIC_KEYS[key]
    theirs = {
        "multiply": lambda t, y: t.multiply(y),
        "divide": lambda t, y: t.divide(y),
        "power": lambda t, y: t.power(y),
        "apply": lambda t, y: t.set(t.get() / y + t.get() * y),
    }

    def ours(x: Any, y: Any) -> Any:
        return BASIC_METHODS[method](indexops.at(x)[key_], y).sum()

    def jax_at(x: Any, y: Any) -> Any:
        return theirs[method](x.at[key_], y).sum()

    x = jnp.arange(1.0, 7.0).reshape(3, 2)
    y = jnp.full(x[key_].shape, 1.5)
    wanted = jax.grad(jax_at, argnums=(0, 1))(x, y)
    for function in (jax.grad(ours, argnums=(0, 1)), jax.jit(jax.grad(ours, argnums=(0, 1)))):
        for g, w in zip(function(x, y), wanted, strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12)
