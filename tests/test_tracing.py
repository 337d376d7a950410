"""Every op under JAX transformations and torch.compile, on meta tensors and CUDA graphs.

The ``jax_jit``, ``torch_device`` and ``torch_meta`` backends run the whole suite traced
or on the device paths; this module covers what they cannot: ``vmap``, ``grad`` against
finite differences, retracing with new shapes, ``checkify``, ``torch.compile`` with
``fullgraph=True`` and CUDA graph capture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import ROW_GATHER, ROW_SCATTER
from reference import scatter_update as scatter_update_reference

import indexops
from indexops._ops import at as at_module
from indexops._testing import device_paths

# -- one call per op, as a function of its arrays ------------------------------------------


def gather(operand: Any, indices: Any, mode: str = "clip", **fill: Any) -> Any:
    return indexops.gather(operand, indices, **ROW_GATHER, slice_sizes=(1, 3), mode=mode, **fill)


def scatter(
    input: Any, indices: Any, updates: Any, how: Any = None, mode: str = "drop", **hints: Any
) -> Any:
    return indexops.scatter(
        input, indices, updates, **ROW_SCATTER, update_computation=how, mode=mode, **hints
    )


def dynamic_slice(operand: Any, starts: Any) -> Any:
    return indexops.dynamic_slice(operand, starts, (2, 2))


def dynamic_update_slice(operand: Any, update: Any, starts: Any) -> Any:
    return indexops.dynamic_update_slice(operand, update, starts)


def slice_scatter(data: Any, updates: Any) -> Any:
    return indexops.slice_scatter(data, updates, [3], [0], [-2])


def scatter_update(cache: Any, slots: Any, tokens: Any) -> Any:
    return indexops.scatter_update(cache, -2, slots, tokens, copy=True)


def at_get(operand: Any, rows: Any) -> Any:
    return indexops.at(operand)[rows[:, 0]].get()


def at_add(input: Any, rows: Any, updates: Any) -> Any:
    """An index array, a slice and a Python int list mixed."""
    return indexops.at(input)[rows[:, 0], 1:].add(updates[:, 1:])


def at_set(input: Any, updates: Any) -> Any:
    """A list (a constant of the traced function), a negative step and a repeat."""
    return indexops.at(input)[[3, 0, 3], ::-2].set(updates[:3, :2])


OPERAND = np.arange(12.0).reshape(4, 3)
ROWS = np.array([[3], [0], [9], [-2], [3]])  # out of bounds both ways, and a duplicate
UPDATES = np.arange(15.0).reshape(5, 3) + 100
DISTINCT_ROWS = np.array([[2], [0], [1]])
NEAR_ONE = 1 + UPDATES[:3] / 1000
STARTS = np.array([3, -1])
PATCH = np.full((2, 2), -1.0)
STRIDED = np.full((2, 3), -1.0)
CACHE = np.zeros((6, 2))
SLOTS = np.array([[5, -1, 0], [5, 2, 0]])  # padding and duplicate slots
TOKENS = np.arange(12.0).reshape(6, 2)
# ONNX's indices are errors out of range: in range, negative ones and a duplicate, and
# shorter than the operand on dim 0 (the element's row is an index component; shrunk, the
# rows pair up as batching dims)
ELEMENT_DATA = np.arange(6.0).reshape(2, 3)
ELEMENT_PICKS = np.array([[2, -1, -1]])


def onnx_scatter_elements(data: Any, indices: Any, updates: Any) -> Any:
    return indexops.onnx.scatter_elements(data, indices, updates, axis=1, reduction="add")


# (name, function, NumPy arguments): every op, with the cases that need the value paths
CALLS: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("gather clip", gather, (OPERAND, ROWS)),
    ("gather fill", lambda o, i: gather(o, i, "fill", fill_value=-1.0), (OPERAND, ROWS)),
    ("scatter replace", scatter, (OPERAND, ROWS, UPDATES)),
    ("scatter add", lambda x, i, u: scatter(x, i, u, "add"), (OPERAND, ROWS, UPDATES)),
    # distinct rows: JAX differentiates a product only with unique_indices=True; values
    # near 1, so that finite differences stay accurate
    (
        "scatter mul",
        lambda x, i, u: scatter(x, i, u, "mul", "clip", unique_indices=True),
        (OPERAND, DISTINCT_ROWS, NEAR_ONE),
    ),
    ("scatter min", lambda x, i, u: scatter(x, i, u, "min"), (OPERAND, ROWS, UPDATES)),
    (
        "scatter max window",
        lambda x, i, u: scatter(x, i, u, "max", "drop_window"),
        (OPERAND, ROWS, UPDATES),
    ),
    ("dynamic_slice", dynamic_slice, (OPERAND, STARTS)),
    ("dynamic_update_slice", dynamic_update_slice, (OPERAND, PATCH, STARTS)),
    ("slice_scatter", slice_scatter, (OPERAND, STRIDED)),
    ("scatter_update", scatter_update, (CACHE, SLOTS, TOKENS)),
    ("onnx scatter_elements", onnx_scatter_elements, (ELEMENT_DATA, ELEMENT_PICKS, UPDATES[:1])),
    ("at get", at_get, (OPERAND, ROWS)),
    ("at add", at_add, (OPERAND, ROWS, UPDATES)),
    ("at set", at_set, (OPERAND, UPDATES)),
]
IDS = [name for name, *_ in CALLS]


def expected(fn: Callable[..., Any], args: tuple[Any, ...]) -> np.ndarray:
    return np.asarray(fn(*[np.array(a, copy=True) for a in args]))


def shrunk(name: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The same call with other shapes: one row less of the operand (or fewer tokens)."""
    if name == "scatter_update":
        return (CACHE, SLOTS[:1], TOKENS[:3])
    if name == "slice_scatter":
        return (OPERAND[:, :2], STRIDED[:, :2])
    return (args[0][:-1], *args[1:])


