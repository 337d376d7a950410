"""Hardware profiles of the Ascend parts that PyPTO's ``scatter_update`` runs on.

A profile holds what the emulator's rules and cost model need for one device (one die).
The numbers of :data:`ATLAS_A2` and :data:`ATLAS_A3` come from PyPTO 0.2.0's platform file
``pypto/lib/configs/A2A3.ini`` (one file for both series) and the CANN migration guide;
the cost-model constants marked *assumed* are estimates, not measurements. Users define
their own profile with :class:`Hardware` or ``dataclasses.replace``.
"""

from __future__ import annotations

from dataclasses import dataclass


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
    tile_overhead_cycles : float
        Fixed cost of one tile on its core: DMA setup and pipeline synchronisation (assumed).
    store_issue_cycles : float
        Cost of issuing one row store (one ``TSTORE`` per token) (assumed).
    dispatch_cycles_per_tile : float
        Serial cost of scheduling one tile (task) onto a core (assumed).
    dies_per_package : int
        Dies per package; each die is its own device, the emulator models one.

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
    tile_overhead_cycles: float = 400.0
    store_issue_cycles: float = 32.0
    dispatch_cycles_per_tile: float = 350.0
    dies_per_package: int = 1

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

ATLAS_A3 = Hardware(name="Atlas A3 (Ascend 910C), one die", dies_per_package=2)
"""Atlas A3 series, Ascend 910C: two 910B-class dies per package, each its own device.

Per die the same numbers as :data:`ATLAS_A2` (pypto uses the one file ``A2A3.ini`` for
both; the PyPTO performance tutorial states A3's UB as 192 KB). The HBM figure of about
1.6 TB/s per die comes from a third-party performance model (``HWConf`` Ascend_A3Pod), so
treat it as an estimate.
"""

PROFILES = {"a2": ATLAS_A2, "a3": ATLAS_A3}
"""Profiles by short name (used by the command line)."""
