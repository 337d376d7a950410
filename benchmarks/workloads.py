"""The benchmark workloads: one function per workload, each returning a :class:`Case`.

A case holds the indexops callables (variants with the same semantics, e.g.
``unique_indices=False`` and ``True``), the native candidates for the same work on the
same backend (the runner times them all and takes the fastest as the baseline, unless
``peers`` names a variant's own), an optional ``jax.lax`` peer (jit, CPU), and the
expected result computed with NumPy.

Every callable takes the operand (a fresh array per callable, made by the runner from
``Case.fresh``) and returns the result; in-place callables write into the operand. All
other inputs are closed over, already on the backend.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import indexops

from . import onnx_peer
from .backends import Ctx

Fn = Callable[[Any], Any]
ROWS = {
    "update_window_dims": (1,),
    "inserted_window_dims": (0,),
    "scatter_dims_to_operand_dims": (0,),
    "index_vector_dim": 1,
}
ELEMENTS = {**ROWS, "update_window_dims": ()}


@dataclass
class Case:
    """One workload, ready to time."""

    name: str
    fresh: Callable[[], np.ndarray]  # a new operand (host, NumPy)
    indexops: dict[str, Fn]  # variant -> callable; the first is the headline
    native: dict[str, Fn]  # candidates; the fastest median is the baseline
    expected: np.ndarray
    target: float = 1.10  # ratio indexops / native to meet
    bytes_moved: int = 0  # payload bytes read + written (for bandwidth)
    calls: int = 1  # calls per timed sample (small-call overhead)
    jax: Fn | None = None
    onnxruntime: Fn | None = None  # on NumPy arrays (benchmarks/onnx_peer.py)
    exact: bool = True  # False: float accumulation, compare with a tolerance
    peers: dict[str, str] = field(default_factory=dict)  # variant -> its own baseline
    notes: dict[str, str] = field(default_factory=dict)  # variant -> note in the JSON


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _pick(full: int, quick: int, is_quick: bool, fraction: float = 1.0) -> int:
    """A length: ``full`` (or ``quick``) times ``fraction`` of the full size (see ``--sizes``)."""
    return max(1, round((quick if is_quick else full) * fraction))


def _side(full: int, quick: int, is_quick: bool, fraction: float) -> int:
    """A side of a square whose area is ``fraction`` of the full size's."""
    return _pick(full, quick, is_quick, math.sqrt(fraction))


def row_gather(
    ctx: Ctx, quick: bool, jx: Ctx | None, scale: int = 1, fraction: float = 1.0
) -> Case:
    """1. ``operand[rows]`` for random rows of a [262144, 128] f32 table.

    ``scale`` multiplies the rows gathered; the table has at least as many rows.
    """
    k, d = _pick(65536, 8192, quick, fraction) * scale, 128
    n = max(_pick(262144, 32768, quick, fraction), k)
    rng = _rng()
    host = rng.standard_normal((n, d), dtype=np.float32)
    idx_host = rng.integers(0, n, k)
    idx = ctx.asarray(idx_host)
    idx2 = idx[:, None]  # a view: indexops and native read the same index memory

    def gather(mode: str) -> Fn:
        attrs = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}
        return lambda x: indexops.gather(
            x, idx2, **attrs, index_vector_dim=1, slice_sizes=(1, d), mode=mode
        )

    if ctx.name == "torch":
        native = {"index_select": lambda x: x.index_select(0, idx), "x[idx]": lambda x: x[idx]}
    else:
        native = {"take": lambda x: ctx.xp.take(x, idx, axis=0), "x[idx]": lambda x: x[idx]}
    return Case(
        "1 row gather",
        lambda: host.copy(),
        {"clip": gather("clip"), "promise_in_bounds": gather("promise_in_bounds")},
        native,
        host[idx_host],
        bytes_moved=2 * k * d * 4 + k * 8,
        jax=_jax_row_gather(jx, idx_host, d),
    )


def _jax_row_gather(jx: Ctx | None, idx_host: np.ndarray, d: int) -> Fn | None:
    if jx is None:
        return None
    import jax
    from jax import lax

    dims = lax.GatherDimensionNumbers((1,), (0,), (0,))
    idx = jx.asarray(idx_host[:, None])
    mode = lax.GatherScatterMode.PROMISE_IN_BOUNDS
    fn = jax.jit(lambda x, i: lax.gather(x, i, dims, (1, d), mode=mode))
    return lambda x: fn(x, idx)