# -- JAX -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jax() -> Any:
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.mark.backends("jax")
@pytest.mark.parametrize(("name", "fn", "args"), CALLS, ids=IDS)
def test_jit_retraces_with_new_shapes(jax: Any, name: str, fn: Callable[..., Any], args: tuple):
    """A second trace with other shapes works: no cache of indexops holds a tracer."""
    jitted = jax.jit(fn)
    for shapes in (args, shrunk(name, args)):
        got = jitted(*[jax.numpy.asarray(a) for a in shapes])
        np.testing.assert_array_equal(np.asarray(got), expected(fn, shapes))


@pytest.mark.backends("jax")
@pytest.mark.parametrize(("name", "fn", "args"), CALLS, ids=IDS)
def test_vmap_over_a_leading_batch_dim(jax: Any, name: str, fn: Callable[..., Any], args: tuple):
    jnp = jax.numpy
    batches = [args, tuple(np.flip(a, axis=0).copy() if a.ndim else a for a in args)]
    stacked = [jnp.asarray(np.stack(parts)) for parts in zip(*batches)]
    got = jax.vmap(fn)(*stacked)
    for b, batch in enumerate(batches):
        np.testing.assert_array_equal(np.asarray(got[b]), expected(fn, batch))


def finite_difference(f: Callable[[np.ndarray], float], x: np.ndarray) -> np.ndarray:
    step, grad = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += step
        down[i] -= step
        grad[i] = (f(up) - f(down)) / (2 * step)
    return grad


@pytest.mark.backends("jax")
@pytest.mark.parametrize(("name", "fn", "args"), CALLS, ids=IDS)
def test_grad_matches_finite_differences(jax: Any, name: str, fn: Callable[..., Any], args: tuple):
    """The gradient with respect to every float argument, against central differences."""
    jnp = jax.numpy
    weights = np.random.default_rng(0).standard_normal(expected(fn, args).shape)
    for position, arg in enumerate(args):
        if arg.dtype.kind != "f":
            continue

        def loss(x: Any, position: int = position) -> Any:
            arrays = [jnp.asarray(a) for a in args]
            arrays[position] = x
            return jnp.sum(fn(*arrays) * weights)

        got = np.asarray(jax.grad(loss)(jnp.asarray(arg)))
        want = finite_difference(lambda x: float(loss(jnp.asarray(x))), arg)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"argument {position}")


