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

import numpy as np

from indexops._extension import (
    Array,
    host_int64,
    namespace,
    put_rows,
    require_in_place,
    take_rows,
    value_error,
)

from .hardware import ATLAS_A2, Hardware
from .report import Report, build_report
from .rules import CheckResult, RuleViolationError, check_scatter_update
from .tiling import TileGrid, tile_grid, token_positions

OP = "emulate_scatter_update"


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
    input : array
        The 2-D table or 4-D paged cache, as for :func:`indexops.scatter_update`; it must
        be writable (NumPy, torch, CuPy, ...): it is updated in place.
    dim : int
        Must be -2.
    index : array
        ``[b, s]`` integer slots; negative slots are padding and are skipped.
    src : array
        ``[b*s, d]`` (2-D) or ``[b, s, 1, d]`` (4-D), of ``input``'s dtype.
    view_shape, tile_shape : sequence of int
        The tiling, as for :func:`~indexops_npu.check_scatter_update`.
    hardware : Hardware
        The device profile.
    rules : {"doc", "pypto-0.2.0"}
        The rule set to check against.

    Returns
    -------
    Report
        Tiles, UB use, GM traffic, core assignment, the estimated time and warnings.

    Raises
    ------
    RuleViolationError
        The rule set rejects the call, or (pypto-0.2.0) it compiles a call whose result is
        undefined (src shape or dtype not matching input, see
        :attr:`Violation.undefined <indexops_npu.Violation>`): those are checked, never run.
    IndexOpsValueError
        A slot past the end (naming view, tile and ``(i, j)``), or an input that cannot be
        written in place. Nothing is written then.

    Examples
    --------
    A cache of 4 blocks of 4 slots; one view of all 6 tokens, cut into tiles of 2 tokens:

    >>> import numpy as np
    >>> from indexops_npu import emulate_scatter_update
    >>> cache = np.zeros((4, 4, 1, 2), np.float32)
    >>> slots = np.array([[1, 2, 3], [9, -1, 2]])
    >>> tokens = np.arange(12, dtype=np.float32).reshape(2, 3, 1, 2)
    >>> report = emulate_scatter_update(cache, -2, slots, tokens,
    ...                                 view_shape=(2, 3, 1, 2), tile_shape=(1, 2, 1, 2))
    >>> cache[2, 1, 0], report.tiles, report.padding
    (array([6., 7.], dtype=float32), 4, 1)
    """
    xp = namespace(OP, input=input, index=index, src=src)
    require_in_place(OP, input)
    result = _check(input, dim, index, src, view_shape, tile_shape, hardware, rules)
    assert result.tiling is not None  # a passing check always has one
    b, s = index.shape
    slots, d = _rows_shape(input.shape)
    grid = tile_grid(b, s, d, result.tiling)
    flat = host_int64(index).reshape(-1)
    _check_bounds(flat, grid, slots, s)
    winners = _last_writes(flat)
    _write_tiles(xp, input, src, (slots, d), flat, winners, grid, s)
    return build_report(input, index, result, grid, flat, winners)


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
    return require_runnable(result)


def require_runnable(result: CheckResult) -> CheckResult:
    """``result`` when its call can be emulated, else a :class:`RuleViolationError`: a
    violation, or a warning of a call whose result is undefined.

    The command line checks with it before it makes the arrays of a run.
    """
    if not result.ok:
        raise RuleViolationError(OP, result)
    undefined = [w for w in result.warnings if w.undefined]
    if undefined:
        raise RuleViolationError(
            OP + " (result undefined, not emulated)",
            CheckResult(tuple(undefined), (), None, None, result.rules, result.hardware),
        )
    return result


def _rows_shape(shape: tuple[int, ...]) -> tuple[int, int]:
    slots = shape[0] if len(shape) == 2 else shape[0] * shape[1]
    return slots, shape[-1]


def _check_bounds(flat: np.ndarray, grid: TileGrid, slots: int, s: int) -> None:
    """Raise for the first slot past the end in execution order (view, tile, (i, j))."""
    if not (flat >= slots).any():
        return
    for t in range(grid.count):
        positions = token_positions(grid, t, s)
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
    """Store each tile's surviving rows (its column range of them) into ``input``. Every
    row of ``src`` is read (into a new array) before the first tile writes: ``src`` may
    view ``input`` (a block copy within one cache), and the result is what the rows held
    before the call, as ``indexops.scatter_update`` gives it."""
    src_rows_shape = (flat.size, rows_shape[1])
    src = take_rows(src, src_rows_shape, np.arange(flat.size))
    for t in range(grid.count):
        positions = token_positions(grid, t, s)
        positions = positions[winners[positions]]
        if positions.size == 0:
            continue
        rows = flat[positions]
        values = take_rows(src, src_rows_shape, positions)
        put_rows(input, rows_shape, rows, _columns(xp, input, rows_shape, rows, values, grid, t))


def _columns(
    xp: ModuleType,
    input: Array,
    rows_shape: tuple[int, int],
    rows: np.ndarray,
    values: Array,
    grid: TileGrid,
    t: int,
) -> Array:
    """Full rows to store for a tile that moves only columns ``[c0, c1)`` of ``d``."""
    c0, c1 = int(grid.c0[t]), int(grid.c1[t])
    if c0 == 0 and c1 == rows_shape[1]:
        return values
    old = take_rows(input, rows_shape, rows)
    return xp.concat([old[:, :c0], values[:, c0:c1], old[:, c1:]], axis=1)