def scatter_add_problem(quick: bool, fraction: float = 1.0) -> tuple[Any, Any, Any, Any]:
    """Workload 2's data: the table, the rows, the updates and the expected sum (f64)."""
    n, k, d = _pick(65536, 8192, quick, fraction), _pick(262144, 32768, quick, fraction), 64
    rng = _rng()
    host = rng.standard_normal((n, d), dtype=np.float32)
    idx_host = rng.integers(0, n, k)
    upd_host = rng.standard_normal((k, d), dtype=np.float32)
    expected = host.astype(np.float64)
    np.add.at(expected, idx_host, upd_host.astype(np.float64))
    return host, idx_host, upd_host, expected


def scatter_add(ctx: Ctx, quick: bool, jx: Ctx | None, fraction: float = 1.0) -> Case:
    """2. In-place add of 262144 rows into a [65536, 64] f32 table, random (repeating) rows."""
    host, idx_host, upd_host, expected = scatter_add_problem(quick, fraction)
    (k, d) = upd_host.shape
    idx, upd = ctx.asarray(idx_host), ctx.asarray(upd_host)
    idx2 = idx[:, None]  # a view: indexops and native read the same index memory

    def scatter(mode: str) -> Fn:
        return lambda x: indexops.scatter(
            x, idx2, upd, **ROWS, update_computation="add", mode=mode, copy=False
        )

    return Case(
        "2 scatter-add, duplicates",
        lambda: host.copy(),
        {"drop": scatter("drop"), "promise_in_bounds": scatter("promise_in_bounds")},
        _native_add(ctx, idx, upd),
        expected.astype(np.float32),
        bytes_moved=k * d * 4 * 3 + k * 8,
        jax=_jax_scatter_add(jx, idx_host, upd_host),
        exact=False,
    )


def _native_add(ctx: Ctx, idx: Any, upd: Any) -> dict[str, Fn]:
    if ctx.name == "torch":
        return {
            "index_add_": lambda x: x.index_add_(0, idx, upd),
            "index_put_(accumulate)": lambda x: x.index_put_((idx,), upd, accumulate=True),
        }
    if ctx.name == "cupy":
        add_at = ctx.xp.add.at

        def flat(x: Any) -> Any:  # element indices into the flat view, like np.add.at flat
            d = x.shape[1]
            rows = (idx[:, None] * d + ctx.xp.arange(d)).reshape(-1)
            add_at(x.reshape(-1), rows, upd.reshape(-1))
            return x

        return {
            "cupy.add.at": lambda x: (add_at(x, idx, upd), x)[1],
            "cupy.add.at flat": flat,
        }
    sparse_product: dict[str, Fn] = {}
    if importlib.util.find_spec("scipy") is not None:
        sparse_product["scipy csc product"] = lambda x: _add_sparse_product(x, idx, upd)
    return {
        **sparse_product,
        "np.add.at rows": lambda x: (np.add.at(x, idx, upd), x)[1],
        "np.add.at flat": lambda x: _add_at_flat(x, idx, upd),
        "np.add.at flat, chunks": lambda x: _add_at_flat_chunks(x, idx, upd),
        "np.add.at complex pairs, chunks": lambda x: _add_at_pairs_chunks(x, idx, upd),
        "argsort+add.reduceat": lambda x: _add_sorted(x, idx, upd),
        "bincount flat (f64)": lambda x: _add_bincount(x, idx, upd),
    }


def _flat_index(idx: np.ndarray, d: int) -> np.ndarray:
    return (idx[:, None] * d + np.arange(d)).reshape(-1)


