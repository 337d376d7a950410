"""Row writes of kernel size through each entry point, before and after the row writer's
one pass that places each row itself (no range check, mask or search for repeats first).

``python -m benchmarks.row_passes [--rounds 11] [--backend numpy,torch] [--size
1/16,1/4,1] [--base-package NAME]`` prints, per library, case, size and entry point, the
CPU time per call (one thread, numba's kernels loaded first), sampled alternately
(:mod:`.interleaved`) with the same call of another copy of indexops importable under
``NAME`` (the source of a base commit), and the library's native expression sampled
apart (a native NumPy ``ufunc.at`` takes 10-100 times as long as the others: sampled
among them, it would leave the caches cold for whichever form follows it). The
cases are workload 2's table and rows (``benchmarks/workloads.py``): a replace of a
quarter of the table's rows, distinct (ScatterND ``none``: onnx_floors' case), the same
with one row in 64 past the end (padding, dropped), an add and a max of the workload's
repeating rows into a copy, and the workload's own add in place. The entry points:
``indexops.scatter`` (mode ``drop``, the default; rows ``[k, 1]``) and
``indexops.at(x)[rows]``'s method. See benchmarks/README.md, "Issue 33: rows placed in
one pass".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import base_package
from .workloads import ROWS, _rng, scatter_add_problem

METHODS = {None: "set", "add": "add", "max": "max"}


def cases(size: float) -> dict[str, tuple[Any, Any, Any, str | None, bool]]:
    """Per case: the table, the rows (1-D), the updates, the combiner and whether the
    write is in place."""
    table, rows, updates, _ = scatter_add_problem(False, size)
    n = table.shape[0]
    rng = _rng()
    distinct = rng.permutation(n)[: n // 4]
    replaced = rng.standard_normal((distinct.shape[0], table.shape[1]), dtype=np.float32)
    padded = distinct.copy()
    padded[::64] = n  # past the end: dropped
    return {
        "replace, distinct rows": (table, distinct, replaced, None, False),
        "replace, 1/64 rows past the end": (table, padded, replaced, None, False),
        "add, rows repeat": (table, rows, updates, "add", False),
        "max, rows repeat": (table, rows, updates, "max", False),
        "add in place (workload 2)": (table, rows, updates, "add", True),
    }


def forms(
    library: str, case: tuple[Any, Any, Any, str | None, bool], packages: dict[str, Any]
) -> tuple[dict[str, Callable[[], object]], Callable[[], object]]:
    """Each entry point of each package, and the native expression, on ``library``'s
    arrays of ``case``."""
    table, rows, updates, how, in_place = case
    if library == "torch":
        import torch

        table, rows, updates = (torch.from_numpy(a.copy()) for a in (table, rows, updates))
    else:
        table = table.copy()
    column, copy = rows[:, None], not in_place
    found: dict[str, Callable[[], object]] = {}
    for name, package in packages.items():
        found[f"core {name}"] = lambda p=package: p.scatter(
            table, column, updates, **ROWS, update_computation=how, copy=copy
        )
        found[f"at {name}"] = lambda p=package: getattr(p.at(table)[rows], METHODS[how])(
            updates, copy=copy
        )
    return found, _native(library, table, rows, updates, how, in_place)


def _native(
    library: str, table: Any, rows: Any, updates: Any, how: str | None, in_place: bool
) -> Callable[[], object]:
    """The library's own expression (rows past the end left out first, as a user
    would)."""
    if library == "torch":
        import torch

        inside = rows < table.shape[0]
        kept, values = (rows, updates) if bool(inside.all()) else (rows[inside], updates[inside])
        index = kept[:, None].expand_as(values)
        if how is None:
            return lambda: table.index_copy(0, kept, values)
        if how == "add":
            return (
                (lambda: table.index_add_(0, kept, values))
                if in_place
                else (lambda: table.index_add(0, kept, values))
            )
        return lambda: torch.scatter_reduce(table, 0, index, values, "amax")
    ufunc = {"add": np.add, "max": np.maximum}.get(how or "")

    def write() -> object:
        out = table if in_place else table.copy()
        inside = rows < table.shape[0]
        kept, values = (rows, updates) if inside.all() else (rows[inside], updates[inside])
        if ufunc is None:
            out[kept] = values
        else:
            ufunc.at(out, kept, values)
        return out

    return write


def main(argv: list[str] | None = None) -> int:
    def entries(library: str, size: float, packages: dict[str, Any]) -> dict[str, Any]:
        found = {}
        for label, case in cases(size).items():
            ours, native = forms(library, case, packages)
            found[label] = (ours, {"native": native})
        return found

    return base_package.entry_table(argv, __doc__.splitlines()[0], entries)


if __name__ == "__main__":
    raise SystemExit(main())
