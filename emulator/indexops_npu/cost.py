"""The cost model: an estimated kernel time for a tile sequence.

Assumptions (each one a simplification, stated so a user can judge the estimate):

1. Tiles go to the vector cores round-robin in execution order (tile ``t`` on core
   ``t mod cores``); a core runs its tiles one after another, with no double buffering.
2. One tile costs ``tile_overhead`` cycles, plus loading its src and index blocks from GM
   at ``gm_read_bytes_per_cycle``, plus per token it stores (non-negative slot) one row
   store: ``store_issue`` cycles and the row's bytes at ``gm_write_bytes_per_cycle``.
3. A scheduler hands out tiles one at a time, ``dispatch_cycles_per_tile`` each.
4. All cores share the HBM bandwidth.

The estimate is the largest of the three limits::

    time = max(max_core sum_tiles(tile_cycles) / clock,
               gm_bytes / hbm_bytes_per_s,
               tiles * dispatch_cycles_per_tile / clock)

It ranks tilings; it is not a measurement. The constants of 2 and 3 are assumptions (see
:class:`~indexops_npu.hardware.Hardware`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .hardware import Hardware
from .tiling import TileGrid


@dataclass(frozen=True)
class Estimate:
    """An estimated kernel time and its three limits, in seconds.

    Attributes
    ----------
    time_s : float
        The estimate: the largest of the three limits.
    cores_s, hbm_s, dispatch_s : float
        The busiest core's time, the HBM transfer time and the scheduling time.
    bound : {"cores", "hbm", "dispatch"}
        The limit that sets ``time_s``.

    Examples
    --------
    >>> from indexops_npu import plan_scatter_update
    >>> plan = plan_scatter_update([64, 16], [4, 8], dtype="fp32", index_dtype="int32")[0]
    >>> plan.estimate.time_s == max(plan.estimate.cores_s, plan.estimate.hbm_s,
    ...                             plan.estimate.dispatch_s)
    True
    """

    time_s: float
    cores_s: float
    hbm_s: float
    dispatch_s: float
    bound: str


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


def core_of_tiles(count: int, hardware: Hardware) -> np.ndarray:
    """The vector core of each tile (round-robin)."""
    return np.arange(count) % hardware.vector_cores


def estimate(moved: Traffic, stored: np.ndarray, hardware: Hardware) -> Estimate:
    """Estimate the kernel time of tiles that move ``moved`` and store ``stored`` rows each.

    Parameters
    ----------
    moved : Traffic
        GM bytes of each tile, from :func:`traffic`.
    stored : ndarray
        Rows each tile stores, one entry per tile in execution order.
    hardware : Hardware
        The device profile.
    """
    tiles = stored.shape[0]
    rows_out = stored * hardware.store_issue_cycles
    cycles = (
        hardware.tile_overhead_cycles
        + moved.read / hardware.gm_read_bytes_per_cycle
        + moved.written / hardware.gm_write_bytes_per_cycle
        + rows_out
    )
    per_core = np.bincount(
        core_of_tiles(tiles, hardware), weights=cycles, minlength=hardware.vector_cores
    )
    limits = {
        "cores": float(per_core.max(initial=0.0)) / hardware.clock_hz,
        "hbm": moved.total / hardware.hbm_bytes_per_s,
        "dispatch": tiles * hardware.dispatch_cycles_per_tile / hardware.clock_hz,
    }
    bound = max(limits, key=lambda name: limits[name])
    return Estimate(limits[bound], limits["cores"], limits["hbm"], limits["dispatch"], bound)
