"""The published PyPTO 0.2.0 SIM costs the cost model is fitted to, and how well it fits.

PyPTO's CPU ``RunMode.SIM`` compiles a kernel and reports a cycle model's "AICore
End-to-End Time" (unit unstated). Three series of ``scatter_update`` tilings were compiled
there; within a series the problem is fixed and only the view or the tile changes:

- ``views 2-D``: input [256, 64] bf16, index [25, 4] int32, tile [4, 64]; 1, 3, 13, 25 views.
- ``views 4-D``: input [32, 8, 1, 64] int32, index [5, 24] int64, tile [1, 8, 1, 64];
  1, 3, 8 views.
- ``tiles 4-D``: input [256, 128, 1, 576] bf16, index [8, 256] int64, one view, tiles
  [1, 16|64|128, 1, 576].

The fit reads the SIM's unit as microseconds (an assumption: only ratios are known) and
chose the four fitted constants of :class:`~indexops_npu.hardware.Hardware`
(``view_startup_cycles``, ``dispatch_cycles_per_tile``, ``tile_overhead_cycles``,
``store_issue_cycles``) to minimise the squared log error on the points of
:data:`FIT_POINTS`; the others are held back to check it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .hardware import ATLAS_A2, Hardware
from .plan import plan_tiling


@dataclass(frozen=True)
class SimPoint:
    """One compile in PyPTO 0.2.0's SIM: the call, its tiling, and the reported cost."""

    series: str
    input_shape: tuple[int, ...]
    index_shape: tuple[int, int]
    dtype: str
    index_dtype: str
    view_shape: tuple[int, ...]
    tile_shape: tuple[int, ...]
    sim_cost: float

    @property
    def name(self) -> str:
        """The series and the tiling, e.g. ``views 2-D, view 100x64``."""
        what = "tile" if self.series.startswith("tiles") else "view"
        shape = self.tile_shape if what == "tile" else self.view_shape
        return f"{self.series}, {what} {'x'.join(map(str, shape))}"


def _series(
    series: str,
    problem: tuple[tuple[int, ...], tuple[int, int], str, str],
    tilings: list[tuple[tuple[int, ...], tuple[int, ...], float]],
) -> list[SimPoint]:
    return [SimPoint(series, *problem, view, tile, cost) for view, tile, cost in tilings]


SIM_POINTS: tuple[SimPoint, ...] = (
    *_series(
        "views 2-D",
        ((256, 64), (25, 4), "bf16", "int32"),
        [
            ((100, 64), (4, 64), 4.89),
            ((40, 64), (4, 64), 21.69),
            ((8, 64), (4, 64), 61.48),
            ((4, 64), (4, 64), 82.29),
        ],
    ),
    *_series(
        "views 4-D",
        ((32, 8, 1, 64), (5, 24), "int32", "int64"),
        [
            ((5, 24, 1, 64), (1, 8, 1, 64), 3.98),
            ((5, 10, 1, 64), (1, 8, 1, 64), 24.92),
            ((3, 7, 1, 64), (1, 8, 1, 64), 56.6),
        ],
    ),
    *_series(
        "tiles 4-D",
        ((256, 128, 1, 576), (8, 256), "bf16", "int64"),
        [
            ((8, 256, 1, 576), (1, 16, 1, 576), 26.91),
            ((8, 256, 1, 576), (1, 64, 1, 576), 6.98),
            ((8, 256, 1, 576), (1, 128, 1, 576), 5.16),
        ],
    ),
)
"""Every published point: the reference notes' section 7 (views) and section 2 (tiles)."""

FIT_POINTS = (0, 3, 4, 6, 7, 9)
"""Positions in :data:`SIM_POINTS` the constants were fitted to: in each series the ends.
The middle points (3 and 13 views in 2-D, 3 views in 4-D, the 64-token tile) are held back."""


def model_cost_us(point: SimPoint, hardware: Hardware = ATLAS_A2) -> float:
    """The cost model's time for ``point``'s tiling, in microseconds."""
    plan = plan_tiling(
        point.input_shape,
        point.index_shape,
        dtype=point.dtype,
        index_dtype=point.index_dtype,
        view_shape=point.view_shape,
        tile_shape=point.tile_shape,
        hardware=hardware,
    )
    return plan.estimate.time_s * 1e6


def relative_errors(hardware: Hardware = ATLAS_A2) -> np.ndarray:
    """``model / sim - 1`` for every point of :data:`SIM_POINTS`.

    Examples
    --------
    >>> import numpy as np
    >>> from indexops_npu.calibration import FIT_POINTS, relative_errors
    >>> errors = relative_errors()
    >>> held_back = np.delete(errors, FIT_POINTS)
    >>> float(np.abs(errors).max()) < 0.65, float(np.abs(held_back).max()) < 0.65
    (True, True)
    """
    model = np.array([model_cost_us(p, hardware) for p in SIM_POINTS])
    sim = np.array([p.sim_cost for p in SIM_POINTS])
    return model / sim - 1


def ranks(values: np.ndarray) -> np.ndarray:
    """The rank of each value (1 = smallest); tied values share their mean rank."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    rank = np.empty(values.size)
    rank[order] = np.arange(1, values.size + 1)
    for value in np.unique(values):
        tied = values == value
        rank[tied] = rank[tied].mean()
    return rank


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation of ``a`` and ``b`` (Pearson's on their ranks).

    Examples
    --------
    >>> from indexops_npu.calibration import spearman
    >>> spearman([1, 2, 3, 4], [10, 20, 30, 40]), spearman([1, 2, 3], [3, 2, 1])
    (1.0, -1.0)
    >>> round(spearman([1, 2, 3, 4], [1, 3, 2, 4]), 2)
    0.8
    """
    ra, rb = ranks(np.asarray(a)), ranks(np.asarray(b))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    return float((ra * rb).sum() / np.sqrt((ra * ra).sum() * (rb * rb).sum()))
