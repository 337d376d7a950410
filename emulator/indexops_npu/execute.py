"""Run ``scatter_update`` the way the NPU does: view by view, tile by tile, in place.

Each tile stores its tokens' rows one after another (``TIndexOutcastMode2``), skipping
negative slots. Tiles run on different vector cores with no order between them, so a slot
written by two tiles has no defined winner on the device; the emulator keeps the last write
in row-major ``(i, j)`` order (the op's rule) and warns. Every check, including the bounds
of every slot, runs before the first write.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import array_api_compat as compat
import numpy as np

from indexops._backend import Backend, backend_of, namespace, writes_in_place
from indexops._combiners import resolve
from indexops._errors import value_error
from indexops._rows import take_rows, write_rows

from .cost import core_of_tiles, estimate, traffic
from .dtypes import dtype_name, itemsize
from .hardware import ATLAS_A2, Hardware
from .report import Report
from .rules import CheckResult, RuleViolationError, check_scatter_update
from .tiling import TileGrid, tile_grid, ub_bytes

OP = "emulate_scatter_update"
Array = Any


def emulate_scatter_update(
    input: Array,
    dim: int,
    index: Array,
    src: Array,
    *,
    view_shape: Any,
    tile_shape: Any,
    hardware: Hardware = ATLAS_A2,
    rules: str = "doc",
) -> Report:
    """Check, then execute ``scatter_update`` into ``input`` tile by tile, as on the NPU.

    Parameters
    ----------
    input, dim, index, src
        As for :func:`indexops.scatter_update`; ``input`` must be writable (NumPy, torch,
        CuPy, ...): it is updated in place.
    view_shape, tile_shape : sequence of int
        The tiling, as for :func:`~indexops_npu.check_scatter_update`.
    hardware : Hardware
        The device profile.
    rules : {"doc", "pypto-0.2.0"}
        The rule set to check against.

    Returns
    -------
    Report

    Raises
    ------
    RuleViolationError
        The rule set rejects the call, or (pypto-0.2.0) it compiles a call whose result is
        undefined (src shape or dtype not matching input).
    IndexOpsValueError
        A slot past the end (naming view, tile and ``(i, j)``), or an input that cannot be
        written in place. Nothing is written then.
    """
    xp = namespace(OP, input=input, index=index, src=src)
    writes_in_place(OP, input, False)
    result = _check(input, dim, index, src, view_shape, tile_shape, hardware, rules)
    assert result.tiling is not None  # a passing check always has one
    b, s = index.shape
    slots, d = _rows_shape(input.shape)
    grid = tile_grid(b, s, d, result.tiling)
    flat = _host(index).reshape(-1)
    _check_bounds(flat, grid, slots, s)
    winners = _last_writes(flat)
    stored = np.asarray([(flat[_positions(grid, t, s)] >= 0).sum() for t in range(grid.count)])
    _write_tiles(xp, input, src, (slots, d), flat, winners, grid, s)
    return _report(input, index, src, result, grid, flat, winners, stored, slots)


def _check(
    input: Array,
    dim: int,
    index: Array,
    src: Array,
    view_shape: Any,
    tile_shape: Any,
    hardware: Hardware,
    rules: str,
) -> CheckResult:
    result = check_scatter_update(
        tuple(input.shape),
        tuple(index.shape),
        tuple(src.shape),
        dtype=input.dtype,
        src_dtype=src.dtype,
        index_dtype=index.dtype,
        view_shape=view_shape,
        tile_shape=tile_shape,
        hardware=hardware,
        rules=rules,
        dim=dim,
    )
    if not result.ok:
        raise RuleViolationError(OP, result)
    undefined = [w for w in result.warnings if w.kind in ("shape", "dtype")]
    if undefined:
        raise RuleViolationError(
            OP + " (result undefined, not emulated)",
            CheckResult(tuple(undefined), (), None, None, rules, hardware),
        )
    return result


def _rows_shape(shape: tuple[int, ...]) -> tuple[int, int]:
    slots = shape[0] if len(shape) == 2 else shape[0] * shape[1]
    return slots, shape[-1]


def _host(x: Array) -> np.ndarray:
    """An integer array as int64 NumPy on the host."""
    backend = backend_of(x)
    if backend is Backend.TORCH:
        return x.detach().cpu().numpy().astype(np.int64)
    if backend is Backend.CUPY:
        return np.asarray(x.get(), dtype=np.int64)
    if backend is Backend.NUMPY or backend is Backend.JAX:
        return np.asarray(x, dtype=np.int64)
    return np.from_dlpack(x).astype(np.int64)


def _positions(grid: TileGrid, t: int, s: int) -> np.ndarray:
    """Flat row-major positions ``i*s + j`` of tile ``t``'s tokens, in its store order."""
    i = np.arange(grid.b0[t], grid.b1[t])
    j = np.arange(grid.s0[t], grid.s1[t])
    return (i[:, None] * s + j[None, :]).reshape(-1)


