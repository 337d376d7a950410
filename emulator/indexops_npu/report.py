"""What an emulated ``scatter_update`` did: tiles, UB, GM traffic, cores, time, warnings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .cost import Estimate, Traffic
from .hardware import Hardware
from .tiling import TileGrid, Tiling


@dataclass(frozen=True)
class Report:
    """The report of :func:`~indexops_npu.emulate_scatter_update`.

    Attributes
    ----------
    cache_shape : tuple of int
        ``(blockNum, blockSize)`` of a 4-D cache; ``(rows, 1)`` for a 2-D input.
    tiling : Tiling
        The view and tile in index space, clipped to the problem.
    grid : TileGrid
        Every tile in execution order.
    tile_core, tile_stored, tile_ub_bytes : ndarray
        Per tile: its vector core, the rows it stores (non-negative slots), its UB bytes.
    slot_tile : ndarray
        Per cache slot: the tile whose write it keeps, or -1 when no tile writes it.
    traffic : Traffic
        GM bytes read and written per tile.
    estimate : Estimate
        The cost model's time (see :mod:`indexops_npu.cost`).
    padding : int
        Tokens skipped because their slot is negative.
    warnings : tuple of str
        Duplicate slots written by different tiles, and what the rule set let through.
    """

    cache_shape: tuple[int, int]
    tiling: Tiling
    grid: TileGrid
    tile_core: np.ndarray
    tile_stored: np.ndarray
    tile_ub_bytes: np.ndarray
    slot_tile: np.ndarray
    traffic: Traffic
    estimate: Estimate
    padding: int
    warnings: tuple[str, ...]
    hardware: Hardware
    rules: str

    @property
    def views(self) -> int:
        """Number of views."""
        return len(np.unique(self.grid.view))

    @property
    def tiles(self) -> int:
        """Number of tiles."""
        return self.grid.count

    @property
    def ub_peak_bytes(self) -> int:
        """The largest UB use of any tile."""
        return int(self.tile_ub_bytes.max(initial=0))

    @property
    def gm_bytes(self) -> int:
        """GM bytes moved (read plus written)."""
        return self.traffic.total

    @property
    def tiles_per_core(self) -> np.ndarray:
        """Tiles run by each vector core."""
        return np.bincount(self.tile_core, minlength=self.hardware.vector_cores)

    @property
    def time_s(self) -> float:
        """The estimated kernel time in seconds."""
        return self.estimate.time_s

    def summary(self) -> str:
        """A few lines for people."""
        busy = self.tiles_per_core
        est = self.estimate
        lines = [
            f"{self.hardware.name}, rules={self.rules!r}",
            f"views {self.views}, tiles {self.tiles}, cores used {int((busy > 0).sum())} of "
            f"{busy.size} (at most {int(busy.max(initial=0))} tiles on one core)",
            f"UB per tile: peak {self.ub_peak_bytes} of {self.hardware.ub_bytes} bytes",
            f"GM traffic: {int(self.traffic.read.sum())} bytes read, "
            f"{int(self.traffic.written.sum())} written; {self.padding} padding slots skipped",
            f"estimated time {est.time_s * 1e6:.2f} us ({est.bound}-bound: cores "
            f"{est.cores_s * 1e6:.2f}, HBM {est.hbm_s * 1e6:.2f}, dispatch "
            f"{est.dispatch_s * 1e6:.2f} us)",
        ]
        return "\n".join(lines + [f"warning: {w}" for w in self.warnings])

    def __str__(self) -> str:
        return self.summary()

    def plot(self, path: str | None = None, **kwargs: Any) -> Any:
        """Draw the cache's slots coloured by the tile and by the core that write them.

        Needs matplotlib (the ``plot`` extra). Returns the figure; saves it to ``path`` if
        given. Keyword arguments go to :func:`matplotlib.pyplot.figure`.
        """
        from .plot import draw

        return draw(self, path=path, **kwargs)
