"""A repeated ``at(x)[rows].get()`` of rows in range, at several sizes, against the
library's own row reads.

``python -m benchmarks.at_row_reads [--rounds 11]`` (about 20 s on 2 cores) prints, for
random rows of float32 tables from 8 rows of [64, 16] to 65536 of [262144, 128], the median
time of ``at``'s read and of the library's ``take`` (NumPy) or ``index_select`` (torch, one
thread) and fancy index ``x[rows]``, sampled alternately (:mod:`.interleaved`).
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
    if library == "torch":
        x, r = torch.from_numpy(table), torch.from_numpy(rows)
        return {
            "at": lambda: indexops.at(x)[r].get(),
            "index_select": lambda: x.index_select(0, r),
            "x[rows]": lambda: x[r],
        }
    return {
        "at": lambda: indexops.at(table)[rows].get(),
        "take": lambda: table.take(rows, axis=0),
        "x[rows]": lambda: table[rows],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| library | table | rows | at | take or index_select | x[rows] | at / take |")
    print("|---|---|---|---|---|---|---|")
    for library in ("numpy", "torch"):
        for n, width, count in SIZES:
            times = medians(forms(library, n, width, count), args.rounds, sample_seconds=0.01)
            at, take, fancy = times.values()
            print(
                f"| {library} | [{n}, {width}] | {count} | {at * 1e6:.1f} us | "
                f"{take * 1e6:.1f} us | {fancy * 1e6:.1f} us | {at / take:.2f} |"
            )


if __name__ == "__main__":
    main()