@pytest.mark.backends("jax")
def test_grad_of_replace_reaches_only_the_last_writer(jax: Any):
    jnp = jax.numpy
    grad = jax.grad(lambda u: jnp.sum(scatter(jnp.asarray(OPERAND), jnp.asarray(ROWS), u)))
    # rows 3, 0, (9 and -2 dropped), 3: the first write to row 3 is overwritten
    np.testing.assert_array_equal(np.asarray(grad(jnp.asarray(UPDATES)))[:, 0], [0, 1, 0, 0, 1])


@pytest.mark.backends("jax")
def test_callable_combiner_under_jit_applies_duplicates_in_order(jax: Any):
    jnp = jax.numpy
    rows = np.array([[1], [1], [0], [1], [1]])
    digits = np.arange(1, 16).reshape(5, 3) % 10

    def fn(x: Any, i: Any, u: Any) -> Any:
        return scatter(x, i, u, lambda old, new: old * 10 + new)

    got = jax.jit(fn)(jnp.zeros((2, 3), jnp.int64), jnp.asarray(rows), jnp.asarray(digits))
    np.testing.assert_array_equal(
        np.asarray(got), expected(fn, (np.zeros((2, 3), int), rows, digits))
    )
    assert np.asarray(got)[1, 0] == 1_403  # digits 1, 4, 0, 3 (rows 0, 1, 3, 4), one by one


@pytest.mark.backends("jax")
def test_slot_past_the_end_is_a_checkify_error(jax: Any):
    from jax.experimental import checkify

    jnp = jax.numpy
    bad = np.array([[7, -1, 0], [5, 2, 0]])
    checked = checkify.checkify(jax.jit(scatter_update))
    error, out = checked(jnp.asarray(CACHE), jnp.asarray(bad), jnp.asarray(TOKENS))
    with pytest.raises(checkify.JaxRuntimeError, match="slot past the end of input"):
        error.throw()
    skipped = np.where(bad < 6, bad, -1)  # the bad token is skipped, nothing else changes
    np.testing.assert_array_equal(
        np.asarray(out), scatter_update_reference.scatter_update(CACHE, skipped, TOKENS)
    )
    error, _ = checked(jnp.asarray(CACHE), jnp.asarray(SLOTS), jnp.asarray(TOKENS))
    assert error.get() is None


@pytest.mark.backends("jax")
def test_traced_slice_parameters_are_a_clear_error(jax: Any):
    jnp = jax.numpy
    data, updates = jnp.zeros(6), jnp.ones(2)
    with pytest.raises(
        indexops.IndexOpsTypeError, match=r"slice_scatter: start='a traced jax array'"
    ):
        jax.jit(lambda s: indexops.slice_scatter(data, updates, s, [6], [3]))(jnp.asarray([0]))


@pytest.mark.backends("jax")
def test_traced_dynamic_slice_clamps_negative_starts_to_zero(jax: Any):
    """StableHLO clamping, not jax.lax's count-from-the-end for negative starts."""
    jnp = jax.numpy
    got = jax.jit(dynamic_slice)(jnp.asarray(OPERAND), jnp.asarray([-1, -5]))
    np.testing.assert_array_equal(np.asarray(got), OPERAND[:2, :2])


# -- torch.compile, meta tensors and CUDA graphs -------------------------------------------------


@pytest.fixture(scope="module")
def torch() -> Any:
    import torch

    return torch


# Dynamo warns (UserWarning) of what it cannot trace faithfully, e.g. a cached function
COMPILES_CLEANLY = pytest.mark.filterwarnings("error:Dynamo:UserWarning")


@pytest.mark.backends("torch")
@COMPILES_CLEANLY
@pytest.mark.parametrize(("name", "fn", "args"), CALLS, ids=IDS)
def test_torch_compile_fullgraph(torch: Any, name: str, fn: Callable[..., Any], args: tuple):
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True)
    for shapes in (args, shrunk(name, args)):  # the second recompiles with dynamic shapes
        got = compiled(*[torch.asarray(a.copy()) for a in shapes])
        np.testing.assert_array_equal(got.numpy(), expected(fn, shapes))


