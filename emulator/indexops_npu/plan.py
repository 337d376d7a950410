"""The planner: every legal (view, tile) of a problem, ranked by the cost model.

Candidate views and tiles take, on each index axis, the powers of two below the extent and
the extent itself (2-D tiles: the divisors of ``s``, and under ``rules="pypto-0.2.0"``
multiples of ``s`` too). The estimate assumes every token stores a row (no padding).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from indexops._extension import as_tuple, scatter_update_src_shape

from .cost import Estimate, estimate, traffic
from .dtypes import dtype_name, itemsize
from .hardware import ATLAS_A2, Hardware
from .rules import (
    CheckResult,
    RuleViolationError,
    check_problem,
    check_scatter_update,
    require_settings,
)
from .tiling import divisors, tile_grid

OP = "plan_scatter_update"


@dataclass(frozen=True)
class Plan:
    """One legal tiling and its estimate.

    Attributes
    ----------
    view_shape, tile_shape : tuple of int
        The tiling, as passed to :func:`~indexops_npu.check_scatter_update`.
    views, tiles : int
        How many views and tiles it runs.
    ub_bytes : int
        UB bytes of its largest tile.
    estimate : Estimate
        The cost model's time.

    Examples
    --------
    >>> from indexops_npu import plan_scatter_update
    >>> plan = plan_scatter_update([64, 16], [4, 8], dtype="fp32", index_dtype="int32")[0]
    >>> plan.view_shape, plan.tile_shape, plan.tiles
    ((32, 16), (8, 16), 4)
    """

    view_shape: tuple[int, ...]
    tile_shape: tuple[int, ...]
    views: int
    tiles: int
    ub_bytes: int
    estimate: Estimate

    def __str__(self) -> str:
        view = "x".join(map(str, self.view_shape))
        tile = "x".join(map(str, self.tile_shape))
        return (
            f"view {view:>16}  tile {tile:>14}  views {self.views:>5}  tiles {self.tiles:>6}  "
            f"UB {self.ub_bytes:>6} B  {self.estimate.time_s * 1e6:9.2f} us"
        )


def plan_scatter_update(
    input_shape: Sequence[int],
    index_shape: Sequence[int],
    *,
    dtype: Any,
    index_dtype: Any,
    hardware: Hardware = ATLAS_A2,
    rules: str = "doc",
) -> list[Plan]:
    """The legal tilings of a ``scatter_update``, best estimated time first.

    Parameters
    ----------
    input_shape, index_shape : sequence of int
        The cache (or 2-D table) and the index; src is ``[b*s, d]`` or ``[b, s, 1, d]``.
    dtype, index_dtype : str or dtype
        As for :func:`~indexops_npu.check_scatter_update`.
    hardware : Hardware
        The device profile.
    rules : {"doc", "pypto-0.2.0"}
        The rule set the tilings must pass.

    Returns
    -------
    list of Plan
        Sorted by estimated time, then fewer views and tiles. The estimates are for one
        device as ``hardware.scope()`` says (on Atlas A3, one die of the package).

    Raises
    ------
    RuleViolationError
        When the problem itself (not its tiling) breaks the rules.

    Examples
    --------
    A paged bf16 cache with ``d = 576``: a tile holds at most 169 tokens in the UB.

    >>> from indexops_npu import plan_scatter_update
    >>> plans = plan_scatter_update([256, 128, 1, 576], [8, 256], dtype="bf16",
    ...                             index_dtype="int64")
    >>> plans[0].tile_shape, plans[0].tiles, plans[0].estimate.bound
    ((1, 128, 1, 576), 16, 'cores')
    """
    require_settings(OP, rules, hardware)
    input_shape = as_tuple(OP, "input_shape", input_shape)
    index_shape = as_tuple(OP, "index_shape", index_shape)
    value, index = dtype_name(dtype), dtype_name(index_dtype, "index_dtype")
    src_shape = _src_shape(input_shape, index_shape)
    problem = check_problem(
        input_shape, index_shape, src_shape, dtype=value, index_dtype=index, rules=rules
    )
    if not problem.ok:
        raise RuleViolationError(OP, problem)
    plans = []
    for view, tile in _candidates(input_shape, index_shape, rules):
        result = check_scatter_update(
            input_shape,
            index_shape,
            src_shape,
            dtype=value,
            index_dtype=index,
            view_shape=view,
            tile_shape=tile,
            hardware=hardware,
            rules=rules,
        )
        if result.ok:
            plans.append(_plan(result, view, tile, input_shape, index_shape, value, index))
    return sorted(plans, key=lambda p: (p.estimate.time_s, p.views, p.tiles))


def plan_tiling(
    input_shape: Sequence[int],
    index_shape: Sequence[int],
    src_shape: Sequence[int] | None = None,
    *,
    dtype: Any,
    index_dtype: Any,
    view_shape: Sequence[int],
    tile_shape: Sequence[int],
    hardware: Hardware = ATLAS_A2,
    rules: str = "doc",
) -> Plan:
    """The plan of one given tiling: its estimate, as :func:`plan_scatter_update` ranks it.

    ``src_shape`` defaults to the one ``input_shape`` and ``index_shape`` imply.

    Raises
    ------
    RuleViolationError
        When the rule set rejects the call or its tiling.

    Examples
    --------
    >>> from indexops_npu.plan import plan_tiling
    >>> one = plan_tiling([256, 64], [25, 4], dtype="bf16", index_dtype="int32",
    ...                   view_shape=[100, 64], tile_shape=[4, 64])
    >>> many = plan_tiling([256, 64], [25, 4], dtype="bf16", index_dtype="int32",
    ...                    view_shape=[4, 64], tile_shape=[4, 64])
    >>> (one.views, one.tiles), (many.views, many.tiles)
    ((1, 25), (25, 25))
    >>> many.estimate.time_s > 10 * one.estimate.time_s
    True
    """
    input_shape = as_tuple(OP, "input_shape", input_shape)
    index_shape = as_tuple(OP, "index_shape", index_shape)
    if src_shape is None:
        src_shape = _src_shape(input_shape, index_shape)
    value, index = dtype_name(dtype), dtype_name(index_dtype, "index_dtype")
    result = check_scatter_update(
        input_shape,
        index_shape,
        src_shape,
        dtype=value,
        index_dtype=index,
        view_shape=view_shape,
        tile_shape=tile_shape,
        hardware=hardware,
        rules=rules,
    )
    if not result.ok:
        raise RuleViolationError(OP, result)
    view, tile = as_tuple(OP, "view_shape", view_shape), as_tuple(OP, "tile_shape", tile_shape)
    return _plan(result, view, tile, input_shape, index_shape, value, index)


def _src_shape(input_shape: tuple[int, ...], index_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The src of the problem; for ranks that have none, input's, so only they are reported."""
    if len(index_shape) != 2 or len(input_shape) not in (2, 4):
        return input_shape
    return scatter_update_src_shape(input_shape, index_shape)


