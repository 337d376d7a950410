"""NumPy's combines of rows proven distinct, at several sizes, without the compiled kernels.

``python -m benchmarks.distinct_combines [--rounds 11]`` (about 30 s on 2 cores) prints, for
``add`` and ``max`` of distinct random rows into float64 tables of several sizes, in place
(no copy of the table, whose cost would hide the combine's), the median time of
``indexops.scatter`` with ``unique_indices=True`` (the rows proven distinct: one gather,
one ufunc and one assignment) and without it (the library proves up to 16 rows distinct
itself; more take ``ufunc.at`` or a faster route of the same sums), both within
``without_kernels()`` (the paths taken where numba is not installed; with it, calls of
2**10 elements or more take a kernel instead), beside NumPy's two expressions of the same
work, sampled alternately (:mod:`.interleaved`, samples of about 20 ms: in place, a
sample's first call finds the other forms' data in the caches). Each row makes its own
table: on this VM whether it gets huge pages moved a row's times by up to 10x from run to
run (the ratios within a row held), so compare within rows.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

import indexops
from indexops._testing import without_kernels

from .interleaved import medians
from .workloads import ROWS, _rng

# (table rows, row width, rows written)
SIZES = (
    (64, 16, 8), (4096, 16, 256), (16384, 16, 1024), (16384, 64, 1024), (65536, 64, 4096),
    (262144, 64, 16384), (262144, 64, 65536),
)  # fmt: skip
UFUNCS = {"add": np.add, "max": np.maximum}


def forms(n: int, width: int, count: int, how: str) -> dict[str, Callable[[], Any]]:
    rng = _rng()
    table = rng.standard_normal((n, width))
    rows = rng.permutation(n)[:count]
    values = rng.standard_normal((count, width))
    ufunc = UFUNCS[how]

    def library(unique: bool) -> Callable[[], Any]:
        def call() -> Any:
            with without_kernels():
                return indexops.scatter(
                    table, rows[:, None], values, update_computation=how,
                    unique_indices=unique, copy=False, **ROWS,
                )  # fmt: skip

        return call

    def at() -> Any:
        ufunc.at(table, rows, values)
        return table

    def distinct() -> Any:
        table[rows] = ufunc(table.take(rows, axis=0), values)
        return table

    return {
        "unique_indices=True": library(True),
        "unique_indices=False": library(False),
        "ufunc.at": at,
        "take, ufunc, assign": distinct,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    names = list(forms(64, 16, 8, "add"))
    medians(forms(64, 16, 8, "add"), 3)  # untimed: a process's first calls run slower
    print(f"| combine | table | rows written | {' | '.join(names)} | True / False |")
    print("|---|---|---|" + "---|" * len(names) + "---|")
    for how in UFUNCS:
        for n, width, count in SIZES:
            times = medians(forms(n, width, count, how), args.rounds, sample_seconds=0.02)
            cells = " | ".join(f"{times[name] * 1e6:.1f} us" for name in names)
            ratio = times[names[0]] / times[names[1]]
            print(f"| {how} | [{n}, {width}] | {count} | {cells} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
