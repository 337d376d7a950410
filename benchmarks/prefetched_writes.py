"""Row writes that ask for their rows ahead, against the same writes without, at several
table sizes and row widths.

``python -m benchmarks.prefetched_writes [--rounds 11] [--mib 2,4,8,16,64]
[--widths 1,2,8,64,256]`` prints, per table size and row width, the wall time per call
of a scatter-add of random rows with repeats (four updates per table row, at most
2**22 elements of updates) into a ``[rows, width]`` float32 table on NumPy (one thread,
numba's kernels loaded first), the rows asked for ahead (the threshold,
``_kernels.PREFETCH_MIN_BYTES``, set to 0) and not (set out of reach), sampled
alternately (:mod:`.interleaved`): the row kernel alone, in place, and
``indexops.at(x)[rows].add(y)``, which copies the table first. Rows of one element never
ask ahead, whatever the threshold. See benchmarks/README.md, "Issue 33: row writes ask for
their rows ahead".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

import indexops
from indexops._backends import _host
from indexops._validate.combiners import Named

from .interleaved import medians

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
    found: dict[str, Callable[[], object]] = {}
    for entry, call in calls.items():
        for how, bound in (("ahead", 0), ("plain", NEVER)):

            def timed(call: Callable[[], Any] = call, bound: int = bound) -> object:
                kernels.PREFETCH_MIN_BYTES = bound
                return call()

            found[f"{entry} {how}"] = timed
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--mib", default="2,4,8,16,64")
    parser.add_argument("--widths", default="1,2,8,64,256")
    args = parser.parse_args(argv)
    kernels = _host.load_kernels()
    if kernels is None:
        print("numba's kernels did not load (the fast extra): nothing to time")
        return 1
    indexops.set_host_threads(1)
    bound = kernels.PREFETCH_MIN_BYTES
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
    finally:
        kernels.PREFETCH_MIN_BYTES = bound
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