def every_at_method(x: Any, rows: Any, y: Any) -> Any:
    """Each method of ``at`` once, on tensor, list and mixed indices; divide, power and
    apply on repeated positions (one pass per repeat, applied in order), and apply once
    more with ``unique_indices=True`` (a single pass)."""
    x = indexops.at(x)[rows].subtract(y)
    x = indexops.at(x)[[0, 2], 1].multiply(y[:2, 0])
    x = indexops.at(x)[rows, [1, 2, 1]].divide(2.0)
    x = indexops.at(x)[1:, rows].power(y[:2] / 10)
    x = indexops.at(x)[::2].min(y[:2])
    x = indexops.at(x)[rows, ...].max(y)
    twice_plus = lambda old, new: old * 3 + new  # noqa: E731
    x = indexops.at(x)[rows].apply(twice_plus, y)
    x = indexops.at(x)[[True, False, True]].apply(twice_plus, 1.0, unique_indices=True)
    return indexops.at(x)[rows, None, 0].get()


@pytest.mark.backends("torch")
@COMPILES_CLEANLY
def test_torch_compile_fullgraph_every_at_method(torch: Any, monkeypatch):
    torch._dynamo.reset()
    # the dtype kinds first met while Dynamo traces (no insert it would have to replay)
    monkeypatch.setattr(at_module, "_DTYPE_KINDS", {})
    args = (OPERAND[:3] + 1, np.array([2, 0, 2]), UPDATES[:3] / 100)  # row 2 twice
    compiled = torch.compile(every_at_method, fullgraph=True)
    got = compiled(*[torch.asarray(a.copy()) for a in args])
    np.testing.assert_allclose(got.numpy(), every_at_method(*args), rtol=1e-12)


@pytest.mark.backends("torch")
@COMPILES_CLEANLY
@pytest.mark.parametrize("method", ["get", "set", "add", "multiply", "min", "max"])
def test_torch_compile_fullgraph_the_take_along_axis_idiom(torch: Any, method: str, monkeypatch):
    """Every method of the idiom ``x[rows[:, None], idx]`` with repeated elements, whose
    eager calls take the library's element steps and, with numba's kernels loaded, their
    compiled pass: traced whole, the eager values (the steps ask nothing of the host
    while Dynamo traces)."""
    from indexops._backends._host import load_kernels

    load_kernels()
    torch._dynamo.reset()
    monkeypatch.setattr(at_module, "_DTYPE_KINDS", {})
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((6, 5)), rng.standard_normal((6, 3))
    rows, columns = np.arange(6)[:, None], rng.integers(0, 5, (6, 3))

    def fn(x: Any, rows: Any, columns: Any, y: Any) -> Any:
        target = indexops.at(x)[rows, columns]
        return target.get() if method == "get" else getattr(target, method)(y)

    args = [torch.asarray(a) for a in (x, rows, columns, y)]
    got = torch.compile(fn, fullgraph=True)(*args)
    torch.testing.assert_close(got, fn(*args), rtol=0, atol=0)


@pytest.mark.backends("torch")
@COMPILES_CLEANLY
def test_torch_compile_applies_duplicates_in_order_in_place(torch: Any):
    """A callable with repeated rows runs one pass per repeat in a loop on the device
    (no graph break) and writes into the caller's tensor with ``copy=False``."""
    torch._dynamo.reset()
    rows = np.array([[1], [1], [0], [9], [1], [1]])  # 9 is dropped
    digits = np.arange(1, 19).reshape(6, 3) % 10

    def fn(x: Any, i: Any, u: Any) -> Any:
        return scatter(x, i, u, lambda old, new: old * 10 + new, copy=False)

    x = torch.zeros((2, 3), dtype=torch.int64)
    got = torch.compile(fn, fullgraph=True)(x, torch.asarray(rows), torch.asarray(digits))
    assert got is x
    np.testing.assert_array_equal(x.numpy(), expected(fn, (np.zeros((2, 3), int), rows, digits)))
    assert int(x[1, 0]) == 1_436  # digits 1, 4, 3, 6 (rows 0, 1, 4, 5), one by one


def apply_twice(x: Any, y: Any) -> Any:
    """A callable on repeated rows (row 1 twice), then a replace with a repeat: the first
    write of row 1 is overwritten, so its ``3 * y`` gets no gradient."""
    rows = [1, 1, 0]
    x = indexops.at(x)[rows].apply(lambda old, new: old * new, y)
    return indexops.at(x)[rows].set(y * 3)[:, 0].sum() + x.sum()


