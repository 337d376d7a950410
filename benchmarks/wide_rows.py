"""Replaces of wide rows in place, by row width, in a table out of cache and in cache.

``python -m benchmarks.wide_rows [--rounds 11] [--widths 256,...,16384] [--tables 8,128]
[--copy-table-min MIB] [--base-package NAME]`` prints, per table size (MiB, an eighth of
its rows written a call, distinct) and row width in bytes (float32 rows), the time per
call of ``indexops.scatter_update`` on the 2-D table (the paged KV write's op), of the
core ``indexops.scatter`` in place (mode ``drop``), of ``at(table)[rows].set(values,
copy=False)`` and of NumPy's ``table[rows] = values``, all on one table, sampled
alternately (:mod:`.interleaved`; numba's kernels loaded first), with the same calls of
another copy of indexops importable under ``NAME`` (the source of a base commit) where
given. The default tables: 8 MiB (in this machine's caches: the paged KV write at 1/16)
and 128 MiB (out of them; the paged KV write at full size). See benchmarks/README.md,
"Issue 33: wide rows by memcpy".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

from . import base_package
from .interleaved import medians
from .workloads import ROWS, _rng

WIDTHS = "256,1024,2048,4096,8192,16384"
ENTRIES = ("scatter_update", "scatter", "at")


def forms(
    table_bytes: int, width_bytes: int, packages: dict[str, Any]
) -> dict[str, Callable[[], object]]:
    """Each package's calls and NumPy's assignment."""
    width = width_bytes // 4
    n = table_bytes // width_bytes
    count = n // 8
    rng = _rng()
    rows = rng.permutation(n)[:count]
    values = rng.standard_normal((count, width), dtype=np.float32)
    column = rows[:, None]

    # one table for all: each call leaves it as it was, and no form gets memory of its
    # own that happens to be faster (huge pages or not: up to 1.4x apart at 64 MiB)
    table = rng.standard_normal((n, width), dtype=np.float32)
    table[rows] = values
    found: dict[str, Callable[[], object]] = {}
    for name, package in packages.items():
        found[f"scatter_update {name}"] = lambda p=package: p.scatter_update(
            table, -2, rows, values
        )
        found[f"scatter {name}"] = lambda p=package: p.scatter(
            table, column, values, **ROWS, mode="drop", copy=False
        )
        found[f"at {name}"] = lambda p=package: p.at(table)[rows].set(values, copy=False)
    found["native"] = lambda: table.__setitem__(rows, values)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--widths", default=WIDTHS)
    parser.add_argument("--tables", default="8,128", help="table sizes in MiB")
    parser.add_argument(
        "--copy-table-min", type=int, default=None,
        help="MiB from which a replace copies rows whole (default: the library's, 64)",
    )  # fmt: skip
    args, base = base_package.parse(parser, argv)
    packages = base_package.packages(base, kernels=True)
    if args.copy_table_min is not None:
        from indexops._backends import _kernels

        _kernels.COPY_TABLE_MIN_BYTES = args.copy_table_min * 2**20
    print("| table (MiB) | row bytes | native (ms) | entry | indexops / native |"
          + (" base / native |" if base else ""))  # fmt: skip
    print("|---" * (5 + bool(base)) + "|")
    for mib in map(int, args.tables.split(",")):
        for width_bytes in map(int, args.widths.split(",")):
            times = medians(forms(mib * 2**20, width_bytes, packages), args.rounds)
            native = times["native"]
            for entry in ENTRIES:
                before = f" {times[f'{entry} base'] / native:.2f} |" if base else ""
                print(f"| {mib} | {width_bytes} | {native * 1e3:.3f} | {entry} | "
                      f"{times[f'{entry} indexops'] / native:.2f} |{before}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
