"""``at`` on a Dask array with NumPy rows: what building the graph costs, and its size.

``python -m benchmarks.dask_at_calls [--rounds 15] [--base-package NAME]`` prints, per
method (``get``, ``set``, ``add``, ``max``) and rows (8 of a ``[64, 16]`` float64 table in
chunks of 16 rows, in range or some counted from the end), the median time to build the
call's graph (nothing computed), its layers and tasks, and the time to compute it on
Dask's synchronous scheduler, for ``indexops.at``, for the same call of another copy of
indexops importable under ``NAME`` (the source of a base commit) and, for ``get``, Dask's
own ``x[rows]``. See benchmarks/README.md, "Dask: `at` with NumPy rows".
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import dask.array as da
import numpy as np

from . import base_package

ROWS = {
    "in range": np.array([3, 9, 17, 22, 30, 41, 50, 63]),
    "from the end": np.array([3, -55, 17, 22, -34, 41, -14, -1]),
}


def build(call: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    """The median seconds to build ``call``'s graph, and its result."""
    result = call()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def computed(result: Any, rounds: int) -> float:
    """The median seconds to compute ``result`` on the synchronous scheduler."""
    result.compute(scheduler="sync")
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        result.compute(scheduler="sync")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args, base = base_package.parse(parser, argv)
    packages = base_package.packages(base)
    x = da.from_array(np.arange(64 * 16, dtype=np.float64).reshape(64, 16), chunks=(16, 16))
    y = da.from_array(np.ones((8, 16)), chunks=(4, 16))
    print("| method | rows | form | build (ms) | layers | tasks | compute (ms) |")
    print("|---" * 7 + "|")
    for method in ("get", "set", "add", "max"):
        for label, rows in ROWS.items():
            forms: dict[str, Callable[[], Any]] = {}
            for name, package in packages.items():
                if method == "get":
                    forms[name] = lambda p=package, r=rows: p.at(x)[r].get()
                else:
                    forms[name] = lambda p=package, r=rows, m=method: getattr(p.at(x)[r], m)(y)
            if method == "get":
                forms["dask x[rows]"] = lambda r=rows: x[r]
            for name, call in forms.items():
                seconds, result = build(call, args.rounds)
                graph = result.__dask_graph__()
                print(
                    f"| {method} | {label} | {name} | {seconds * 1e3:.2f} | {len(graph.layers)} "
                    f"| {len(dict(graph))} | {computed(result, args.rounds) * 1e3:.2f} |"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
