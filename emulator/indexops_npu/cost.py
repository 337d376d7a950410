"""The cost model: when each tile runs, and an estimated kernel time.

Assumptions (each one a simplification, stated so a user can judge the estimate):

1. Views run one after another: a view begins when the last tile of the one before has
   ended, and every view after the first starts with a fixed ``view_startup_cycles`` before
   its first tile. (The first view has none: PyPTO's SIM costs of one-view kernels, about
   0.2 us per tile, leave no room for one; see :mod:`indexops_npu.calibration`.)
2. Inside a view a scheduler hands out the tiles one at a time, ``dispatch_cycles_per_tile``
   each, round-robin to the vector cores (the view's ``k``-th tile on core ``k mod cores``).
   A tile starts when it has been handed out and its core is free; a core runs its tiles
   one after another, with no double buffering.
3. One tile costs ``tile_overhead_cycles``, plus loading its src and index blocks from GM at
   ``gm_read_bytes_per_cycle``, plus per token it stores (non-negative slot) one row store:
   ``store_issue_cycles`` and the row's bytes at ``gm_write_bytes_per_cycle``.
4. All cores share the HBM bandwidth: a view takes at least its GM bytes over
   ``hbm_bytes_per_s`` after its start-up.

So a view's time is its start-up plus the end of its last tile, and the kernel's time is the
sum over views: with the same tiles, more views cost more. The constants of 1 to 3 are
fitted to PyPTO 0.2.0's SIM cost model (:mod:`indexops_npu.calibration`); they are fields of
:class:`~indexops_npu.hardware.Hardware`. The estimate ranks tilings; it is not a
measurement.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .hardware import Hardware
from .tiling import TileGrid

LIMITS = ("cores", "dispatch", "hbm")
"""What can bound the tiles of a view: the busiest core, the scheduler, or HBM."""


@dataclass(frozen=True)
class Schedule:
    """When each tile and each view runs, in seconds from the kernel's start.

    Per tile (execution order): ``tile_core``, ``tile_start_s``, ``tile_end_s``; per view:
    ``view_start_s`` (its start-up begins), ``view_tiles_s`` (its first tile may begin) and
    ``view_end_s``.
    """

    tile_core: np.ndarray
    tile_start_s: np.ndarray
    tile_end_s: np.ndarray
    view_start_s: np.ndarray
    view_tiles_s: np.ndarray
    view_end_s: np.ndarray


@dataclass(frozen=True)
class Estimate:
    """An estimated kernel time, and what it is made of (times in seconds).

    Attributes
    ----------
    time_s : float
        The estimate: the views' start-ups plus, per view, the later of its last tile's end
        and its HBM time.
    startup_s : float
        The start-ups of the views after the first.
    cores_s, dispatch_s, hbm_s : float
        Summed over views: the busiest core's work, the scheduler's hand-out time and the
        HBM time.
    bound : {"cores", "dispatch", "hbm"}
        The largest of those three (one of ``LIMITS``).
    views, tiles : int
        How many views and tiles the kernel runs.
    waves : int
        Rounds of tiles over the cores, summed over views.
    cores : int
        The vector cores the tiles are spread over.
    schedule : Schedule
        When each view and tile runs.

    Examples
    --------
    >>> from indexops_npu import plan_scatter_update
    >>> plan = plan_scatter_update([64, 16], [4, 8], dtype="fp32", index_dtype="int32")[0]
    >>> plan.estimate.views, plan.estimate.startup_s
    (1, 0.0)
    """

    time_s: float
    startup_s: float
    cores_s: float
    dispatch_s: float
    hbm_s: float
    bound: str
    views: int
    tiles: int
    waves: int
    cores: int
    schedule: Schedule = field(repr=False, compare=False)

    def explain(self) -> str:
        """Why the estimate is what it is, in one line.

        Returns
        -------
        str
            The views and their start-ups, the tiles and waves, the bound and the total.

        Examples
        --------
        >>> from indexops_npu import plan_scatter_update
        >>> plans = plan_scatter_update([256, 64], [25, 4], dtype="bf16", index_dtype="int32")
        >>> print(plans[0].estimate.explain())
        1 view, no start-up + 25 tiles in 1 wave on 48 cores 5.23 us
        (dispatch-bound: dispatch 4.86, busiest core 0.36, HBM 0.02 us) = 5.23 us
        >>> many = [p for p in plans if p.views == 25 and p.tiles == 25][0]
        >>> print(many.estimate.explain())
        25 views, 24 x 4.38 us start-up + 25 tiles in 25 waves on 48 cores 13.98 us
        (cores-bound: dispatch 4.86, busiest core 9.11, HBM 0.02 us) = 119.06 us
        """
        us = 1e6
        later = self.views - 1
        startup = (
            f"{later} x {self.startup_s / later * us:.2f} us start-up" if later else "no start-up"
        )
        return (
            f"{self.views} view{'s' * (self.views != 1)}, {startup} + {self.tiles} tiles "
            f"in {self.waves} wave{'s' * (self.waves != 1)} on {self.cores} cores "
            f"{(self.time_s - self.startup_s) * us:.2f} us ({self.bound}-bound: dispatch "
            f"{self.dispatch_s * us:.2f}, busiest core {self.cores_s * us:.2f}, "
            f"HBM {self.hbm_s * us:.2f} us) = {self.time_s * us:.2f} us"
        )


@dataclass(frozen=True)
class Traffic:
    """GM bytes per tile: read (src and index blocks) and written (rows stored)."""

    read: np.ndarray
    written: np.ndarray

    @property
    def total(self) -> int:
        """All GM bytes moved."""
        return int(self.read.sum() + self.written.sum())


def traffic(grid: TileGrid, stored: np.ndarray, value_size: int, index_size: int) -> Traffic:
    """GM traffic of each tile; ``stored`` is the number of rows each tile stores."""
    cols = grid.c1 - grid.c0
    read = grid.rows * cols * value_size + grid.rows * index_size
    return Traffic(read, stored * cols * value_size)


def tile_cycles(moved: Traffic, stored: np.ndarray, hardware: Hardware) -> np.ndarray:
    """The work of each tile on its core, in cycles (assumption 3)."""
    return (
        hardware.tile_overhead_cycles
        + moved.read / hardware.gm_read_bytes_per_cycle
        + moved.written / hardware.gm_write_bytes_per_cycle
        + stored * hardware.store_issue_cycles
    )


def _views(view: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For tiles in execution order: each tile's view rank, and each view's first tile and size."""
    first = np.flatnonzero(np.diff(view, prepend=-1) != 0) if view.size else np.zeros(0, int)
    sizes = np.diff(np.append(first, view.size))
    rank = np.repeat(np.arange(first.size), sizes)
    return rank, first, sizes


