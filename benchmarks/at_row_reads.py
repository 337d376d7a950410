"""A repeated ``at(x)[rows].get()`` of rows in range, at several sizes, against the
library's own row reads.

``python -m benchmarks.at_row_reads [--rounds 11]`` (about 20 s on 2 cores) prints, for
random rows of float32 tables from 8 rows of [64, 16] to 65536 of [262144, 128], the median
time of ``at``'s read and of the library's ``take`` (NumPy) or ``index_select`` (torch, one
thread) and fancy index ``x[rows]``, sampled alternately (:mod:`.interleaved`); and of that
``take`` or ``index_select`` right after a small ``at`` read of another table (8 rows of
[64, 16], about 3 us on NumPy and 8 on torch), less that small read's own median: what the
native read costs when Python work comes before it, as it does in any call of a library.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import indexops

from .interleaved import medians
from .workloads import _rng

# (table rows, row width, rows read)
SIZES = ((64, 16, 8), (4096, 64, 256), (65536, 128, 4096), (262144, 128, 65536))


def forms(library: str, n: int, width: int, count: int) -> dict[str, Callable[[], Any]]:
    rng = _rng()
    table = rng.standard_normal((n, width), dtype=np.float32)
    rows = rng.integers(0, n, count)
    small, few = rng.standard_normal((64, 16), dtype=np.float32), rng.integers(0, 64, 8)
    if library == "torch":
        x, r = torch.from_numpy(table), torch.from_numpy(rows)
        s, f = torch.from_numpy(small), torch.from_numpy(few)
        return {
            "at": lambda: indexops.at(x)[r].get(),
            "index_select": lambda: x.index_select(0, r),
            "x[rows]": lambda: x[r],
            "small at": lambda: indexops.at(s)[f].get(),
            "small at, then index_select": lambda: (indexops.at(s)[f].get(), x.index_select(0, r)),
        }
    return {
        "at": lambda: indexops.at(table)[rows].get(),
        "take": lambda: table.take(rows, axis=0),
        "x[rows]": lambda: table[rows],
        "small at": lambda: indexops.at(small)[few].get(),
        "small at, then take": lambda: (indexops.at(small)[few].get(), table.take(rows, axis=0)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(
        "| library | table | rows | at | take or index_select | x[rows] | at / take "
        "| take after a small at | at / take after a small at |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for library in ("numpy", "torch"):
        for n, width, count in SIZES:
            times = medians(forms(library, n, width, count), args.rounds, sample_seconds=0.01)
            at, take, fancy, small, both = times.values()
            after = both - small
            print(
                f"| {library} | [{n}, {width}] | {count} | {at * 1e6:.1f} us | "
                f"{take * 1e6:.1f} us | {fancy * 1e6:.1f} us | {at / take:.2f} | "
                f"{after * 1e6:.1f} us | {at / after:.2f} |"
            )


if __name__ == "__main__":
    main()
