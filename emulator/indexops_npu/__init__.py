"""indexops_npu: how PyPTO runs ``scatter_update`` on Ascend A2/A3, emulated on a laptop.

- :data:`ATLAS_A2`, :data:`ATLAS_A3`, :class:`Hardware`: device profiles.
- :func:`check_scatter_update`: the documented contract or PyPTO 0.2.0's, violation by
  violation, with the UB bytes per tile.
- :func:`emulate_scatter_update`: run it view by view, tile by tile, into a real array,
  and get a :class:`Report` (tiles, UB, GM traffic, cores, estimated time, warnings).
- :func:`plan_scatter_update`: the legal tilings, best estimate first; the estimates come
  from a cost model fitted to PyPTO 0.2.0's SIM (``indexops_npu.cost`` and
  ``indexops_npu.calibration``; the fit is in the NPU emulator guide).

The result of an emulation always equals :func:`indexops.scatter_update`.
"""

from .cost import Estimate
from .execute import emulate_scatter_update
from .hardware import ATLAS_A2, ATLAS_A3, Hardware
from .plan import Plan, plan_scatter_update
from .report import Report
from .rules import KINDS, RULES, CheckResult, RuleViolationError, Violation, check_scatter_update

__all__ = [
    "ATLAS_A2",
    "ATLAS_A3",
    "KINDS",
    "RULES",
    "CheckResult",
    "Estimate",
    "Hardware",
    "Plan",
    "Report",
    "RuleViolationError",
    "Violation",
    "check_scatter_update",
    "emulate_scatter_update",
    "plan_scatter_update",
]
