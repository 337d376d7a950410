"""What a first call of each compiled kernel costs: numba's compile, with its cache on disk
empty and warm.

``python -m benchmarks.kernel_first_call [--dtypes float32,int64] [--runs 2]`` (about a
minute on 2 cores, numba required) runs the same calls in fresh processes that share one
new numba cache directory (``NUMBA_CACHE_DIR``): the first process finds it empty and
compiles every signature, the later ones load them. Each process prints the time of
``import indexops``, of the kernels' import (numba's), and of each call's first and second
run, as a table. A process's first kernel call pays numba's one-time initialisation of
its CPU target, timed here as two steps of their own before the calls: the import of
``scipy.linalg`` (numba's ``arraymath`` checks SciPy's BLAS when it is imported) and the
rest of the target (numba's implementation registries). The calls go through the public
ops at 2**12 elements, where the kernels run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

CHILD = r"""
import json, sys, time
start = time.perf_counter()
import numpy as np
import indexops
from indexops import onnx
from indexops._backends import _host
imported = time.perf_counter()
assert _host.kernels() is not None, "numba is not installed"
loaded = time.perf_counter()
import scipy.linalg.cython_blas  # numba's arraymath imports it at once, to check BLAS
blas = time.perf_counter()
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()  # what a process's first kernel call does first
target = time.perf_counter()
rows = dict(update_window_dims=(1,), inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
report = {
    "import indexops": imported - start,
    "import the kernels (numba)": loaded - imported,
    "first call: import scipy.linalg (numba's BLAS check)": blas - loaded,
    "first call: numba's CPU target (its other registries)": target - blas,
}
rng = np.random.default_rng(0)
for dtype in sys.argv[1].split(","):
    table = rng.integers(0, 9, (256, 16)).astype(dtype)
    targets = rng.integers(0, 256, (256, 1))
    updates = rng.integers(0, 9, (256, 16)).astype(dtype)
    data = rng.integers(0, 9, (256, 16)).astype(dtype)
    indices = rng.integers(-16, 16, (256, 16))
    calls = {
        f"scatter {how or 'replace'} {dtype}": lambda how=how: indexops.scatter(
            table, targets, updates, update_computation=how, **rows)
        for how in (None, "add", "mul", "min", "max")
    }
    calls[f"onnx.gather_elements {dtype}"] = lambda: onnx.gather_elements(data, indices, 1)
    calls[f"onnx.scatter_nd add {dtype}"] = lambda: onnx.scatter_nd(
        table, targets, updates, reduction="add")
    calls[f"onnx.scatter_elements add {dtype}"] = lambda: onnx.scatter_elements(
        data, indices, updates, axis=1, reduction="add")
    for name, call in calls.items():
        times = []
        for _ in range(2):
            begin = time.perf_counter()
            call()
            times.append(time.perf_counter() - begin)
        report[name] = times
print(json.dumps(report))
"""


def run(dtypes: str, cache: str) -> dict[str, Any]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, dtypes], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtypes", default="float32,int64")
    parser.add_argument("--runs", type=int, default=2, help="processes: the first one cold")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        reports = [run(args.dtypes, cache) for _ in range(args.runs)]
    labels = ["empty cache"] + [f"warm cache ({k})" for k in range(1, args.runs)]
    print("| step | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for step in reports[0]:
        cells = []
        for report in reports:
            value = report[step]
            if isinstance(value, list):
                cells.append(f"{value[0] * 1e3:.1f} ms (then {value[1] * 1e6:.0f} us)")
            else:
                cells.append(f"{value * 1e3:.0f} ms")
        print(f"| {step} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