def _sizes(n: int) -> list[int]:
    """Powers of two below ``n``, and ``n``."""
    return sorted({2**k for k in range(max(n, 1).bit_length()) if 2**k < n} | {max(n, 1)})


def _candidates(
    input_shape: tuple[int, ...], index_shape: tuple[int, ...], rules: str
) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Candidate (view, tile) pairs of a problem that passes :func:`check_problem`."""
    (b, s), d = index_shape, input_shape[-1]
    if len(input_shape) == 2:
        tiles_s = divisors(s)
        for view_b in _sizes(b):
            multiples = [k * s for k in _sizes(view_b) if k > 1] if rules != "doc" else []
            for tile_bs in tiles_s + multiples:
                yield (view_b * s, d), (tile_bs, d)
        return
    for view_b, view_s in itertools.product(_sizes(b), _sizes(s)):
        for tile_b, tile_s in itertools.product(_sizes(view_b), _sizes(view_s)):
            yield (view_b, view_s, 1, d), (tile_b, tile_s, 1, d)


def _plan(
    result: CheckResult,
    view: tuple[int, ...],
    tile: tuple[int, ...],
    input_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    value: str,
    index: str,
) -> Plan:
    assert result.tiling is not None and result.ub_bytes is not None
    b, s = index_shape
    grid = tile_grid(b, s, input_shape[-1], result.tiling)
    moved = traffic(grid, grid.rows, itemsize(value), itemsize(index))
    cost = estimate(grid, moved, grid.rows, result.hardware)
    return Plan(view, tile, cost.views, grid.count, result.ub_bytes, cost)
