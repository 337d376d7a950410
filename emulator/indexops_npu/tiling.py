"""Views and tiles in index space, the tile sequence, and the UB formula.

PyPTO cuts ``scatter_update`` twice: the user's loop cuts ``index`` (and ``src``) into
views, and the compiler cuts each view into tiles. Both are rectangles of ``index``:
a view ``[viewB, viewS]`` and a tile ``[tileB, tileS]`` (plus a column range of ``d`` when
PyPTO 0.2.0 lets a 4-D tile split ``d``). Views and tiles at the end are ragged (they are
clipped), and a tile larger than its view uses the view's size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .hardware import Hardware


@dataclass(frozen=True)
class Tiling:
    """A view and a tile, in index space: rows of ``index`` (b) and columns (s)."""

    view_b: int
    view_s: int
    tile_b: int
    tile_s: int
    tile_d: int

    def clipped(self, b: int, s: int, d: int) -> Tiling:
        """The view clipped to ``index [b, s]``, the tile clipped to that view and to ``d``."""
        view_b, view_s = min(self.view_b, b), min(self.view_s, s)
        return Tiling(
            view_b, view_s, min(self.tile_b, view_b), min(self.tile_s, view_s), min(self.tile_d, d)
        )


@dataclass(frozen=True)
class TileGrid:
    """Every tile of a problem in execution order (views row-major, tiles row-major in a
    view, column chunks innermost); each field has one entry per tile.

    ``view`` is the view number, ``[b0, b1) x [s0, s1)`` the index rectangle and
    ``[c0, c1)`` the columns of ``d`` the tile moves.
    """

    view: np.ndarray
    b0: np.ndarray
    b1: np.ndarray
    s0: np.ndarray
    s1: np.ndarray
    c0: np.ndarray
    c1: np.ndarray

    @property
    def count(self) -> int:
        """Number of tiles."""
        return int(self.view.shape[0])

    @property
    def rows(self) -> np.ndarray:
        """Tokens (src rows) per tile."""
        return (self.b1 - self.b0) * (self.s1 - self.s0)


def divisors(n: int) -> list[int]:
    """The divisors of the positive ``n``, ascending, built from its prime factors.

    Examples
    --------
    >>> from indexops_npu.tiling import divisors
    >>> divisors(12), divisors(1), len(divisors(2**30))
    ([1, 2, 3, 4, 6, 12], [1], 31)
    """
    found = [1]
    for prime, power in _prime_factors(n):
        found = [d * prime**k for d in found for k in range(power + 1)]
    return sorted(found)


def _prime_factors(n: int) -> list[tuple[int, int]]:
    """The primes of the positive ``n`` with their powers, by trial division up to sqrt(n).

    Examples
    --------
    >>> from indexops_npu.tiling import _prime_factors
    >>> _prime_factors(360), _prime_factors(2**31 - 1)
    ([(2, 3), (3, 2), (5, 1)], [(2147483647, 1)])
    """
    factors = []
    candidate = 2
    while candidate * candidate <= n:
        power = 0
        while n % candidate == 0:
            n, power = n // candidate, power + 1
        if power:
            factors.append((candidate, power))
        candidate += 1
    if n > 1:
        factors.append((n, 1))
    return factors


def _axis(n: int, view: int, tile: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tile segments along one axis: (view number, start, stop), views then tiles in order."""
    view_starts = np.arange(0, n, view)
    views, starts, stops = [], [], []
    for v, start in enumerate(view_starts):
        stop = min(start + view, n)
        tile_starts = np.arange(start, stop, tile)
        views.append(np.full(tile_starts.shape, v))
        starts.append(tile_starts)
        stops.append(np.minimum(tile_starts + tile, stop))
    return np.concatenate(views), np.concatenate(starts), np.concatenate(stops)


def tile_grid(b: int, s: int, d: int, tiling: Tiling) -> TileGrid:
    """The tiles of ``index [b, s]`` (rows of ``d`` elements) under ``tiling``, in order."""
    t = tiling.clipped(b, s, d)
    vb, b0, b1 = _axis(b, t.view_b, t.tile_b)
    vs, s0, s1 = _axis(s, t.view_s, t.tile_s)
    c0 = np.arange(0, d, t.tile_d)
    c1 = np.minimum(c0 + t.tile_d, d)
    p, q, c = (a.ravel() for a in np.meshgrid(
        np.arange(b0.size), np.arange(s0.size), np.arange(c0.size), indexing="ij"
    ))  # fmt: skip
    order = np.lexsort((c, q, p, vs[q], vb[p]))
    p, q, c = p[order], q[order], c[order]
    view = vb[p] * (int(vs.max()) + 1) + vs[q]
    return TileGrid(view, b0[p], b1[p], s0[q], s1[q], c0[c], c1[c])


def token_positions(grid: TileGrid, t: int, s: int) -> np.ndarray:
    """Flat row-major positions ``i*s + j`` of tile ``t``'s tokens, in its store order."""
    i = np.arange(grid.b0[t], grid.b1[t])
    j = np.arange(grid.s0[t], grid.s1[t])
    return (i[:, None] * s + j[None, :]).reshape(-1)


def ub_bytes(
    tile_b: int | np.ndarray,
    tile_s: int | np.ndarray,
    cols: int | np.ndarray,
    value_size: int,
    index_size: int,
    hardware: Hardware,
) -> int | np.ndarray:
    """UB bytes of one tile: ``rows*align(cols*sizeof(T)) + tileB*align(tileS*sizeof(idx))``.

    Each src row and each index row is padded to the UB block (32 bytes on A2/A3).

    Examples
    --------
    >>> from indexops_npu import ATLAS_A2
    >>> from indexops_npu import ATLAS_A2
    >>> from indexops_npu.tiling import ub_bytes
    >>> ub_bytes(102, 2, 8, 4, 8, ATLAS_A2)  # 204 rows of 32 B + 102 index rows of 32 B
    9792
    """
    block = hardware.ub_block_bytes
    row = -(-(np.asarray(cols) * value_size) // block) * block
    index_row = -(-(np.asarray(tile_s) * index_size) // block) * block
    total = np.asarray(tile_b) * np.asarray(tile_s) * row + np.asarray(tile_b) * index_row
    return int(total) if total.ndim == 0 else total