def _core_ends(group: np.ndarray, ready: np.ndarray, work: np.ndarray) -> np.ndarray:
    """End of each tile when each group (one core in one view) runs its tiles in order.

    ``end_k = max(ready_k, end_{k-1}) + work_k``, solved for all groups at once as
    ``cum_k + max_{j <= k}(ready_j - cum_{j-1})`` with ``cum`` the group's running work.
    """
    order = np.lexsort((np.arange(group.size), group))
    g, r, w = group[order], ready[order], work[order]
    cum = np.cumsum(w)
    starts = np.flatnonzero(np.diff(g, prepend=-1) != 0)
    cum -= np.repeat(cum[starts] - w[starts], np.diff(np.append(starts, g.size)))
    slack = r - (cum - w)
    # a running maximum that restarts in each group: lift each group above the previous ones
    step = float(np.abs(slack).max(initial=0.0)) * 2 + 1
    lift = step * np.cumsum(np.diff(g, prepend=g[:1]) != 0)
    ends = np.empty_like(cum)
    ends[order] = cum + np.maximum.accumulate(slack + lift) - lift
    return ends


def estimate(grid: TileGrid, moved: Traffic, stored: np.ndarray, hardware: Hardware) -> Estimate:
    """Schedule the tiles of ``grid`` and estimate the kernel time.

    Parameters
    ----------
    grid : TileGrid
        Every tile in execution order (views are consecutive runs of it).
    moved : Traffic
        GM bytes of each tile, from :func:`traffic`.
    stored : ndarray
        Rows each tile stores, one entry per tile in execution order.
    hardware : Hardware
        The device profile.
    """
    clock, cores = hardware.clock_hz, hardware.vector_cores
    rank, first, sizes = _views(grid.view)
    k = np.arange(grid.count) - first[rank]
    core = k % cores
    work = tile_cycles(moved, stored, hardware)
    ready = (k + 1) * hardware.dispatch_cycles_per_tile
    ends = _core_ends(rank * cores + core, ready, work)
    per_view = np.zeros(first.size)
    np.maximum.at(per_view, rank, ends)
    busiest = np.zeros((first.size, cores))
    np.add.at(busiest, (rank, core), work)
    dispatch = sizes * hardware.dispatch_cycles_per_tile
    bytes_per_view = np.bincount(rank, weights=moved.read + moved.written, minlength=first.size)
    hbm = bytes_per_view / hardware.hbm_bytes_per_s * clock
    body = np.maximum(per_view, hbm)
    startup = np.full(first.size, hardware.view_startup_cycles)
    startup[:1] = 0.0
    view_start = np.concatenate(([0.0], np.cumsum(startup + body)[:-1]))
    tiles_at = view_start + startup
    schedule = Schedule(
        tile_core=core,
        tile_start_s=(tiles_at[rank] + ends - work) / clock,
        tile_end_s=(tiles_at[rank] + ends) / clock,
        view_start_s=view_start / clock,
        view_tiles_s=tiles_at / clock,
        view_end_s=(tiles_at + body) / clock,
    )
    limits = {
        "cores": float(busiest.max(axis=1, initial=0.0).sum()) / clock,
        "dispatch": float(dispatch.sum()) / clock,
        "hbm": float(hbm.sum()) / clock,
    }
    return Estimate(
        time_s=float((startup + body).sum()) / clock,
        startup_s=float(startup.sum()) / clock,
        cores_s=limits["cores"],
        dispatch_s=limits["dispatch"],
        hbm_s=limits["hbm"],
        bound=max(LIMITS, key=lambda name: limits[name]),
        views=int(first.size),
        tiles=grid.count,
        waves=int((-(-sizes // cores)).sum()),
        cores=cores,
        schedule=schedule,
    )