def gradients(torch: Any, fn: Callable[..., Any]) -> tuple[Any, ...]:
    """The gradients of ``fn`` with respect to both its arguments."""
    x = torch.full((3, 2), 1.5, dtype=torch.float64, requires_grad=True)
    y = (torch.arange(6.0, dtype=torch.float64).reshape(3, 2) + 2).requires_grad_()
    return torch.autograd.grad(fn(x, y), (x, y))


@pytest.mark.backends("torch")
def test_gradients_through_repeats_on_the_device_paths(torch: Any):
    """The device algorithms (as on a GPU) give the host path's gradients: the writes
    repeated to leave an update out add none."""
    wanted = gradients(torch, apply_twice)
    with device_paths():
        got = gradients(torch, apply_twice)
    for g, w in zip(got, wanted, strict=True):
        torch.testing.assert_close(g, w)


@pytest.mark.backends("torch")
def test_torch_compile_keeps_recorded_passes_out_of_the_loop(torch: Any):
    """Where autograd records the passes, torch.compile does not run them in
    torch.while_loop, whose backward would be wrong: it counts them on the host, which
    ``fullgraph=True`` refuses (a graph break without it, as eagerly)."""
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.UserError, match="data-dependent"):
        gradients(torch, torch.compile(apply_twice, fullgraph=True))


@pytest.mark.backends("torch")
@COMPILES_CLEANLY
@pytest.mark.parametrize("how", [None, "max"])
def test_torch_compile_wide_unsigned(torch: Any, how: Any):
    """uint64, which torch (and its compiler's where) hardly supports, over its whole range:
    dropped rows, a duplicate, and max across the sign bit."""
    torch._dynamo.reset()
    operand = np.array([[0, 2**63, 2**64 - 1]] * 4, dtype=np.uint64)
    updates = np.array([[2**63 - 1, 2**63 + 1, 1]] * 5, dtype=np.uint64) + np.arange(
        5, dtype=np.uint64
    ).reshape(5, 1)
    compiled = torch.compile(scatter, fullgraph=True)
    got = compiled(*[torch.asarray(a.copy()) for a in (operand, ROWS, updates)], how)
    np.testing.assert_array_equal(got.numpy(), scatter(operand, ROWS, updates, how))


@pytest.mark.backends("torch")
@COMPILES_CLEANLY
def test_torch_compile_writes_in_place(torch: Any):
    torch._dynamo.reset()
    cache, slots, tokens = (torch.asarray(a.copy()) for a in (CACHE, SLOTS, TOKENS))

    def write(cache: Any, slots: Any, tokens: Any) -> Any:
        return indexops.scatter_update(cache, -2, slots, tokens)

    torch.compile(write, fullgraph=True)(cache, slots, tokens)
    np.testing.assert_array_equal(
        cache.numpy(), scatter_update_reference.scatter_update(CACHE, SLOTS, TOKENS)
    )


@pytest.mark.backends("torch")
@COMPILES_CLEANLY
@pytest.mark.parametrize("method", ["add", "max", "multiply"])
def test_torch_compile_writes_in_place_where_autograd_records(torch: Any, method: str):
    """An in-place write of repeated rows into a tensor autograd records (a non-leaf):
    the write goes into new tensors, the last copied into ``x``, also while
    torch.compile traces, where memory shared is only guessed (two contiguous tensors
    were taken for one, and ``x`` kept its old values); values and gradients as eager."""
    torch._dynamo.reset()

    def fn(a: Any, rows: Any, y: Any) -> Any:
        x = a * 1.0
        return x, getattr(indexops.at(x)[rows], method)(y, copy=False)

    def run(function: Callable[..., Any]) -> list[Any]:
        a = torch.arange(12.0).reshape(4, 3).requires_grad_()
        x, out = function(a, torch.tensor([1, 1, 3]), torch.full((3, 3), 20.0))
        (x.sum() + out.sum()).backward()
        return [x.detach(), out.detach(), a.grad]

    for got, expected in zip(run(torch.compile(fn, fullgraph=True)), run(fn)):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


