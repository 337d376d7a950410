"""The compiled host kernels on one thread and on several: one command, one table.

``python -m benchmarks.host_threads [--size 1/16,1/4,1] [--threads 2] [--rounds 11]``
(about a minute on 2 cores; numba required) prints, per workload and size, the median time
of the kernel alone (``_kernels.apply_rows`` in place, ``_kernels.take_along_axis``) and of
the core op (``indexops.scatter`` into a copy, ``indexops.gather``) on one thread and on
``--threads``, sampled alternately in one process (:mod:`.interleaved`), the speed-up;
the kernel's CPU time on one thread and that of its longest range on ``--threads``
(medians), whose ratio is the speed-up where each range gets a core of its own (read it on
a loaded machine, whose wall times say little); and whether the results are
bit-identical. Then the small sizes around ``_threads.THREAD_MIN_ELEMENTS``, where a
second thread starts to pay, for a row write and the element gather: one thread,
``--threads``, and the default (where the count is not set: the gather on every core, a
row write on one thread). Last, for each row write at full size, the most any split of it
could gain here (:func:`ceiling`: the updates cut into ranges whose rows are moved apart,
each range on a thread of its own). The workloads:

* 8: GatherElements along axis 1 of a [262144, 64] float32 table (the runner's workload 8);
* 9 and 10: ScatterND max of float32 rows and add of int64 rows, with duplicates (the
  runner's workloads 9 and 10: 262144 rows of 64 into a [65536, 64] table);
* tracker: ScatterElements add of [481385, 80] float32 rows at random rows of a
  [556416, 80] table (onnxruntime's tracker workload), as rows written.

The machine's 1-minute load average is printed before and after: on a shared machine the
second thread may find no free core, and the speed-ups then say little.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

import indexops
from indexops._backends import _host, _kernels, _threads
from indexops._validate.combiners import Named

from .interleaved import medians
from .workloads import ROWS, _pick, _rng, scatter_add_problem

ELEMENT_GATHER = {
    "offset_dims": (), "collapsed_slice_dims": (1,), "start_index_map": (1,),
    "index_vector_dim": 2, "slice_sizes": (1, 1), "operand_batching_dims": (0,),
    "start_indices_batching_dims": (0,),
}  # fmt: skip
HOW = {"add": Named.ADD, "max": Named.MAX}

# a workload: (the kernel alone, the core op), each a call of no arguments
Workload = tuple[Callable[[], Any], Callable[[], Any]]


def element_gather(size: float) -> Workload:
    n, d = _pick(262144, 32768, False, size), 64
    rng = _rng()
    x = rng.standard_normal((n, d), dtype=np.float32)
    idx = rng.integers(0, d, (n, d))
    kernels = _host.kernels()
    return (
        lambda: kernels.take_along_axis(x, idx, 1, wrap=False, outside="stop"),
        lambda: indexops.gather(x, idx[..., None], **ELEMENT_GATHER),
    )


# a row write: (table, rows, values, combiner)
RowProblem = tuple[np.ndarray, np.ndarray, np.ndarray, str]


def rows_written(problem: RowProblem) -> Workload:
    table, rows, values, how = problem
    kernels = _host.kernels()
    kept = table.copy()  # the kernel alone writes in place, again and again
    return (
        lambda: kernels.apply_rows(kept, rows, values, HOW[how]),
        lambda: indexops.scatter(table, rows[:, None], values, update_computation=how, **ROWS),
    )


def rows_reduce(size: float, how: str) -> RowProblem:
    table, rows, values, _ = scatter_add_problem(False, size)
    if how == "add":
        table, values = (np.round(a * 1000).astype(np.int64) for a in (table, values))
    return table, rows, values, how


def tracker(size: float) -> RowProblem:
    n, k, d = _pick(556416, 0, False, size), _pick(481385, 0, False, size), 80
    rng = _rng()
    table = rng.standard_normal((n, d), dtype=np.float32)
    values = rng.standard_normal((k, d), dtype=np.float32)
    return table, rng.integers(0, n, k), values, "add"


ROW_PROBLEMS: dict[str, Callable[[float], RowProblem]] = {
    "9 ScatterND max, f32": lambda size: rows_reduce(size, "max"),
    "10 ScatterND add, int64": lambda size: rows_reduce(size, "add"),
    "tracker ScatterElements add, f32": tracker,
}
WORKLOADS: dict[str, Callable[[float], Workload]] = {
    "8 GatherElements, f32": element_gather,
    **{
        name: (lambda size, make=make: rows_written(make(size)))
        for name, make in ROW_PROBLEMS.items()
    },
}


def on_threads(count: int, fn: Callable[[], Any]) -> Callable[[], Any]:
    def call() -> Any:
        indexops.set_host_threads(count)
        return fn()

    return call


def bits(result: Any) -> bytes:
    array = result[0] if isinstance(result, tuple) else result
    return np.ascontiguousarray(array).view(np.uint8).tobytes()


def longest_range_cpu(count: int, fn: Callable[[], Any], rounds: int) -> float:
    """The median over ``rounds`` calls of ``fn`` on ``count`` threads of the CPU time of
    its longest range: what the call would take if each range had a core to itself (a
    loaded machine's wall times do not say that; memory stalls count as CPU time)."""
    kernels = _host.kernels()
    split = kernels.run_parts
    longest: list[float] = []

    def timed_split(task: Callable[[int, int], Any], total: int, parts: int) -> list[Any]:
        def timed(lo: int, hi: int) -> tuple[Any, float]:
            start = time.thread_time()
            return task(lo, hi), time.thread_time() - start

        results = split(timed, total, parts)
        longest.append(max(seconds for _, seconds in results))
        return [result for result, _ in results]

    kernels.run_parts = timed_split
    try:
        indexops.set_host_threads(count)
        for _ in range(rounds):
            start, splits = time.thread_time(), len(longest)
            fn()
            if len(longest) == splits:  # one range, run without a split (one thread)
                longest.append(time.thread_time() - start)
    finally:
        kernels.run_parts = split
    return statistics.median(longest)


def compare(name: str, size: str, workload: Workload, threads: int, rounds: int) -> None:
    kernel, core = workload
    forms = {
        "kernel 1": on_threads(1, kernel),
        f"kernel {threads}": on_threads(threads, kernel),
        "core 1": on_threads(1, core),
        f"core {threads}": on_threads(threads, core),
    }
    same = bits(forms["core 1"]()) == bits(forms[f"core {threads}"]())
    times = medians(forms, rounds)
    one, many = times["kernel 1"], times[f"kernel {threads}"]
    core_one, core_many = times["core 1"], times[f"core {threads}"]
    cpu_one, cpu_many = (longest_range_cpu(count, kernel, rounds) for count in (1, threads))
    print(
        f"| {name} | {size} | {one * 1e3:.2f} | {many * 1e3:.2f} | {one / many:.2f} | "
        f"{core_one * 1e3:.2f} | {core_many * 1e3:.2f} | {core_one / core_many:.2f} | "
        f"{cpu_one * 1e3:.2f} | {cpu_many * 1e3:.2f} | {cpu_one / cpu_many:.2f} | {same} |"
    )


def on_default(fn: Callable[[], Any], least: int) -> Callable[[], Any]:
    """``fn`` at the default count, split from ``least`` elements per thread."""

    def call() -> Any:
        indexops.set_host_threads(None)
        _threads.THREAD_MIN_ELEMENTS = least
        try:
            return fn()
        finally:
            _threads.THREAD_MIN_ELEMENTS = 1

    return call


def small_sizes(threads: int, rounds: int) -> None:
    """float32 rows added ([n, 64] table, n updates) and gathered along axis 1 ([n, 64]):
    one thread, ``threads`` from the first element on, and the default (the count and
    the size from which each kind splits as shipped)."""
    print(
        f"\n| kernel | elements | 1 thread (us) | {threads} threads (us) | speed-up | "
        "default (us) | default / 1 thread |"
    )
    print("|---|---|---|---|---|---|---|")
    saved = _threads.THREAD_MIN_ELEMENTS
    _threads.THREAD_MIN_ELEMENTS = 1
    try:
        for name in ("rows added", "element gather"):
            for elements in (2**14, 2**15, 2**16, 2**17, 2**18, 2**19, 2**20):
                kernel = small_kernel(name, elements // 64)
                forms = {
                    "1": on_threads(1, kernel),
                    "many": on_threads(threads, kernel),
                    "default": on_default(kernel, saved),
                }
                times = medians(forms, rounds)
                one, many, default = (times[form] for form in ("1", "many", "default"))
                print(
                    f"| {name} | {elements} | {one * 1e6:.1f} | {many * 1e6:.1f} | "
                    f"{one / many:.2f} | {default * 1e6:.1f} | {default / one:.2f} |"
                )
    finally:
        _threads.THREAD_MIN_ELEMENTS = saved
        indexops.set_host_threads(None)


def small_kernel(name: str, n: int) -> Callable[[], Any]:
    """The kernel alone, ``n`` rows of 64 float32."""
    rng = _rng()
    x = rng.standard_normal((n, 64), dtype=np.float32)
    if name == "element gather":
        idx = rng.integers(0, 64, (n, 64))
        kernels = _host.kernels()
        return lambda: kernels.take_along_axis(x, idx, 1, wrap=False, outside="stop")
    values = rng.standard_normal((n, 64), dtype=np.float32)
    return rows_written((x, rng.integers(0, n, n), values, "add"))[0]


def ceiling(name: str, problem: RowProblem, threads: int, rounds: int) -> None:
    """The most any split of a row write could gain here: the updates cut into
    ``threads`` ranges of ``k`` whose rows are moved apart (range ``t`` writes only the
    ``t``-th part of the table, at random rows there, repeats kept), so that each thread
    reads only its own updates and no thread needs to order its writes after another's;
    each range on a thread of its own against all of them on one, same kernel."""
    table, rows, values, how = problem
    kind = _kernels._arithmetic_type(table.dtype, HOW[how])
    kernel, target = _kernels._ROW_KERNELS[HOW[how]], table.copy().view(kind)
    values = values.view(kind)
    n, count = table.shape[0], rows.shape[0]
    part = n // threads
    owner = np.minimum(np.arange(count) * threads // count, threads - 1)
    apart = owner * part + rows % part

    def ranges(lo: int, hi: int) -> int:
        ahead = _kernels.PREFETCH_AHEAD if target.nbytes >= _kernels.PREFETCH_MIN_BYTES else 0
        return int(kernel(target, apart[lo:hi], values[lo:hi], 0, n, False, _kernels.FILL, ahead))

    forms = {
        "1": lambda: ranges(0, count),
        "many": lambda: _threads.run_parts(ranges, count, threads),
    }
    times = medians(forms, rounds)
    one, many = times["1"], times["many"]
    print(f"| {name} | {one * 1e3:.2f} | {many * 1e3:.2f} | {one / many:.2f} |")


def ceilings(threads: int, rounds: int) -> None:
    """:func:`ceiling` of each row write at full size."""
    print(
        f"\n| row write, updates apart (full size) | 1 thread (ms) | {threads} threads (ms) | "
        "speed-up |"
    )
    print("|---|---|---|---|")
    for name, make in ROW_PROBLEMS.items():
        ceiling(name, make(1.0), threads, rounds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="1/16,1/4,1", help="fractions of the full size")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--only", default="", help="workloads whose name contains this text")
    args = parser.parse_args()
    if _host.kernels() is None:
        raise SystemExit("numba is needed (the fast extra)")
    print(f"load average before: {os.getloadavg()[0]:.2f}, cores: {os.cpu_count()}")
    print(
        f"| workload | size | kernel 1 thread (ms) | kernel {args.threads} threads (ms) | "
        f"speed-up | core 1 thread (ms) | core {args.threads} threads (ms) | speed-up | "
        f"kernel CPU, 1 thread (ms) | kernel CPU, longest of {args.threads} ranges (ms) | "
        "speed-up by CPU time | bit-identical |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, workload in WORKLOADS.items():
        if args.only not in name:
            continue
        for size in args.size.split(","):
            compare(name, size, workload(float(Fraction(size))), args.threads, args.rounds)
    small_sizes(args.threads, args.rounds)
    ceilings(args.threads, args.rounds)
    indexops.set_host_threads(None)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
