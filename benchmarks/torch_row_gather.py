"""The torch CPU row gather, every native form against every size: what ``take_rows`` picks.

``python -m benchmarks.torch_row_gather [--threads 1,2] [--samples 15]`` prints one line per
(threads, row width, rows gathered): the median time per call of ``index_select`` and the
ratio of each other form to it. Forms are sampled alternately (the order rotates every
round; a sample is as many calls as take about 2 ms), so that a burst of load on a shared
machine hits them alike.

Forms for in-bounds rows: ``x[idx]``; ``np_take`` (NumPy's ``take`` on the shared memory,
wrapped back with ``torch.from_numpy``); ``is_np_out`` (``index_select`` into a result
allocated by NumPy). Forms that clip: ``clamp_is`` (``clamp`` of the rows, then
``index_select``); ``np_clip`` (``take`` with ``mode="clip"``); ``aminmax_is`` (one read
of the rows to check they are in range, ``index_select`` without a clamp when they are).
``take_rows`` and ``clipped`` (``take_rows_clipped``): what the torch backend does now.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import torch

from indexops._backends._torch import TorchBackend

from .interleaved import medians

WIDTHS = (16, 128, 1024)
COUNTS = (8, 64, 256, 1024, 4096, 16384, 65536, 262144)
MAX_RESULT_BYTES = 128 * 2**20
MAX_TABLE_BYTES = 256 * 2**20


def forms(table: torch.Tensor, idx: torch.Tensor) -> dict[str, Callable[[], object]]:
    t, i, n = table.numpy(), idx.numpy(), table.shape[0]
    backend = TorchBackend()
    shape = (idx.shape[0], table.shape[1])

    def np_out() -> torch.Tensor:
        out = torch.from_numpy(np.empty(shape, dtype=np.float32))
        return torch.index_select(table, 0, idx, out=out)

    def checked() -> torch.Tensor:
        low, high = torch.aminmax(idx)
        rows = idx if int(low) >= 0 and int(high) < n else torch.clamp(idx, 0, n - 1)
        return table.index_select(0, rows)

    return {
        "index_select": lambda: table.index_select(0, idx),
        "x[idx]": lambda: table[idx],
        "np_take": lambda: torch.from_numpy(np.take(t, i, axis=0)),
        "is_np_out": np_out,
        "clamp_is": lambda: table.index_select(0, torch.clamp(idx, 0, n - 1)),
        "np_clip": lambda: torch.from_numpy(np.take(t, i, axis=0, mode="clip")),
        "aminmax_is": checked,
        "take_rows": lambda: backend.take_rows(table, idx),
        "clipped": lambda: backend.take_rows_clipped(table, idx),
    }


def measure(width: int, count: int, samples: int) -> dict[str, float]:
    """Median seconds per call of each form."""
    n = min(max(4 * count, 1024), max(MAX_TABLE_BYTES // (4 * width), count))
    rng = np.random.default_rng(0)
    table = torch.from_numpy(rng.standard_normal((n, width), dtype=np.float32))
    idx = torch.from_numpy(rng.integers(0, n, count))
    candidates = forms(table, idx)
    expected = table.numpy()[idx.numpy()]
    for name, fn in candidates.items():
        assert np.array_equal(np.asarray(fn()), expected), name
    return medians(candidates, samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    args = parser.parse_args()
    header = None
    for threads in map(int, args.threads.split(",")):
        torch.set_num_threads(threads)
        for width in map(int, args.widths.split(",")):
            for count in COUNTS:
                if count * width * 4 > MAX_RESULT_BYTES:
                    continue
                medians = measure(width, count, args.samples)
                if header is None:
                    header = "thr width   rows  result  index_select  " + " ".join(
                        f"{name:>10}" for name in list(medians)[1:]
                    )
                    print(header)
                base = medians["index_select"]
                ratios = " ".join(f"{t / base:>10.2f}" for t in list(medians.values())[1:])
                result = count * width * 4 / 2**20
                print(
                    f"{threads:>3} {width:>5} {count:>6} {result:>6.2f}M {base * 1e6:>11.1f}us"
                    f" {ratios}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