@pytest.mark.backends("torch")
@COMPILES_CLEANLY
def test_torch_compile_reports_a_slot_past_the_end(torch: Any):
    torch._dynamo.reset()
    bad = torch.asarray([[7, -1, 0], [5, 2, 0]])
    compiled = torch.compile(scatter_update, fullgraph=True)
    with pytest.raises(RuntimeError, match="slot past the end"):
        compiled(torch.asarray(CACHE), bad, torch.asarray(TOKENS))


@pytest.mark.backends("torch")
@pytest.mark.parametrize(("name", "fn", "args"), CALLS, ids=IDS)
def test_meta_tensors_give_shape_and_dtype(
    torch: Any, name: str, fn: Callable[..., Any], args: tuple
):
    want = expected(fn, args)
    got = fn(*[torch.empty(a.shape, dtype=torch.asarray(a).dtype, device="meta") for a in args])
    assert got.device.type == "meta"
    assert tuple(got.shape) == want.shape and str(got.dtype) == f"torch.{want.dtype}"


@pytest.mark.backends("torch")
def test_meta_tensors_with_every_default(torch: Any):
    """The ops with nothing but required arguments, on meta tensors."""
    meta = {"device": "meta"}
    cache = torch.empty((4, 8, 1, 16), **meta)
    out = indexops.scatter_update(
        cache,
        -2,
        torch.empty((2, 3), dtype=torch.int64, **meta),
        torch.empty((2, 3, 1, 16), **meta),
    )
    assert out is cache
    window = indexops.dynamic_slice(
        torch.empty((5, 5), **meta), torch.empty(2, dtype=torch.int32, **meta), (2, 3)
    )
    assert window.shape == (2, 3) and window.device.type == "meta"


@pytest.fixture
def cuda(torch: Any) -> Any:
    return torch.device("cuda")


@pytest.mark.backends("torch_cuda")
def test_scatter_update_in_a_cuda_graph(torch: Any, cuda: Any):
    """Captured once, replayed with new slots and tokens: a paged-KV decode step."""
    cache = torch.zeros((64, 16, 1, 8), device=cuda)
    slots = torch.zeros((4, 1), dtype=torch.int64, device=cuda)
    tokens = torch.zeros((4, 1, 1, 8), device=cuda)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        indexops.scatter_update(cache, -2, slots, tokens)  # warm up outside the capture
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            indexops.scatter_update(cache, -2, slots, tokens)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    expected_cache = np.zeros((64, 16, 1, 8), np.float32)
    rng = np.random.default_rng(0)
    for step in range(3):
        new_slots = rng.choice(1024, size=(4, 1), replace=False)
        new_slots[step] = -1  # a padding slot
        new_tokens = rng.standard_normal((4, 1, 1, 8)).astype(np.float32)
        slots.copy_(torch.asarray(new_slots))
        tokens.copy_(torch.asarray(new_tokens))
        graph.replay()
        expected_cache = scatter_update_reference.scatter_update(
            expected_cache, new_slots, new_tokens
        )
    np.testing.assert_array_equal(cache.cpu().numpy(), expected_cache)


@pytest.mark.backends("torch_cuda")
@pytest.mark.parametrize(("name", "fn", "args"), CALLS, ids=IDS)
def test_no_host_sync_on_cuda(
    torch: Any, cuda: Any, name: str, fn: Callable[..., Any], args: tuple
):
    arrays = [torch.asarray(a.copy(), device=cuda) for a in args]
    fn(*arrays)  # warm up (first calls may initialise the device)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        got = fn(*arrays)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    np.testing.assert_array_equal(got.cpu().numpy(), expected(fn, args))


@pytest.mark.backends("jax")
def test_at_under_jit_with_a_concrete_index_array_closed_over(jax: Any):
    """An index array made outside ``jax.jit`` and closed over (concrete, while ``x`` is
    traced), negative rows and repeats included: counted from the end in the program, as
    eagerly, never read on the host."""
    jnp = jax.numpy
    rows = jnp.asarray([3, -1, 0, 3])
    x = jnp.arange(12.0).reshape(4, 3)
    for method in ("get", "add"):
        call = (
            (lambda x: indexops.at(x)[rows].get())
            if method == "get"
            else (lambda x: indexops.at(x)[rows].add(1.0))
        )
        np.testing.assert_array_equal(np.asarray(jax.jit(call)(x)), np.asarray(call(x)))
