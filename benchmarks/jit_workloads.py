"""Workloads 1-6 under ``jax.jit``: jit(indexops op) against jit(``jax.lax`` op) (issue 10).

``python -m benchmarks.run --backend jax``. Both sides are compiled by XLA from traced
arrays: indices, updates and starts are arguments of the jitted function, never constants
baked into it, and both sides read the same arrays. They should be the same XLA work, so the
target is 1.10. Each indexops variant is timed against the ``jax.lax`` expression with the
same out-of-bounds behaviour (``Case.peers``), not against the fastest one. Sizes are those
of workloads 1-6 in ``workloads.py``; all of it is functional (JAX has no in-place writes).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import indexops

from .backends import Ctx
from .workloads import (
    ELEMENTS,
    ROWS,
    Case,
    Fn,
    _pick,
    _rng,
    element_problem,
    scatter_add_problem,
    strided_problem,
)

GATHER_ROWS = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}


def _jit(fn: Callable[..., Any], *args: Any) -> Fn:
    """``fn`` compiled once; each call passes the operand and ``args`` as traced arguments."""
    import jax

    compiled = jax.jit(fn)
    return lambda x: compiled(x, *args)


def row_gather(ctx: Ctx, quick: bool) -> Case:
    """1. Random rows of a [262144, 128] f32 table; each mode against lax.gather's own."""
    from jax import lax

    k, n, d = _pick(65536, 8192, quick), _pick(262144, 32768, quick), 128
    rng = _rng()
    host = rng.standard_normal((n, d), dtype=np.float32)
    idx_host = rng.integers(0, n, k)
    idx = ctx.asarray(idx_host[:, None])
    dims = lax.GatherDimensionNumbers(**GATHER_ROWS)
    modes = lax.GatherScatterMode
    peers = {
        "clip": modes.CLIP,
        "fill": modes.FILL_OR_DROP,
        "promise_in_bounds": modes.PROMISE_IN_BOUNDS,
    }

    def ours(mode: str) -> Fn:
        return _jit(
            lambda x, i: indexops.gather(
                x, i, **GATHER_ROWS, index_vector_dim=1, slice_sizes=(1, d), mode=mode
            ),
            idx,
        )

    def theirs(mode: Any) -> Fn:
        return _jit(lambda x, i: lax.gather(x, i, dims, (1, d), mode=mode), idx)

    return Case(
        "1 row gather (jit)",
        lambda: host.copy(),
        {variant: ours(variant) for variant in peers},
        {f"lax.gather {mode.name}": theirs(mode) for mode in peers.values()},
        host[idx_host],
        bytes_moved=2 * k * d * 4 + k * 4,
        peers={variant: f"lax.gather {mode.name}" for variant, mode in peers.items()},
    )


