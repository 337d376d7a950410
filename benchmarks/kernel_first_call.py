"""What a first call of each compiled kernel costs: numba's compile, with its cache on disk
empty and warm, and what a process's first call pays while the kernels load on a thread.

``python -m benchmarks.kernel_first_call [--dtypes float32,int64] [--runs 2]`` (about a
minute on 2 cores, numba required) runs the same calls in fresh processes that share one
new numba cache directory (``NUMBA_CACHE_DIR``): the first process finds it empty and
compiles every signature, the later ones load them. Each process first times what users
see: ``import indexops``, a first call too small for a kernel (what any process's first
call of the library pays), then its first call large enough for one (an
``onnx.gather_elements`` of 2**12 elements, which starts the kernels' load on a thread
and takes the other paths meanwhile), the same call again, and how long after that first
large call the kernels had loaded. Then, in a second fresh process, the load's steps as the
loader's thread runs them: the kernels' import (numba's), the import of ``scipy.linalg``
(numba's ``arraymath`` checks SciPy's BLAS when it is imported), the rest of numba's CPU
target (its implementation registries) and the first loop loaded; then each call's first
and second run through the public ops at 2**12 elements, where the kernels run, and
of the ``take_along_axis`` idiom's ``set`` and ``max`` in a small call (192 elements).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

FIRST_CALL = r"""
import json, time
start = time.perf_counter()
import numpy as np
import indexops
from indexops import onnx
imported = time.perf_counter()
rng = np.random.default_rng(0)
data, indices = rng.random((256, 16)), rng.integers(-16, 16, (256, 16))
small = time.perf_counter()
onnx.gather_elements(data[:4], indices[:4, :4], 1)  # 16 elements: never a kernel
begin = time.perf_counter()
onnx.gather_elements(data, indices, 1)
first = time.perf_counter()
onnx.gather_elements(data, indices, 1)
second = time.perf_counter()
indexops.load_host_kernels()
loaded = time.perf_counter()
print(json.dumps({
    "import indexops": imported - start,
    "a first call of 16 elements (no kernel; the library's first call)": begin - small,
    "then the first of 4096 (the kernels begin to load, on a thread)": first - begin,
    "the same call again": second - first,
    "the kernels loaded, after the first call began": loaded - begin,
}))
"""

STEPS = r"""
import json, sys, time
start = time.perf_counter()
import numpy as np
import indexops
from indexops import onnx
from indexops._backends import _kernels  # numba's import
imported = time.perf_counter()
import scipy.linalg.cython_blas  # numba's arraymath imports it at once, to check BLAS
blas = time.perf_counter()
from numba.core.registry import cpu_target
cpu_target.target_context.refresh()  # what a process's first kernel call does first
target = time.perf_counter()
assert indexops.load_host_kernels(), "numba is not installed"
loaded = time.perf_counter()
rows = dict(update_window_dims=(1,), inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
report = {
    "load: import indexops and the kernels (numba)": imported - start,
    "load: import scipy.linalg (numba's BLAS check)": blas - imported,
    "load: numba's CPU target (its other registries)": target - blas,
    "load: the first loop (load_host_kernels)": loaded - target,
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
    counting, columns = np.arange(64)[:, None], indices[:64, :3]  # a small call: 192 elements
    for method in ("set", "max"):
        calls[f"at idiom {method}, 192 elements {dtype}"] = lambda m=method: getattr(
            indexops.at(table[:64])[counting, columns], m)(updates[:64, :3])
    for name, call in calls.items():
        times = []
        for _ in range(2):
            begin = time.perf_counter()
            call()
            times.append(time.perf_counter() - begin)
        report[name] = times
print(json.dumps(report))
"""


def run(child: str, dtypes: str, cache: str) -> dict[str, Any]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    done = subprocess.run(
        [sys.executable, "-c", child, dtypes], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtypes", default="float32,int64")
    parser.add_argument("--runs", type=int, default=2, help="processes: the first one cold")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        reports = [
            {**run(FIRST_CALL, args.dtypes, cache), **run(STEPS, args.dtypes, cache)}
            for _ in range(args.runs)
        ]
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
