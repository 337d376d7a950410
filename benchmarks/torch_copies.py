"""A torch CPU tensor's copy by ``clone`` and by NumPy, at sizes around malloc's mmap bound.

``python -m benchmarks.torch_copies [--samples 15]`` prints, per size, the median time of
``x.clone()`` and of ``torch.from_numpy(np.array(x.numpy(), copy=True))`` (what
``indexops`` does from ``_torch.NUMPY_COPY_MIN_BYTES`` on), and their ratio, with the
machine's transparent-huge-page mode (NumPy asks for huge pages for large arrays, torch's
allocator does not; the mode decides whether asking matters). One thread.
"""

from __future__ import annotations

import argparse
import pathlib
import time
from collections.abc import Callable

import numpy as np
import torch

SIZES_MB = (1, 4, 16, 32, 64, 128)
THP = pathlib.Path("/sys/kernel/mm/transparent_hugepage/enabled")


def by_numpy(x: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.array(x.numpy(), copy=True))


def median_ms(call: Callable[[], object], samples: int) -> float:
    call()  # (a warm-up)
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return sorted(times)[samples // 2] * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    mode = THP.read_text().strip() if THP.exists() else "unknown"
    print(f"transparent huge pages: {mode}")
    print("| MB | torch clone (ms) | NumPy copy, as a tensor (ms) | ratio |")
    print("|---|---|---|---|")
    for size in SIZES_MB:
        x = torch.randn(size * 2**18)
        cloned = median_ms(x.clone, args.samples)
        copied = median_ms(lambda tensor=x: by_numpy(tensor), args.samples)
        print(f"| {size} | {cloned:.3f} | {copied:.3f} | {copied / cloned:.2f} |")


if __name__ == "__main__":
    main()
