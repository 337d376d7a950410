"""Replace without ``unique_indices``: what keeping the last write costs, part by part.

``python -m benchmarks.replace_last_write [--threads 1] [--samples 11]`` prints, per
library and size of workload 4 (``m`` unique positions of an ``n``-element vector,
``m = n / 4``), the median time of the write alone and of each way to learn that no
position repeats (the check the host path runs before the write):

* ``bitmap``: what the library does (``Backend.count_distinct_rows``): a bool bitmap of
  ``n`` entries set at the rows and counted;
* ``owners``: a table of ``n`` int32 entries left uninitialised, each row's position
  written into it, read back at the rows: a row repeats where some entry does not read its
  own position (any writer may win, so no order is assumed); only pages that rows touch
  are ever mapped;
* ``sort``: a sort of the rows and a comparison of neighbours.

Forms are sampled alternately, the order rotating every round.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

SIZES = (1 << 20, 1 << 22, 1 << 24)  # workload 4 at 1/16, 1/4 and full size


def numpy_forms(n: int, rows: np.ndarray, values: np.ndarray) -> dict[str, Callable[[], Any]]:
    from indexops._backends._host import count_distinct

    table = np.zeros(n, dtype=np.float32)
    positions = np.arange(rows.shape[0], dtype=np.int32)

    def write() -> Any:
        table[rows] = values

    def owners() -> bool:
        owner = np.empty(n, dtype=np.int32)
        owner[rows] = positions
        return bool((owner[rows] == positions).all())

    def by_sort() -> bool:
        ordered = np.sort(rows)
        return not bool((ordered[1:] == ordered[:-1]).any())

    return {
        "write": write,
        "bitmap": lambda: count_distinct(rows, n) == rows.shape[0],
        "owners": owners,
        "sort": by_sort,
    }


def torch_forms(n: int, rows: np.ndarray, values: np.ndarray) -> dict[str, Callable[[], Any]]:
    import torch

    from indexops._backends._torch import TorchBackend

    backend = TorchBackend()
    table = torch.zeros(n)
    r, v = torch.from_numpy(rows), torch.from_numpy(values)
    positions = torch.arange(rows.shape[0], dtype=torch.int32)

    def owners() -> bool:
        owner = torch.empty(n, dtype=torch.int32)
        owner.index_copy_(0, r, positions)
        return bool((owner.index_select(0, r) == positions).all())

    def by_sort() -> bool:
        ordered = torch.sort(r).values
        return not bool((ordered[1:] == ordered[:-1]).any())

    return {
        "write": lambda: table.index_copy_(0, r, v),
        "bitmap": lambda: backend.count_distinct_rows(r, n) == rows.shape[0],
        "owners": owners,
        "sort": by_sort,
    }


def measure(library: str, n: int, samples: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    rows = rng.permutation(n)[: n // 4]
    values = rng.standard_normal(rows.shape[0], dtype=np.float32)
    forms = (torch_forms if library == "torch" else numpy_forms)(n, rows, values)
    for name, fn in forms.items():
        assert fn() is not False, name  # every check finds the rows distinct
    times: dict[str, list[float]] = {name: [] for name in forms}
    names = list(forms)
    for r in range(samples):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.perf_counter()
            forms[name]()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", default="numpy,torch")
    parser.add_argument("--threads", type=int, default=1, help="torch's threads")
    parser.add_argument("--samples", type=int, default=11)
    args = parser.parse_args()
    print("library        n      write     bitmap     owners       sort   (ms)")
    for library in args.library.split(","):
        if library == "torch":
            import torch

            torch.set_num_threads(args.threads)
        for n in SIZES:
            t = measure(library, n, args.samples)
            cells = " ".join(
                f"{t[name] * 1e3:>10.2f}" for name in ("write", "bitmap", "owners", "sort")
            )
            print(f"{library:8} {n:>8} {cells}", flush=True)


if __name__ == "__main__":
    main()
