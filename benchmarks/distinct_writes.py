"""Row writes of distinct rows at the sizes the row writer's direct step takes, through
each entry point users call; and of a few repeated rows.

``python -m benchmarks.distinct_writes [--rows distinct] [--rounds 21] [--backend
numpy,torch] [--base-package NAME]`` prints, per library, combiner, shape and entry
point, the CPU time per call into a copy (rows of float32 tables four times the rows
written, in ``[5, 6]`` plus noise: no zero), sampled alternately (:mod:`.interleaved`)
with the same call of another copy of indexops importable under ``NAME`` (the source of a
base commit, for before/after in one process). The entry points: ``indexops.scatter``
with ``unique_indices=True`` (the rows are distinct by promise), ``indexops.at(x)[rows]``'s
method and ``indexops.onnx.scatter_nd`` (both prove up to 16 rows distinct themselves;
more keep the general path). The shapes span the direct step's range: up to 1023 updated
elements (the compiled kernels take the rest). See benchmarks/README.md, "Issue 35:
distinct rows written in one native step".

``--rows repeated``: 8 and 16 rows drawn with repeats (as many draws as rows from the
first half of those rows' numbers: each row about twice) through ``indexops.scatter``
without ``unique_indices``, ``at``, ``indexops.onnx.scatter_nd`` and, for replace,
``indexops.scatter_update`` (benchmarks/README.md, "Issue 35: a few repeated rows in one
layer"). ``--rows from-end``: 8 and 16 distinct rows, every other one counted from the end
(NumPy's and ONNX's negative indices), through ``at`` and ``indexops.onnx.scatter_nd``.
"""

from __future__ import annotations

import argparse
import importlib
import time
from typing import Any

import numpy as np

from . import base_package
from .interleaved import medians

ROWS = {
    "update_window_dims": (1,),
    "inserted_window_dims": (0,),
    "scatter_dims_to_operand_dims": (0,),
    "index_vector_dim": 1,
}
SHAPES = {  # rows written x row width
    "distinct": ((8, 16), (16, 60), (60, 16), (250, 4)),
    "repeated": ((8, 16), (16, 60)),  # (the rows a list read covers)
    "from-end": ((8, 16), (16, 60)),
}
COMBINERS = (None, "add", "mul", "max")
AT_METHODS = {None: "set", "add": "add", "mul": "multiply", "max": "max"}
ENTRY_POINTS = {
    "distinct": ("core", "at", "onnx"),
    "repeated": ("core", "at", "onnx", "slots"),
    "from-end": ("at", "onnx"),  # (the core ops read a negative row as outside)
}


def arrays(library: str, count: int, width: int, kind: str) -> tuple[Any, Any, Any]:
    """A table of ``4 * count`` rows, ``count`` rows as ``[count, 1]`` (distinct, drawn
    with repeats, or distinct with every other one counted from the end) and the updates,
    as arrays of ``library``."""
    rng = np.random.default_rng(0)
    table = rng.standard_normal((4 * count, width)).astype(np.float32) + 5
    rows = rng.permutation(4 * count)[:count, None]
    if kind == "repeated":
        rows = rows[rng.integers(0, count // 2, count)]
    elif kind == "from-end":
        rows[::2] -= 4 * count
    updates = rng.standard_normal((count, width)).astype(np.float32) + 5
    if library == "torch":
        import torch

        return torch.from_numpy(table), torch.from_numpy(rows), torch.from_numpy(updates)
    return table, rows, updates


def _write(
    package: Any, entry: str, table: Any, rows: Any, updates: Any, how: str | None, unique: bool
) -> Any:
    """One write of ``updates`` at ``rows`` (``[count, 1]``) through ``entry``."""
    if entry == "core":
        return package.scatter(
            table, rows, updates, update_computation=how, unique_indices=unique, **ROWS
        )
    if entry == "slots":
        return package.scatter_update(table, -2, rows[:, 0], updates, copy=True)
    if entry == "at":
        return getattr(package.at(table)[rows[:, 0]], AT_METHODS[how])(updates)
    return package.onnx.scatter_nd(table, rows, updates, reduction=how or "none")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", choices=tuple(SHAPES), default="distinct")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--backend", default="numpy,torch")
    args, base = base_package.parse(parser, argv)
    packages = base_package.packages(base)
    header = " | ".join(f"{name} (us)" for name in packages)
    print(f"| library | combiner | rows x width | entry | {header} |"
          + (" indexops / base |" if base else ""))  # fmt: skip
    print("|---" * (4 + len(packages) + bool(base)) + "|")
    for library in args.backend.split(","):
        if library == "torch":
            importlib.import_module("torch").set_num_threads(1)
        for how in COMBINERS:
            for count, width in SHAPES[args.rows]:
                for entry in ENTRY_POINTS[args.rows]:
                    if entry == "slots" and how is not None:
                        continue
                    rows = arrays(library, count, width, args.rows)
                    call = (entry, *rows, how, args.rows == "distinct")
                    forms = {
                        name: lambda package=package, call=call: _write(package, *call)
                        for name, package in packages.items()
                    }
                    times = medians(forms, args.rounds, clock=time.thread_time)
                    cells = " | ".join(f"{times[name] * 1e6:.1f}" for name in packages)
                    ratio = f" | {times['indexops'] / times['base']:.2f}" if base else ""
                    print(f"| {library} | {how} | {count} x {width} | {entry} | {cells}{ratio} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