def _check_bounds(flat: np.ndarray, grid: TileGrid, slots: int, s: int) -> None:
    """Raise for the first slot past the end in execution order (view, tile, (i, j))."""
    if not (flat >= slots).any():
        return
    for t in range(grid.count):
        positions = _positions(grid, t, s)
        bad = positions[flat[positions] >= slots]
        if bad.size:
            i, j = divmod(int(bad[0]), s)
            raise value_error(
                OP,
                f"index[{i}, {j}]",
                int(flat[bad[0]]),
                f"a slot below {slots} (the rows of input); view {int(grid.view[t])} "
                f"(index [{grid.b0[t]}:{grid.b1[t]}, {grid.s0[t]}:{grid.s1[t]}]), tile {t} "
                "would store it outside input on the device; nothing was written",
            )


def _last_writes(flat: np.ndarray) -> np.ndarray:
    """Mask of tokens whose write survives: non-negative and last of its slot (row-major)."""
    keep = np.zeros(flat.shape, dtype=bool)
    valid = np.nonzero(flat >= 0)[0]
    reversed_slots = flat[valid][::-1]
    _, first_in_reversed = np.unique(reversed_slots, return_index=True)
    keep[valid[::-1][first_in_reversed]] = True
    return keep


def _write_tiles(
    xp: ModuleType,
    input: Array,
    src: Array,
    rows_shape: tuple[int, int],
    flat: np.ndarray,
    winners: np.ndarray,
    grid: TileGrid,
    s: int,
) -> None:
    """Store each tile's surviving rows (its column range of them) into ``input``."""
    replace = resolve(OP, xp, None)
    device = compat.device(input)
    values = xp.reshape(src, (flat.size, rows_shape[1]))
    for t in range(grid.count):
        positions = _positions(grid, t, s)
        positions = positions[winners[positions]]
        if positions.size == 0:
            continue
        rows = xp.asarray(flat[positions], device=device)
        tile_values = xp.take(values, xp.asarray(positions, device=device), axis=0)
        tile_values = _columns(xp, input, rows_shape, rows, tile_values, grid, t)
        write_rows(xp, input, rows_shape, rows, tile_values, replace, in_place=True, unique=True)


def _columns(
    xp: ModuleType,
    input: Array,
    rows_shape: tuple[int, int],
    rows: Array,
    values: Array,
    grid: TileGrid,
    t: int,
) -> Array:
    """Full rows to store for a tile that moves only columns ``[c0, c1)`` of ``d``."""
    c0, c1 = int(grid.c0[t]), int(grid.c1[t])
    if c0 == 0 and c1 == rows_shape[1]:
        return values
    old = take_rows(xp, xp.reshape(input, rows_shape), rows)
    return xp.concat([old[:, :c0], values[:, c0:c1], old[:, c1:]], axis=1)


def _report(
    input: Array,
    index: Array,
    src: Array,
    result: CheckResult,
    grid: TileGrid,
    flat: np.ndarray,
    winners: np.ndarray,
    stored: np.ndarray,
    slots: int,
) -> Report:
    hardware, tiling = result.hardware, result.tiling
    assert tiling is not None
    value_size = itemsize(dtype_name(input.dtype))
    index_size = itemsize(dtype_name(index.dtype))
    s = index.shape[1]
    position_tile = _position_tiles(grid, flat.size, s)
    slot_tile = np.full(slots, -1)
    slot_tile[flat[winners]] = position_tile[winners]
    shape = tuple(input.shape)
    cache_shape = (shape[0], shape[1]) if len(shape) == 4 else (shape[0], 1)
    warnings = [str(w) for w in result.warnings]
    warnings += _duplicate_warnings(flat, position_tile, s)
    return Report(
        cache_shape=cache_shape,
        tiling=tiling.clipped(index.shape[0], s, shape[-1]),
        grid=grid,
        tile_core=core_of_tiles(grid.count, hardware),
        tile_stored=stored,
        tile_ub_bytes=np.asarray(
            ub_bytes(
                grid.b1 - grid.b0,
                grid.s1 - grid.s0,
                grid.c1 - grid.c0,
                value_size,
                index_size,
                hardware,
            )
        ),
        slot_tile=slot_tile,
        traffic=traffic(grid, stored, value_size, index_size),
        estimate=estimate(grid, stored, value_size, index_size, hardware),
        padding=int((flat < 0).sum()),
        warnings=tuple(warnings),
        hardware=hardware,
        rules=result.rules,
    )


def _position_tiles(grid: TileGrid, size: int, s: int) -> np.ndarray:
    """For each token, the first tile (column chunk 0) that stores it."""
    tiles = np.full(size, -1)
    for t in np.nonzero(grid.c0 == 0)[0]:
        tiles[_positions(grid, int(t), s)] = t
    return tiles


def _duplicate_warnings(flat: np.ndarray, position_tile: np.ndarray, s: int) -> list[str]:
    """One warning for slots stored by more than one tile (no order across cores)."""
    valid = np.nonzero(flat >= 0)[0]
    pairs = np.unique(np.stack([flat[valid], position_tile[valid]]), axis=1)
    slots, counts = np.unique(pairs[0], return_counts=True)
    shared = slots[counts > 1]
    if shared.size == 0:
        return []
    example = int(shared[0])
    where = [divmod(int(p), s) for p in valid[flat[valid] == example]]
    tiles = sorted({int(position_tile[p]) for p in valid[flat[valid] == example]})
    return [
        f"{shared.size} slot(s) are written by more than one tile, e.g. slot {example} by "
        f"tiles {tiles} from tokens {where}: tiles run on different cores with no order on "
        "the device, so the surviving value is undefined there (the emulator keeps the last "
        "in row-major (i, j) order)"
    ]
