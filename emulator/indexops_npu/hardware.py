"""Hardware profiles of the Ascend parts that PyPTO's ``scatter_update`` runs on.

A profile holds what the emulator's rules and cost model need for one device (one die).
The numbers of :data:`ATLAS_A2` and :data:`ATLAS_A3` come from PyPTO 0.2.0's platform file
``pypto/lib/configs/A2A3.ini`` (one file for both series) and the CANN migration guide;
the cost-model constants marked *assumed* are estimates, not measurements. Users define
their own profile with :class:`Hardware` or ``dataclasses.replace``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from indexops._extension import type_error, value_error

# Hardware's fields that are rates (above 0) and cycle counts (0 or more)
_RATES = (
    "clock_hz",
    "hbm_bytes_per_s",
    "gm_read_bytes_per_cycle",
    "gm_write_bytes_per_cycle",
    "die_link_bytes_per_s",
)
_CYCLES = (
    "view_startup_cycles",
    "tile_overhead_cycles",
    "store_issue_cycles",
    "dispatch_cycles_per_tile",
)

# The cost model's constants, fitted to PyPTO 0.2.0's SIM (see indexops_npu.calibration).
VIEW_STARTUP_CYCLES = 8100.0
TILE_OVERHEAD_CYCLES = 650.0
STORE_ISSUE_CYCLES = 0.0
DISPATCH_CYCLES_PER_TILE = 360.0


def _check_field(field: str, value: Any, low: float, allowed: str, integer: bool = False) -> None:
    """Raise for a Hardware field that is no number (an int where ``integer``; bool not
    counted), or one below ``low`` (``low`` itself only where ``allowed`` says "or
    more"), or not finite."""
    kind = numbers.Integral if integer else numbers.Real
    if not _is_a(value, kind) or isinstance(value, bool):
        raise type_error("Hardware", field, value, allowed)
    number, at_least = float(value), "or more" in allowed
    if not (number >= low if at_least else number > low) or not number < math.inf:
        raise value_error("Hardware", field, value, allowed)


def _is_a(value: Any, kind: type) -> bool:
    return isinstance(value, kind)


@dataclass(frozen=True)
class Hardware:
    """One NPU device as the emulator sees it.

    Parameters
    ----------
    name : str
        Shown in reports.
    vector_cores : int
        AI vector cores (AIV) that run the tiles.
    ub_bytes : int
        Unified Buffer per vector core; a tile's src and index blocks must fit in it.
    ub_block_bytes : int
        UB block size: every src row and index row is padded to a multiple of it.
    clock_hz : float
        Core clock.
    hbm_bytes_per_s : float
        Global-memory (HBM) bandwidth of the device.
    gm_read_bytes_per_cycle, gm_write_bytes_per_cycle : float
        DMA rates of one core, GM to UB (MTE2) and UB to GM (MTE3).
    view_startup_cycles : float
        Fixed cost of starting each view after the first, before its first tile (fitted).
    tile_overhead_cycles : float
        Fixed cost of one tile on its core: DMA setup and pipeline synchronisation (fitted).
    store_issue_cycles : float
        Cost of issuing one row store (one ``TSTORE`` per token) (fitted).
    dispatch_cycles_per_tile : float
        Serial cost of handing one tile (task) to a core, inside a view (fitted).
    dies_per_package : int
        Dies per package. Each die is its own device, with its own vector cores, UB and HBM
        (nothing of these is shared between dies), so a kernel runs on one die: the
        emulator models one, and ``vector_cores`` and ``hbm_bytes_per_s`` are per die.
    die_link_bytes_per_s : float or None
        Bandwidth between the dies of a package, when there are several.

    Examples
    --------
    A profile is frozen: change a field with ``dataclasses.replace``.

    >>> import dataclasses
    >>> from indexops_npu import ATLAS_A2, Hardware
    >>> half_ub = dataclasses.replace(ATLAS_A2, name="A2, half the UB", ub_bytes=98304)
    >>> half_ub.ub_bytes, half_ub.vector_cores
    (98304, 48)
    >>> Hardware("Ascend 950", vector_cores=56, ub_bytes=253952).align(100)
    128
    """

    name: str
    vector_cores: int = 48
    ub_bytes: int = 196608
    ub_block_bytes: int = 32
    clock_hz: float = 1.85e9
    hbm_bytes_per_s: float = 1.6e12
    gm_read_bytes_per_cycle: float = 32.0
    gm_write_bytes_per_cycle: float = 64.0
    view_startup_cycles: float = VIEW_STARTUP_CYCLES
    tile_overhead_cycles: float = TILE_OVERHEAD_CYCLES
    store_issue_cycles: float = STORE_ISSUE_CYCLES
    dispatch_cycles_per_tile: float = DISPATCH_CYCLES_PER_TILE
    dies_per_package: int = 1
    die_link_bytes_per_s: float | None = None

    def __post_init__(self) -> None:
        """Every count an int of 1 or more, every rate a number above 0, every cycle count
        one of 0 or more: the rules divide by them and the cost model scales by them."""
        for field in ("vector_cores", "ub_bytes", "ub_block_bytes", "dies_per_package"):
            _check_field(field, getattr(self, field), 1, "an int of 1 or more", integer=True)
        for field in _RATES:
            value = getattr(self, field)
            if value is not None or field != "die_link_bytes_per_s":
                _check_field(field, value, 0, "a finite number above 0")
        for field in _CYCLES:
            _check_field(field, getattr(self, field), 0, "a finite number of 0 or more")

    @property
    def package_vector_cores(self) -> int:
        """Vector cores of the whole package (all dies)."""
        return self.vector_cores * self.dies_per_package

    def scope(self) -> str:
        """What the planner and the cost model assume about the device, in one sentence.

        Returns
        -------
        str
            The cores, UB and HBM planned for, and for a package of several dies, which.

        Examples
        --------
        >>> from indexops_npu import ATLAS_A3
        >>> print(ATLAS_A3.scope())
        one die of 2: 48 of the package's 96 vector cores, with the die's own UB and HBM
        (about 1.6 TB/s); each die is its own device, so a kernel runs on one
        """
        own = f"{self.vector_cores} vector cores"
        if self.dies_per_package == 1:
            return f"one device: {own}, HBM {self.hbm_bytes_per_s / 1e12:.1f} TB/s"
        return (
            f"one die of {self.dies_per_package}: {self.vector_cores} of the package's "
            f"{self.package_vector_cores} vector cores, with the die's own UB and HBM "
            f"(about {self.hbm_bytes_per_s / 1e12:.1f} TB/s); each die is its own device, "
            "so a kernel runs on one"
        )

    def align(self, nbytes: int) -> int:
        """``nbytes`` rounded up to a whole number of UB blocks.

        Parameters
        ----------
        nbytes : int
            A row's bytes.

        Returns
        -------
        int
            The UB bytes the row takes.

        Examples
        --------
        >>> from indexops_npu import ATLAS_A2
        >>> ATLAS_A2.align(1), ATLAS_A2.align(32), ATLAS_A2.align(33)
        (32, 32, 64)
        """
        block = self.ub_block_bytes
        return -(-nbytes // block) * block


ATLAS_A2 = Hardware(name="Atlas A2 (Ascend 910B)")
"""Atlas A2 training/inference series, Ascend 910B, one die.

Sources: ``A2A3.ini`` in the pypto 0.2.0 wheel: ``vector_core_cnt=48``, ``ub_size=196608``,
``ubblock_size=32``, ``cube_freq=1850`` MHz, ``[AICoreMemoryRates]`` ``ddr_read_rate=32``,
``ub_to_ddr_rate=64`` (bytes per cycle, by assumption: the file states no unit). HBM
1.6 TB/s: CANN cross-platform migration guide (Atlas A2 910B2: 24 AIC, 48 AIV, 1.6 TB/s).
The UB limit (a total equal to 196608 bytes is accepted) was measured with PyPTO 0.2.0's
compiler in SIM mode.
"""

ATLAS_A3 = Hardware(
    name="Atlas A3 (Ascend 910C), one die", dies_per_package=2, die_link_bytes_per_s=224e9
)
"""Atlas A3 series, Ascend 910C: two 910B-class dies per package, each its own device.

Per die the same numbers as :data:`ATLAS_A2` (pypto uses the one file ``A2A3.ini`` for
both; the PyPTO performance tutorial states A3's UB as 192 KB). The HBM figure of about
1.6 TB/s per die comes from a third-party performance model (``HWConf`` Ascend_A3Pod), so
treat it as an estimate. The two dies share nothing the kernel uses: each has its 48 vector
cores (their UB is per core) and its 64 GiB of HBM, and each shows up as its own
device (16 per 8-card server), so the planner plans one die. The dies are linked by SIO at
about 224 GB/s (the same third-party model), far below a die's HBM.
"""

PROFILES = {"a2": ATLAS_A2, "a3": ATLAS_A3}
"""Profiles by short name (used by the command line)."""