def _add_at_flat(x: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
    """``np.add.at`` on the flat element index (NumPy's 1-D fast path)."""
    np.add.at(x.reshape(-1), _flat_index(idx, x.shape[1]), upd.reshape(-1))
    return x


def _add_at_flat_chunks(x: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
    """``np.add.at`` on flat element indices built for 1024 rows at a time (cache-sized)."""
    flat, d = x.reshape(-1), x.shape[1]
    for start in range(0, idx.shape[0], 1024):
        rows = slice(start, start + 1024)
        np.add.at(flat, _flat_index(idx[rows], d), upd[rows].reshape(-1))
    return x


def _add_at_pairs_chunks(x: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
    """As :func:`_add_at_flat_chunks`, two f32 columns at a time viewed as one complex64
    (complex add is the two float adds: the same sums, half the elements)."""
    _add_at_flat_chunks(x.view(np.complex64), idx, upd.view(np.complex64))
    return x


def _add_sorted(x: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
    """Sort the rows, sum runs of equal rows with ``reduceat``, add once per distinct row."""
    order = np.argsort(idx, kind="stable")
    ordered = idx[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    x[ordered[starts]] += np.add.reduceat(upd[order], starts, axis=0)
    return x


def _add_sparse_product(x: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
    """Sum each row's updates with a scipy sparse-matrix product ([n, k], a 1 in column
    ``j`` at row ``idx[j]``: no sort needed), then add the sums at once."""
    from scipy import sparse

    k = idx.shape[0]
    ones = np.ones(k, dtype=upd.dtype)
    x += sparse.csc_array((ones, idx, np.arange(k + 1)), shape=(x.shape[0], k)) @ upd
    return x


def _add_bincount(x: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
    """Sum per flat element with ``bincount`` (float64), add into ``x``."""
    sums = np.bincount(_flat_index(idx, x.shape[1]), upd.reshape(-1), minlength=x.size)
    x += sums.reshape(x.shape).astype(x.dtype)
    return x


def _jax_scatter_add(jx: Ctx | None, idx_host: np.ndarray, upd_host: np.ndarray) -> Fn | None:
    if jx is None:
        return None
    import jax
    from jax import lax

    dims = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    idx, upd = jx.asarray(idx_host[:, None]), jx.asarray(upd_host)
    mode = lax.GatherScatterMode.PROMISE_IN_BOUNDS
    fn = jax.jit(lambda x, i, u: lax.scatter_add(x, i, u, dims, mode=mode))
    return lambda x: fn(x, idx, upd)


def paged_kv_write(
    ctx: Ctx,
    quick: bool,
    jx: Ctx | None,
    scale: int = 1,
    fraction: float = 1.0,
    padded: bool = False,
) -> Case:
    """3. ``scatter_update`` of 4096 tokens into a [2048, 16, 1, 1024] cache, in place.

    ``scale`` multiplies both the blocks of the cache and the tokens written. ``padded``:
    the last eighth of each sequence's slots are -1, padding that is not written (as
    vLLM pads its slot mapping), against the user's mask of the slots kept, made on each
    call (no JAX peer: the jit set's workload 3 is padded).
    """
    blocks, size, d = _pick(2048, 256, quick, fraction), 16, 1024
    b, s = 4, _pick(1024, 128, quick, fraction) * scale
    rng = _rng()
    host = rng.standard_normal((blocks, size, 1, d), dtype=np.float32)
    host = np.tile(host, (scale, 1, 1, 1))  # repeated blocks: cheap to make at any scale
    blocks *= scale
    slots_host = rng.permutation(blocks * size)[: b * s].reshape(b, s)
    if padded:
        slots_host[:, s - s // 8 :] = -1
    src_host = rng.standard_normal((b, s, 1, d), dtype=np.float32)
    kept = slots_host.reshape(-1) >= 0
    expected = host.reshape(-1, d).copy()
    expected[slots_host.reshape(-1)[kept]] = src_host.reshape(-1, d)[kept]
    slots, src = ctx.asarray(slots_host), ctx.asarray(src_host)
    flat_slots, flat_src = slots.reshape(-1), src.reshape(-1, d)  # the same memory as ours
    written = int(kept.sum())
    return Case(
        "3 paged KV write, padded (in place)" if padded else "3 paged KV write (in place)",
        lambda: host.copy(),
        {"scatter_update": lambda x: indexops.scatter_update(x, -2, slots, src)},
        _native_rows_set(ctx, flat_slots, flat_src, d, padded),
        expected.reshape(host.shape),
        bytes_moved=2 * written * d * 4 + b * s * 8,
        jax=None if padded else _jax_rows_set(jx, slots_host.reshape(-1), src_host.reshape(-1, d)),
    )


def _native_rows_set(
    ctx: Ctx, rows: Any, values: Any, d: int, padded: bool = False
) -> dict[str, Fn]:
    """The library's row assignments; where ``padded``, of the rows not negative, kept by
    a mask made on each call."""

    def kept() -> tuple[Any, Any]:
        if not padded:
            return rows, values
        keep = rows >= 0
        return rows[keep], values[keep]

    def fancy(x: Any) -> Any:
        r, v = kept()
        x.reshape(-1, d)[r] = v
        return x

    def index_copy(x: Any) -> Any:
        r, v = kept()
        x.view(-1, d).index_copy_(0, r, v)
        return x

    if ctx.name == "torch":
        return {"index_copy_": index_copy, "x[idx] = v": fancy}
    return {"fancy assignment": fancy}


def _jax_rows_set(jx: Ctx | None, rows_host: np.ndarray, values_host: np.ndarray) -> Fn | None:
    if jx is None:
        return None
    import jax

    rows, values = jx.asarray(rows_host), jx.asarray(values_host)
    d = values_host.shape[1]

    def write(x: Any, r: Any, v: Any) -> Any:
        flat = x.reshape(-1, d).at[r].set(v, unique_indices=True, mode="promise_in_bounds")
        return flat.reshape(x.shape)

    fn = jax.jit(write)
    return lambda x: fn(x, rows, values)


def element_problem(quick: bool, fraction: float = 1.0) -> tuple[Any, Any, Any, Any]:
    """Workload 4's data: the vector, unique positions, their values, the expected result."""
    n, k = _pick(1 << 24, 1 << 21, quick, fraction), _pick(1 << 22, 1 << 19, quick, fraction)
    rng = _rng()
    host = rng.standard_normal(n, dtype=np.float32)
    idx_host = rng.permutation(n)[:k]
    upd_host = rng.standard_normal(k, dtype=np.float32)
    expected = host.copy()
    expected[idx_host] = upd_host
    return host, idx_host, upd_host, expected


def element_scatter(ctx: Ctx, quick: bool, jx: Ctx | None, fraction: float = 1.0) -> Case:
    """4. Replace 4M unique positions of a 16M f32 vector, functionally (a new array)."""
    host, idx_host, upd_host, expected = element_problem(quick, fraction)
    (n,), (k,) = host.shape, upd_host.shape
    idx, upd = ctx.asarray(idx_host), ctx.asarray(upd_host)
    idx2 = idx[:, None]  # a view: indexops and native read the same index memory

    def scatter(unique: bool, mode: str) -> Fn:
        return lambda x: indexops.scatter(
            x, idx2, upd, **ELEMENTS, unique_indices=unique, mode=mode
        )

    return Case(
        "4 element scatter 1-D (copy)",
        lambda: host.copy(),
        {
            "unique=False": scatter(False, "drop"),
            "unique=True": scatter(True, "drop"),
            "unique=True,promise": scatter(True, "promise_in_bounds"),
            # the same replace without unique_indices through the other entry points
            "at(x)[idx].set": lambda x: indexops.at(x)[idx].set(upd),
            "onnx.scatter_nd": lambda x: indexops.onnx.scatter_nd(x, idx2, upd),
            "onnx.scatter_elements": lambda x: indexops.onnx.scatter_elements(x, idx, upd, axis=0),
        },
        _native_element_set(ctx, idx, upd),
        expected,
        bytes_moved=2 * n * 4 + 2 * k * 4 + k * 8,
        jax=_jax_element_set(jx, idx_host, upd_host),
    )


def _native_element_set(ctx: Ctx, idx: Any, upd: Any) -> dict[str, Fn]:
    def fancy(x: Any) -> Any:
        out = ctx.copy(x)
        out[idx] = upd
        return out

    if ctx.name == "torch":
        return {"clone+x[idx]=": fancy, "index_copy": lambda x: x.index_copy(0, idx, upd)}
    if ctx.name == "numpy":
        return {"copy+x[idx]=": fancy, "copy+np.put": lambda x: _put(x, idx, upd)}
    return {"copy+x[idx]=": fancy}


def _put(x: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.put(out, idx, upd)
    return out


def _jax_element_set(jx: Ctx | None, idx_host: np.ndarray, upd_host: np.ndarray) -> Fn | None:
    if jx is None:
        return None
    import jax

    idx, upd = jx.asarray(idx_host), jx.asarray(upd_host)
    fn = jax.jit(lambda x, i, u: x.at[i].set(u, unique_indices=True, mode="promise_in_bounds"))
    return lambda x: fn(x, idx, upd)


def dynamic_update(
    ctx: Ctx, quick: bool, jx: Ctx | None, copy: bool, fraction: float = 1.0
) -> Case:
    """5. ``dynamic_update_slice`` of a [1024, 1024] block into [4096, 4096] f32."""
    n, m = _side(4096, 1024, quick, fraction), _side(1024, 256, quick, fraction)
    start = (n // 3, n // 5)
    rng = _rng()
    host = rng.standard_normal((n, n), dtype=np.float32)
    upd_host = rng.standard_normal((m, m), dtype=np.float32)
    key = (slice(start[0], start[0] + m), slice(start[1], start[1] + m))
    expected = host.copy()
    expected[key] = upd_host
    upd = ctx.asarray(upd_host)
    moved = (2 * n * n * 4 if copy else 0) + 2 * m * m * 4
    return Case(
        f"5 dynamic_update_slice ({'copy' if copy else 'in place'})",
        lambda: host.copy(),
        {"": lambda x: indexops.dynamic_update_slice(x, upd, start, copy=copy)},
        {"x[a:b, c:d] = u": _native_window_set(ctx, key, upd, copy)},
        expected,
        bytes_moved=moved,
        jax=_jax_dynamic_update(jx, upd_host, start) if copy else None,
    )


def _native_window_set(ctx: Ctx, key: tuple[slice, ...], values: Any, copy: bool) -> Fn:
    def assign(x: Any) -> Any:
        out = ctx.copy(x) if copy else x
        out[key] = values
        return out

    return assign


def _jax_dynamic_update(jx: Ctx | None, upd_host: np.ndarray, start: tuple[int, int]) -> Fn | None:
    if jx is None:
        return None
    import jax
    from jax import lax

    upd = jx.asarray(upd_host)
    fn = jax.jit(lambda x, u: lax.dynamic_update_slice(x, u, start))
    return lambda x: fn(x, upd)


def strided_problem(
    quick: bool, fraction: float = 1.0
) -> tuple[int, tuple[slice, slice], Any, Any, Any]:
    """Workload 6's data: n, the key, the operand, the updates and the expected result."""
    n = _side(4096, 1024, quick, fraction)
    key = (slice(0, n, 2), slice(0, n, 3))
    rng = _rng()
    host = rng.standard_normal((n, n), dtype=np.float32)
    upd_host = rng.standard_normal(host[key].shape, dtype=np.float32)
    expected = host.copy()
    expected[key] = upd_host
    return n, key, host, upd_host, expected


def strided_slice_scatter(
    ctx: Ctx, quick: bool, jx: Ctx | None, copy: bool, fraction: float = 1.0
) -> Case:
    """6. ``slice_scatter`` into every 2nd row and 3rd column of [4096, 4096] f32."""
    n, key, host, upd_host, expected = strided_problem(quick, fraction)
    upd = ctx.asarray(upd_host)
    moved = (2 * n * n * 4 if copy else 0) + 2 * upd_host.nbytes

    def op(x: Any) -> Any:
        return indexops.slice_scatter(x, upd, [0, 0], [n, n], [2, 3], [0, 1], copy=copy)

    return Case(
        f"6 strided slice_scatter ({'copy' if copy else 'in place'})",
        lambda: host.copy(),
        {"": op},
        {"x[::2, ::3] = u": _native_window_set(ctx, key, upd, copy)},
        expected,
        bytes_moved=moved,
        jax=_jax_strided(jx, upd_host, key) if copy else None,
    )


def _jax_strided(jx: Ctx | None, upd_host: np.ndarray, key: tuple[slice, ...]) -> Fn | None:
    if jx is None:
        return None
    import jax

    upd = jx.asarray(upd_host)
    fn = jax.jit(lambda x, u: x.at[key].set(u))
    return lambda x: fn(x, upd)


def element_gather(ctx: Ctx, quick: bool, jx: Ctx | None, fraction: float = 1.0) -> Case:
    """8. GatherElements along axis 1 of a [262144, 64] f32 table, every element its own
    index (``take_along_axis``, ``torch.gather``): an element gather with a batching dim."""
    n, d = _pick(262144, 32768, quick, fraction), 64
    rng = _rng()
    host = rng.standard_normal((n, d), dtype=np.float32)
    idx_host = rng.integers(0, d, (n, d))
    idx = ctx.asarray(idx_host)
    idx3 = idx[..., None]  # a view: indexops and native read the same index memory
    attrs = {
        "offset_dims": (), "collapsed_slice_dims": (1,), "start_index_map": (1,),
        "index_vector_dim": 2, "slice_sizes": (1, 1), "operand_batching_dims": (0,),
        "start_indices_batching_dims": (0,),
    }  # fmt: skip

    def gather(mode: str) -> Fn:
        return lambda x: indexops.gather(x, idx3, **attrs, mode=mode)

    if ctx.name == "torch":
        native = {"torch.gather": lambda x: ctx.xp.gather(x, 1, idx)}
    else:
        native = {"take_along_axis": lambda x: ctx.xp.take_along_axis(x, idx, axis=1)}
    return Case(
        "8 element gather (take_along_axis)",
        lambda: host.copy(),
        {"clip": gather("clip"), "promise_in_bounds": gather("promise_in_bounds")},
        native,
        np.take_along_axis(host, idx_host, axis=1),
        bytes_moved=2 * n * d * 4 + n * d * 8,
        onnxruntime=onnx_peer.one_node(
            "GatherElements", host, {"indices": idx_host}, onnx_peer.THREADS, axis=1
        ),
    )


def scatter_rows_reduce(
    ctx: Ctx, quick: bool, jx: Ctx | None, how: str, dtype: str, fraction: float = 1.0
) -> Case:
    """9, 10. ScatterND of 262144 rows with duplicates into a [65536, 64] table, with the
    ``max`` (f32) or ``add`` (int64) reduction, functionally (a new array, as ONNX does)."""
    host, idx_host, upd_host, _ = scatter_add_problem(quick, fraction)
    if dtype == "int64":
        host, upd_host = (np.round(a * 1000).astype(np.int64) for a in (host, upd_host))
    ufunc = {"max": np.maximum, "add": np.add}[how]
    expected = host.copy()
    ufunc.at(expected, idx_host, upd_host)
    idx, upd = ctx.asarray(idx_host), ctx.asarray(upd_host)
    idx2 = idx[:, None]

    def scatter(x: Any) -> Any:
        return indexops.scatter(x, idx2, upd, **ROWS, update_computation=how)

    feeds = {"indices": idx_host[:, None], "updates": upd_host}
    return Case(
        f"{9 if how == 'max' else 10} scatter {how} {dtype} rows with duplicates (copy)",
        lambda: host.copy(),
        {"": scatter},
        _native_rows_reduce(ctx, idx, upd, how, ufunc),
        expected,
        onnxruntime=onnx_peer.one_node("ScatterND", host, feeds, onnx_peer.THREADS, reduction=how),
    )


def _native_rows_reduce(ctx: Ctx, idx: Any, upd: Any, how: str, ufunc: Any) -> dict[str, Fn]:
    if ctx.name == "torch":
        reduce = {"max": "amax", "add": "sum"}[how]
        index = idx[:, None].expand_as(upd)
        native = {"scatter_reduce": lambda x: x.scatter_reduce(0, index, upd, reduce)}
        if how == "add":
            native["index_add"] = lambda x: x.index_add(0, idx, upd)
        else:  # index_reduce has no sum
            native["index_reduce"] = lambda x: x.index_reduce(0, idx, upd, reduce)
        return native

    def at(x: Any) -> Any:
        out = x.copy()
        ufunc.at(out, idx, upd)
        return out

    return {f"copy+np.{ufunc.__name__}.at": at}


def strided_read(ctx: Ctx, quick: bool, jx: Ctx | None, fraction: float = 1.0) -> Case:
    """11. The strided basic-index read ``x[::-2, 1:60:3]`` of a [262144, 64] f32 table
    (ONNX Slice with steps -2 and 3), as a new array."""
    n, d = _pick(262144, 32768, quick, fraction), 64
    host = _rng().standard_normal((n, d), dtype=np.float32)
    key = (slice(None, None, -2), slice(1, 60, 3))
    if ctx.name == "torch":  # torch has no negative steps
        rows = ctx.xp.arange(n - 1, -1, -2)
        native = {
            "index_select": lambda x: x[:, 1:60:3].index_select(0, rows),
            "flip+slice": lambda x: x[:, 1:60:3].flip(0)[::2].contiguous(),
        }
    else:
        native = {"x[key].copy()": lambda x: x[key].copy()}
    bounds = zip(("starts", "ends", "axes", "steps"), ([-1, 1], [-n - 1, 60], [0, 1], [-2, 3]))
    feeds = {name: np.array(values) for name, values in bounds}
    return Case(
        "11 strided read x[::-2, 1:60:3] (copy)",
        lambda: host.copy(),
        {"at": lambda x: indexops.at(x)[::-2, 1:60:3].get()},
        native,
        host[key],
        onnxruntime=onnx_peer.one_node("Slice", host, feeds, onnx_peer.THREADS),
    )


def build_all(
    ctx: Ctx, quick: bool, jx: Ctx | None, scale: int = 1, fraction: float = 1.0
) -> list[Callable[[], Case]]:
    """Builders for every workload (built lazily, one at a time, to bound memory).

    ``scale`` multiplies the sizes of workloads 1 and 3 only (big enough to be bound by
    GPU memory bandwidth rather than launch overhead). ``fraction`` shrinks the data of
    workloads 1-6 and 8-11 to that fraction of their full size (the small calls have one size and
    come only with ``fraction=1``).
    """
    f = fraction
    return [
        lambda: row_gather(ctx, quick, jx, scale, f),
        lambda: scatter_add(ctx, quick, jx, f),
        lambda: paged_kv_write(ctx, quick, jx, scale, f),
        lambda: paged_kv_write(ctx, quick, jx, scale, f, padded=True),
        lambda: element_scatter(ctx, quick, jx, f),
        lambda: dynamic_update(ctx, quick, jx, copy=True, fraction=f),
        lambda: dynamic_update(ctx, quick, jx, copy=False, fraction=f),
        lambda: strided_slice_scatter(ctx, quick, jx, copy=True, fraction=f),
        lambda: strided_slice_scatter(ctx, quick, jx, copy=False, fraction=f),
        lambda: element_gather(ctx, quick, jx, f),
        lambda: scatter_rows_reduce(ctx, quick, jx, "max", "float32", f),
        lambda: scatter_rows_reduce(ctx, quick, jx, "add", "int64", f),
        lambda: strided_read(ctx, quick, jx, f),
        *(small_calls(ctx, quick, jx) if fraction == 1 else []),
    ]


def small_calls(ctx: Ctx, quick: bool, jx: Ctx | None) -> list[Callable[[], Case]]:
    """7. Every op on tiny arrays (8 rows of a [16, 16] f32 table): per-call overhead."""
    calls = _pick(2000, 300, quick)
    builders = [lambda make=make: _small(ctx, jx, calls, *make()) for make in _SMALL]
    return [*builders, lambda: small_at(ctx, jx, calls)]


def small_at(ctx: Ctx, jx: Ctx | None, calls: int) -> Case:
    """7. ``at(x)[rows].add(y)`` on 8 rows of a [64, 16] f32 table, in place, against the
    ``scatter`` call it lowers to (its own peer: the price of the index expression)."""
    host = np.arange(1024, dtype=np.float32).reshape(64, 16)
    rows_host = np.array([3, 17, 40, 17, 63, 9, 2, 33])
    values_host = np.ones((8, 16), dtype=np.float32)
    rows, values = ctx.asarray(rows_host), ctx.asarray(values_host)
    starts = ctx.asarray(rows_host[:, None])
    expected = host.copy()
    np.add.at(expected, rows_host, values_host)
    jax_fn = None
    if jx is not None:
        import jax

        jax_rows, jax_values = jx.asarray(rows_host), jx.asarray(values_host)
        add = jax.jit(lambda x, r, v: x.at[r].add(v))
        jax_fn = lambda x: add(x, jax_rows, jax_values)  # noqa: E731
    return Case(
        "7 small: at add 8 rows of [64, 16] (in place)",
        lambda: host.copy(),
        {"at": lambda x: indexops.at(x)[rows].add(values, copy=False)},
        {
            "scatter": lambda x: indexops.scatter(
                x, starts, values, **ROWS, update_computation="add", copy=False
            ),
            "np.add.at": lambda x: _np_add_at(x, {"rows": rows, "values": values}),
        },
        expected,
        target=2.0,
        calls=calls,
        jax=jax_fn,
        peers={"at": "scatter"},
        notes={"at": "against the direct indexops.scatter call it makes, not a native one"},
    )


def _small(
    ctx: Ctx, jx: Ctx | None, calls: int, name: str, ops: dict[str, Any], exact: bool = True
) -> Case:
    """A small-call case from the op table: indexops, native (NumPy-like) and JAX forms."""
    host = np.arange(256, dtype=np.float32).reshape(ops.get("shape", (16, 16)))
    inputs = {k: ctx.asarray(v) for k, v in _SMALL_INPUTS.items()}
    expected = np.array(ops["native"](host.copy(), _SMALL_INPUTS))
    jax_fn = None
    if jx is not None and "jax" in ops:
        import jax

        jax_inputs = {k: jx.asarray(v) for k, v in _SMALL_INPUTS.items()}
        fn = jax.jit(ops["jax"])
        jax_fn = lambda x: fn(x, jax_inputs)  # noqa: E731
    return Case(
        f"7 small: {name}",
        lambda: host.copy(),
        {"": lambda x: ops["indexops"](x, inputs)},
        {"native": lambda x: ops["native"](x, inputs)},
        expected,
        target=5.0,  # issue 24 (issue 6 asked 3x)
        calls=calls,
        jax=jax_fn,
        exact=exact,
    )


_SMALL_INPUTS = {
    "rows": np.array([3, 1, 4, 1, 5, 9, 2, 6]),
    "unique": np.array([3, 1, 4, 0, 5, 9, 2, 6]),
    "values": np.ones((8, 16), dtype=np.float32),
    "block": np.ones((4, 4), dtype=np.float32),
    "strided": np.ones((8, 6), dtype=np.float32),
    "slots": np.array([[3, 1, 4, 0, 5, 9, 2, 6]]),
    "tokens": np.ones((1, 8, 1, 16), dtype=np.float32),
}


def _np_add_at(x: Any, i: dict[str, Any]) -> Any:
    if hasattr(x, "index_add_"):
        return x.index_add_(0, i["rows"], i["values"])
    if type(x).__module__.startswith("cupy"):
        import cupy

        cupy.add.at(x, i["rows"], i["values"])
        return x
    np.add.at(x, i["rows"], i["values"])
    return x


def _set_rows(x: Any, i: dict[str, Any]) -> Any:
    x[i["unique"]] = i["values"]
    return x


def _set_block(x: Any, i: dict[str, Any]) -> Any:
    x[5:9, 7:11] = i["block"]
    return x


def _set_strided(x: Any, i: dict[str, Any]) -> Any:
    x[::2, ::3] = i["strided"]
    return x


def _set_slots(x: Any, i: dict[str, Any]) -> Any:
    x.reshape(-1, 16)[i["slots"].reshape(-1)] = i["tokens"].reshape(-1, 16)
    return x


_GATHER = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}


def _small_gather() -> tuple[str, dict[str, Any]]:
    return "gather 8 rows", {
        "indexops": lambda x, i: indexops.gather(
            x, i["rows"][:, None], **_GATHER, index_vector_dim=1, slice_sizes=(1, 16)
        ),
        "native": lambda x, i: x[i["rows"]],
        "jax": lambda x, i: x[i["rows"]],
    }


def _small_scatter_add() -> tuple[str, dict[str, Any], bool]:
    return (
        "scatter add 8 rows (in place)",
        {
            "indexops": lambda x, i: indexops.scatter(
                x, i["rows"][:, None], i["values"], **ROWS, update_computation="add", copy=False
            ),
            "native": _np_add_at,
            "jax": lambda x, i: x.at[i["rows"]].add(i["values"]),
        },
        False,
    )


def _small_scatter_set() -> tuple[str, dict[str, Any]]:
    return "scatter replace 8 rows (in place)", {
        "indexops": lambda x, i: indexops.scatter(
            x, i["unique"][:, None], i["values"], **ROWS, copy=False
        ),
        "native": _set_rows,
        "jax": lambda x, i: x.at[i["unique"]].set(i["values"]),
    }


def _small_dynamic_slice() -> tuple[str, dict[str, Any]]:
    return "dynamic_slice 4x4", {
        "indexops": lambda x, i: indexops.dynamic_slice(x, (5, 7), (4, 4)),
        "native": lambda x, i: x[5:9, 7:11],
        "jax": lambda x, i: __import__("jax").lax.dynamic_slice(x, (5, 7), (4, 4)),
    }


def _small_dynamic_update() -> tuple[str, dict[str, Any]]:
    return "dynamic_update_slice 4x4 (in place)", {
        "indexops": lambda x, i: indexops.dynamic_update_slice(x, i["block"], (5, 7), copy=False),
        "native": _set_block,
        "jax": lambda x, i: __import__("jax").lax.dynamic_update_slice(x, i["block"], (5, 7)),
    }


def _small_slice_scatter() -> tuple[str, dict[str, Any]]:
    return "slice_scatter ::2, ::3 (in place)", {
        "indexops": lambda x, i: indexops.slice_scatter(
            x, i["strided"], [0, 0], [16, 16], [2, 3], copy=False
        ),
        "native": _set_strided,
        "jax": lambda x, i: x.at[::2, ::3].set(i["strided"]),
    }


def _small_scatter_update() -> tuple[str, dict[str, Any]]:
    return "scatter_update 8 tokens (in place)", {
        "indexops": lambda x, i: indexops.scatter_update(x, -2, i["slots"], i["tokens"]),
        "native": _set_slots,
        "jax": lambda x, i: (
            x.reshape(-1, 16)
            .at[i["slots"].reshape(-1)]
            .set(i["tokens"].reshape(-1, 16))
            .reshape(x.shape)
        ),
        "shape": (4, 4, 1, 16),
    }


_SMALL = [
    _small_gather,
    _small_scatter_add,
    _small_scatter_set,
    _small_dynamic_slice,
    _small_dynamic_update,
    _small_slice_scatter,
    _small_scatter_update,
]