def scatter_add(ctx: Ctx, quick: bool) -> Case:
    """2. Add 262144 rows into a [65536, 64] f32 table, random (repeating) rows."""
    from jax import lax

    host, idx_host, upd_host, expected = scatter_add_problem(quick)
    (k, d) = upd_host.shape
    idx, upd = ctx.asarray(idx_host[:, None]), ctx.asarray(upd_host)
    dims = lax.ScatterDimensionNumbers(
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    modes = lax.GatherScatterMode
    peers = {
        "drop_window": modes.FILL_OR_DROP,
        "clip": modes.CLIP,
        "drop": modes.FILL_OR_DROP,
        "promise_in_bounds": modes.PROMISE_IN_BOUNDS,
    }

    def ours(mode: str) -> Fn:
        return _jit(
            lambda x, i, u: indexops.scatter(x, i, u, **ROWS, update_computation="add", mode=mode),
            idx,
            upd,
        )

    def theirs(mode: Any) -> Fn:
        return _jit(lambda x, i, u: lax.scatter_add(x, i, u, dims, mode=mode), idx, upd)

    return Case(
        "2 scatter-add, duplicates (jit)",
        lambda: host.copy(),
        {variant: ours(variant) for variant in peers},
        {f"lax.scatter_add {mode.name}": theirs(mode) for mode in dict.fromkeys(peers.values())},
        expected.astype(np.float32),
        bytes_moved=k * d * 4 * 3 + k * 4,
        exact=False,
        peers={variant: f"lax.scatter_add {mode.name}" for variant, mode in peers.items()},
        notes={
            "drop": "not the same semantics: indexops drops each element outside, XLA's "
            "FILL_OR_DROP the whole window; equal here, where every row is in bounds"
        },
    )


def paged_kv_write(ctx: Ctx, quick: bool) -> Case:
    """3. scatter_update(copy=True) of 4096 tokens, the last eighth of each sequence padding
    (-1), into a [2048, 16, 1, 1024] cache, against ``.at[slots].set(mode="drop")``."""
    blocks, size, d = _pick(2048, 256, quick), 16, 1024
    b, s = 4, _pick(1024, 128, quick)
    rng = _rng()
    host = rng.standard_normal((blocks, size, 1, d), dtype=np.float32)
    slots_host = rng.permutation(blocks * size)[: b * s].reshape(b, s)
    slots_host[:, s - s // 8 :] = -1
    src_host = rng.standard_normal((b, s, 1, d), dtype=np.float32)
    written = slots_host.reshape(-1) >= 0
    expected = host.reshape(-1, d).copy()
    expected[slots_host.reshape(-1)[written]] = src_host.reshape(-1, d)[written]
    slots, src = ctx.asarray(slots_host), ctx.asarray(src_host)

    def drop_padding(cache: Any, slots: Any, src: Any) -> Any:
        import jax.numpy as jnp

        rows = cache.shape[0] * cache.shape[1]
        flat = slots.reshape(-1)
        targets = jnp.where(flat < 0, rows, flat)  # -1 would wrap to the last slot
        table = cache.reshape(rows, d).at[targets].set(src.reshape(-1, d), mode="drop")
        return table.reshape(cache.shape)

    return Case(
        "3 paged KV write (jit, copy)",
        lambda: host.copy(),
        {"scatter_update": _jit(_scatter_update_copy, slots, src)},
        {".at[slots].set(drop)": _jit(drop_padding, slots, src)},
        expected.reshape(host.shape),
        bytes_moved=2 * host.nbytes + 2 * int(written.sum()) * d * 4 + b * s * 4,
    )


def _scatter_update_copy(cache: Any, slots: Any, src: Any) -> Any:
    return indexops.scatter_update(cache, -2, slots, src, copy=True)


def element_scatter(ctx: Ctx, quick: bool) -> Case:
    """4. Replace 4M unique positions of a 16M f32 vector (``x.at[i].set``)."""
    host, idx_host, upd_host, expected = element_problem(quick)
    (n,), (k,) = host.shape, upd_host.shape
    idx, upd = ctx.asarray(idx_host[:, None]), ctx.asarray(upd_host)
    variants = {  # indexops variant -> (unique_indices, mode), the same for x.at[].set
        "unique=True": (True, "drop"),
        "unique=True,promise": (True, "promise_in_bounds"),
        "unique=False": (False, "drop"),
    }

    def ours(unique: bool, mode: str) -> Fn:
        return _jit(
            lambda x, i, u: indexops.scatter(x, i, u, **ELEMENTS, unique_indices=unique, mode=mode),
            idx,
            upd,
        )

    def theirs(unique: bool, mode: str) -> Fn:
        return _jit(
            lambda x, i, u: x.at[i[:, 0]].set(u, unique_indices=unique, mode=mode), idx, upd
        )

    def peer(unique: bool, mode: str) -> str:
        return f".at[].set(unique={unique}, {mode})"

    return Case(
        "4 element scatter 1-D (jit)",
        lambda: host.copy(),
        {variant: ours(*flags) for variant, flags in variants.items()},
        {peer(*flags): theirs(*flags) for flags in variants.values()},
        expected,
        bytes_moved=2 * n * 4 + 2 * k * 4 + k * 4,
        peers={variant: peer(*flags) for variant, flags in variants.items()},
        notes={
            "unique=False": "not the same semantics: indexops keeps the last write among "
            "duplicates, XLA leaves the winner unspecified (there are none here)"
        },
    )


def dynamic_slice(ctx: Ctx, quick: bool) -> Case:
    """5a. A [1024, 1024] window of [4096, 4096] f32 at traced starts."""
    from jax import lax

    n, m = _pick(4096, 1024, quick), _pick(1024, 256, quick)
    start = (n // 3, n // 5)
    host = _rng().standard_normal((n, n), dtype=np.float32)
    starts = ctx.asarray(np.array(start))
    return Case(
        "5 dynamic_slice (jit, traced starts)",
        lambda: host.copy(),
        {"": _jit(lambda x, s: indexops.dynamic_slice(x, s, (m, m)), starts)},
        {
            "lax.dynamic_slice": _jit(
                lambda x, s: lax.dynamic_slice(x, (s[0], s[1]), (m, m)), starts
            )
        },
        host[start[0] : start[0] + m, start[1] : start[1] + m],
        bytes_moved=2 * m * m * 4,
    )


def dynamic_update(ctx: Ctx, quick: bool) -> Case:
    """5b. A [1024, 1024] block into (a copy of) [4096, 4096] f32 at traced starts."""
    from jax import lax

    n, m = _pick(4096, 1024, quick), _pick(1024, 256, quick)
    start = (n // 3, n // 5)
    rng = _rng()
    host = rng.standard_normal((n, n), dtype=np.float32)
    upd_host = rng.standard_normal((m, m), dtype=np.float32)
    expected = host.copy()
    expected[start[0] : start[0] + m, start[1] : start[1] + m] = upd_host
    upd, starts = ctx.asarray(upd_host), ctx.asarray(np.array(start))

    def theirs(x: Any, u: Any, s: Any) -> Any:
        return lax.dynamic_update_slice(x, u, (s[0], s[1]))

    return Case(
        "5 dynamic_update_slice (jit, traced starts)",
        lambda: host.copy(),
        {"": _jit(lambda x, u, s: indexops.dynamic_update_slice(x, u, s), upd, starts)},
        {"lax.dynamic_update_slice": _jit(theirs, upd, starts)},
        expected,
        bytes_moved=2 * n * n * 4 + 2 * m * m * 4,
    )


def strided_slice_scatter(ctx: Ctx, quick: bool) -> Case:
    """6. Every 2nd row and 3rd column of (a copy of) [4096, 4096] f32 (static slices)."""
    n, key, host, upd_host, expected = strided_problem(quick)
    upd = ctx.asarray(upd_host)

    def ours(x: Any, u: Any) -> Any:
        return indexops.slice_scatter(x, u, [0, 0], [n, n], [2, 3], [0, 1])

    return Case(
        "6 strided slice_scatter (jit)",
        lambda: host.copy(),
        {"": _jit(ours, upd)},
        {"x.at[::2, ::3].set": _jit(lambda x, u: x.at[key].set(u), upd)},
        expected,
        bytes_moved=2 * n * n * 4 + 2 * upd_host.nbytes,
    )


def build_jit(ctx: Ctx, quick: bool) -> list[Callable[[], Case]]:
    """Builders for the jit workloads (built lazily, one at a time, to bound memory)."""
    workloads = (
        row_gather,
        scatter_add,
        paged_kv_write,
        element_scatter,
        dynamic_slice,
        dynamic_update,
        strided_slice_scatter,
    )
    return [functools.partial(make, ctx, quick) for make in workloads]
