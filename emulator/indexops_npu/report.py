"""What an emulated ``scatter_update`` did: tiles, UB, GM traffic, cores, time, warnings.

:class:`Report` holds it; :func:`build_report` works it out from a call that
:mod:`~indexops_npu.execute` has checked and run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from indexops._extension import Array

from .cost import Estimate, Traffic, estimate, traffic
from .dtypes import dtype_name, itemsize
from .hardware import Hardware
from .plot import plural
from .rules import CheckResult
from .tiling import TileGrid, Tiling, token_positions, ub_bytes

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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
        Per tile: its vector core (round-robin within its view), the rows it stores
        (non-negative slots), its UB bytes.
    slot_tile : ndarray
        Per cache slot: the tile whose write it keeps, or -1 when no tile writes it.
    traffic : Traffic
        GM bytes read and written per tile.
    estimate : Estimate
        The cost model's time and its schedule: when each view and tile runs (see the
        cost model in the NPU emulator guide).
    padding_tokens : ndarray
        ``[b, s]`` mask of the index's tokens skipped because their slot is negative.
    padding : int
        How many tokens are skipped (the count of ``padding_tokens``).
    warnings : tuple of str
        Duplicate slots written by different tiles, and what the rule set let through.
    hardware : Hardware
        The device profile.
    rules : str
        The rule set checked against.

    Examples
    --------
    >>> import numpy as np
    >>> from indexops_npu import emulate_scatter_update
    >>> cache = np.zeros((4, 4, 1, 2), np.float32)
    >>> slots = np.array([[1, 2, 3], [9, -1, 2]])
    >>> tokens = np.arange(12, dtype=np.float32).reshape(2, 3, 1, 2)
    >>> report = emulate_scatter_update(cache, -2, slots, tokens,
    ...                                 view_shape=(2, 3, 1, 2), tile_shape=(1, 2, 1, 2))
    >>> report.views, report.tiles, report.ub_peak_bytes, report.gm_bytes
    (1, 4, 96, 136)
    >>> print(report.summary().splitlines()[1])
    views 1, tiles 4, cores used 4 of 48 (at most 1 tile on one core)
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
    padding_tokens: np.ndarray
    warnings: tuple[str, ...]
    hardware: Hardware
    rules: str

    @property
    def padding(self) -> int:
        """Tokens skipped because their slot is negative."""
        return int(self.padding_tokens.sum())

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
        """A few lines for people.

        Returns
        -------
        str
            Views, tiles, cores, UB, GM traffic, the estimate and the warnings.
        """
        busy = self.tiles_per_core
        est = self.estimate
        lines = [
            f"{self.hardware.name}, rules={self.rules!r}",
            f"views {self.views}, tiles {self.tiles}, cores used {int((busy > 0).sum())} of "
            f"{busy.size} (at most {plural(int(busy.max(initial=0)), 'tile')} on one core)",
            f"UB per tile: peak {self.ub_peak_bytes} of {self.hardware.ub_bytes} bytes",
            f"GM traffic: {int(self.traffic.read.sum())} bytes read, "
            f"{int(self.traffic.written.sum())} written; {self.padding} padding slots skipped",
            f"estimated time: {est.explain()}",
        ]
        return "\n".join(lines + [f"warning: {w}" for w in self.warnings])

    def __str__(self) -> str:
        return self.summary()

    def plot(self, path: str | None = None, **kwargs: Any) -> Figure:
        """Draw the tokens and the written slots by the tile that writes them, and a timeline.

        Three panels: the index's tokens coloured by tile, each view outlined; only the
        written slots, one line per touched block (a cache of thousands of blocks shows the
        few a decode step writes); and the timeline: the views one after another, each tile
        a bar on its vector core, coloured by its UB use. Sized to be read about 800 pixels
        wide.

        Needs matplotlib (the ``plot`` extra). The figure is not registered with pyplot,
        and matplotlib's backend is left as it is.

        Parameters
        ----------
        path : str, optional
            Where to save the figure.
        **kwargs
            Passed to ``matplotlib.figure.Figure``, e.g. ``figsize``.

        Returns
        -------
        matplotlib.figure.Figure
            The tokens by tile, the written slots by tile, and the timeline.
        """
        from .plot import draw

        return draw(self, path=path, **kwargs)


def build_report(
    input: Array,
    index: Array,
    result: CheckResult,
    grid: TileGrid,
    flat: np.ndarray,
    winners: np.ndarray,
) -> Report:
    """The report of an emulated call.

    Parameters
    ----------
    input, index
        The call's arrays; only their shapes and dtypes are read.
    result : CheckResult
        The call's passing check: its tiling, warnings, rule set and hardware.
    grid : TileGrid
        Every tile in execution order.
    flat : ndarray
        The slot of each token, row-major (``index`` flattened, on the host).
    winners : ndarray
        Mask of the tokens whose write survives (non-negative, last of its slot).

    Returns
    -------
    Report
    """
    hardware, tiling = result.hardware, result.tiling
    assert tiling is not None  # a passing check always has one
    value_size = itemsize(dtype_name(input.dtype))
    index_size = itemsize(dtype_name(index.dtype))
    shape = tuple(input.shape)
    b, s = index.shape
    cache_shape = (shape[0], shape[1]) if len(shape) == 4 else (shape[0], 1)
    position_tile = _position_tiles(grid, flat.size, s)
    stored = _stored_rows(grid, flat, s)
    moved = traffic(grid, stored, value_size, index_size)
    cost = estimate(grid, moved, stored, hardware)
    return Report(
        cache_shape=cache_shape,
        tiling=tiling.clipped(b, s, shape[-1]),
        grid=grid,
        tile_core=cost.schedule.tile_core,
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
        slot_tile=_slot_tiles(math.prod(cache_shape), flat, winners, position_tile),
        traffic=moved,
        estimate=cost,
        padding_tokens=(flat < 0).reshape(b, s),
        warnings=(
            *(str(w) for w in result.warnings),
            *_duplicate_warnings(flat, position_tile, s),
        ),
        hardware=hardware,
        rules=result.rules,
    )


def _stored_rows(grid: TileGrid, flat: np.ndarray, s: int) -> np.ndarray:
    """For each tile, the rows it stores: its tokens with a non-negative slot."""
    return np.asarray([(flat[token_positions(grid, t, s)] >= 0).sum() for t in range(grid.count)])


def _position_tiles(grid: TileGrid, size: int, s: int) -> np.ndarray:
    """For each token, the first tile (column chunk 0) that stores it."""
    tiles = np.full(size, -1)
    for t in np.nonzero(grid.c0 == 0)[0]:
        tiles[token_positions(grid, int(t), s)] = t
    return tiles


def _slot_tiles(
    slots: int, flat: np.ndarray, winners: np.ndarray, position_tile: np.ndarray
) -> np.ndarray:
    """For each cache slot, the tile whose write it keeps, or -1."""
    slot_tile = np.full(slots, -1)
    slot_tile[flat[winners]] = position_tile[winners]
    return slot_tile


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
