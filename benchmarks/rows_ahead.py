"""Row writes and row reads that ask for their rows ahead, against the same without, at
several table sizes and row widths.

``python -m benchmarks.rows_ahead [--rounds 11] [--mib 2,4,8,16,64] [--widths
1,2,8,64,256] [--read-mib 8,16,32,128] [--read-widths 32,64,128,256] [--entry-sizes
1/16,1/4,1] [--libraries numpy,torch]`` prints three tables (numba's kernels loaded
first, medians of alternating samples: :mod:`.interleaved`).

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

Entry points (``--entry-sizes 1/16,1/4,1``, ``--libraries numpy,torch``): the runner's
row gather and scatter-add through ``at``, ``indexops.onnx`` and the core op, at each
size, asked ahead (the bound as shipped) and not (out of reach), the library's default
host threads, torch on one thread.

See benchmarks/README.md, "Issue 33: rows asked for ahead".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from fractions import Fraction
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


ROW_GATHER = {
    "offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,),
    "index_vector_dim": 1,
}  # fmt: skip
ROW_SCATTER = {
    "update_window_dims": (1,), "inserted_window_dims": (0,),
    "scatter_dims_to_operand_dims": (0,), "index_vector_dim": 1,
}  # fmt: skip


def entry_points(
    kernels: Any, library: str, size: float, shipped: int
) -> dict[str, Callable[[], object]]:
    """What users call, with the rows asked ahead (and read by the row gather) and not:
    the runner's workload 1 (``65536 * size`` random rows of a ``[262144 * size, 128]``
    float32 table) read through ``at``, ``indexops.onnx.gather`` and the core gather, and
    workload 2 (``262144 * size`` rows with repeats added into a copy of a ``[65536 *
    size, 64]`` float32 table) through ``at``, ``indexops.onnx.scatter_nd`` and the core
    scatter."""
    from indexops import onnx

    rng = np.random.default_rng(0)
    n, count = round(262144 * size), round(65536 * size)
    table = rng.standard_normal((n, 128), dtype=np.float32)
    rows = rng.integers(0, n, count)
    m, k = round(65536 * size), round(262144 * size)
    target = rng.standard_normal((m, 64), dtype=np.float32)
    where = rng.integers(0, m, k)
    values = rng.standard_normal((k, 64), dtype=np.float32)
    convert: Callable[[Any], Any] = np.asarray
    if library == "torch":
        import torch

        convert = torch.from_numpy
    table, rows, target, where, values = map(convert, (table, rows, target, where, values))
    calls = {
        "read, at": lambda: indexops.at(table)[rows].get(),
        "read, onnx": lambda: onnx.gather(table, rows, axis=0),
        "read, core": lambda: indexops.gather(
            table, rows[:, None], **ROW_GATHER, slice_sizes=(1, 128), mode="clip"
        ),
        "add, at": lambda: indexops.at(target)[where].add(values),
        "add, onnx": lambda: onnx.scatter_nd(target, where[:, None], values, reduction="add"),
        "add, core": lambda: indexops.scatter(
            target, where[:, None], values, update_computation="add", **ROW_SCATTER
        ),
    }
    return {
        f"{entry} {how}": with_setting(kernels, "PREFETCH_MIN_BYTES", bound, call)
        for entry, call in calls.items()
        for how, bound in (("ahead", shipped), ("plain", NEVER))
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--mib", default="2,4,8,16,64")
    parser.add_argument("--widths", default="1,2,8,64,256")
    parser.add_argument("--read-mib", default="8,16,32,128")
    parser.add_argument("--read-widths", default="32,64,128,256")
    parser.add_argument("--entry-sizes", default="1/16,1/4,1", help="'' for none")
    parser.add_argument("--libraries", default="numpy,torch")
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
    try:
        entries(kernels, args, bounds[0])  # (the bounds as shipped: only this one moves)
    finally:
        kernels.PREFETCH_MIN_BYTES = bounds[0]
    return 0


def entries(kernels: Any, args: argparse.Namespace, shipped: int) -> None:
    """The third table: :func:`entry_points` at each size and library, the library's
    default host threads (torch on one thread)."""
    if not args.entry_sizes:
        return
    print("\n| library | size | entry | ahead (ms) | plain (ms) | ahead / plain |")
    print("|---|---|---|---|---|---|")
    for library in args.libraries.split(","):
        if library == "torch":
            import torch

            torch.set_num_threads(1)
        for size in args.entry_sizes.split(","):
            calls = entry_points(kernels, library, float(Fraction(size)), shipped)
            times = medians(calls, args.rounds)
            for name in dict.fromkeys(key.rsplit(" ", 1)[0] for key in times):
                ahead, plain = times[f"{name} ahead"], times[f"{name} plain"]
                print(
                    f"| {library} | {size} | {name} | {ahead * 1e3:.2f} | {plain * 1e3:.2f} "
                    f"| {ahead / plain:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    raise SystemExit(main())
