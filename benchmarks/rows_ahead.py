"""Row writes and row reads that ask for their rows ahead, against the same without, at
several table sizes and row widths.

``python -m benchmarks.rows_ahead [--rounds 11] [--mib 2,4,8,16,64] [--widths
1,2,8,64,256] [--read-mib 8,16,32,128] [--read-widths 32,64,128,256]`` prints two
tables (NumPy, numba's kernels loaded first, medians of alternating samples:
:mod:`.interleaved`).

Writes, one thread: per table size and row width, a scatter-add of random rows with
repeats (four updates per table row, at most 2**22 elements of updates) into a ``[rows,
width]`` float32 table, the rows asked for ahead (the threshold,
``_kernels.PREFETCH_MIN_BYTES``, set to 0) and not (set out of reach): the row kernel
alone, in place, and ``indexops.at(x)[rows].add(y)``, which copies the table first. Rows
of one element never ask ahead, whatever the threshold.

Reads: per table size and row width, a quarter of the table's rows (at most 2**23
elements) read at random, NumPy's ``take`` into kept memory (``_kept_memory.take_rows``,
what the row takes ran before) against the compiled row gather
(``_kernels.take_rows``, its bounds set to 0: any table, row and result) on one thread
and on two.

See benchmarks/README.md, "Issue 33: rows asked for ahead".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

import indexops
from indexops._backends import _host, _kept_memory
from indexops._validate.combiners import Named

from .interleaved import medians, with_setting

NEVER = 2**62


def forms(kernels: Any, mib: int, width: int) -> dict[str, Callable[[], object]]:
    """The kernel and ``at``'s add, with and without the rows asked for ahead."""
    rows = mib * 2**20 // (4 * width)
    count = min(4 * rows, 2**22 // width)
    rng = np.random.default_rng(0)
    table = rng.standard_normal((rows, width), dtype=np.float32)
    where = rng.integers(0, rows, count)
    values = rng.standard_normal((count, width), dtype=np.float32)
    calls = {
        "kernel": lambda: kernels.apply_rows(table, where, values, Named.ADD),
        "at": lambda: indexops.at(table)[where].add(values),
    }
    return {
        f"{entry} {how}": with_setting(kernels, "PREFETCH_MIN_BYTES", bound, call)
        for entry, call in calls.items()
        for how, bound in (("ahead", 0), ("plain", NEVER))
    }


def reads(kernels: Any, mib: int, width: int) -> dict[str, Callable[[], object]]:
    """NumPy's take and the compiled row gather on one thread and on two."""
    rows = mib * 2**20 // (4 * width)
    rng = np.random.default_rng(0)
    table = rng.standard_normal((rows, width), dtype=np.float32)
    where = rng.integers(0, rows, min(rows // 4, 2**23 // width))

    def gathered(threads: int) -> Callable[[], object]:
        def call() -> object:
            kernels.PREFETCH_MIN_BYTES = kernels.ROW_GATHER_MIN_BYTES = 0
            kernels.ROW_GATHER_MIN_RESULT_BYTES = 0
            indexops.set_host_threads(threads)
            return kernels.take_rows(table, where, "raise")

        return call

    return {
        "take": lambda: _kept_memory.take_rows(table, where, "raise"),
        "kernel 1": gathered(1),
        "kernel 2": gathered(2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--mib", default="2,4,8,16,64")
    parser.add_argument("--widths", default="1,2,8,64,256")
    parser.add_argument("--read-mib", default="8,16,32,128")
    parser.add_argument("--read-widths", default="32,64,128,256")
    args = parser.parse_args(argv)
    kernels = _host.load_kernels()
    if kernels is None:
        print("numba's kernels did not load (the fast extra): nothing to time")
        return 1
    indexops.set_host_threads(1)
    bounds = (
        kernels.PREFETCH_MIN_BYTES,
        kernels.ROW_GATHER_MIN_BYTES,
        kernels.ROW_GATHER_MIN_RESULT_BYTES,
    )
    print("| table | row | entry | asked ahead (ms) | plain (ms) | ahead / plain |")
    print("|---|---|---|---|---|---|")
    try:
        for mib in (int(m) for m in args.mib.split(",")):
            for width in (int(w) for w in args.widths.split(",")):
                times = medians(forms(kernels, mib, width), args.rounds)
                for entry in ("kernel", "at"):
                    ahead, plain = times[f"{entry} ahead"], times[f"{entry} plain"]
                    print(
                        f"| {mib} MiB | {4 * width} B | {entry} | {ahead * 1e3:.2f} "
                        f"| {plain * 1e3:.2f} | {ahead / plain:.2f} |",
                        flush=True,
                    )
        print("\n| table | row | take (ms) | kernel, 1 thread | / take | 2 threads | / take |")
        print("|---|---|---|---|---|---|---|")
        for mib in (int(m) for m in args.read_mib.split(",")):
            for width in (int(w) for w in args.read_widths.split(",")):
                times = medians(reads(kernels, mib, width), args.rounds)
                take, one, two = times["take"], times["kernel 1"], times["kernel 2"]
                print(
                    f"| {mib} MiB | {4 * width} B | {take * 1e3:.2f} | {one * 1e3:.2f} "
                    f"| {one / take:.2f} | {two * 1e3:.2f} | {two / take:.2f} |",
                    flush=True,
                )
    finally:
        (
            kernels.PREFETCH_MIN_BYTES,
            kernels.ROW_GATHER_MIN_BYTES,
            kernels.ROW_GATHER_MIN_RESULT_BYTES,
        ) = bounds
        indexops.set_host_threads(None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
