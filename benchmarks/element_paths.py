"""The element paths (GatherElements / ScatterElements shapes) against the general path they
replace and the native call, at several sizes, in one process.

``python -m benchmarks.element_paths [--library numpy,torch] [--threads 1] [--samples 11]``
prints one line per (library, op, rows): the median time per call of the native call
(``take_along_axis`` / ``torch.gather``, ``np.add.at`` / ``scatter_reduce_``), and the
ratios to it of indexops on its element path (``after``) and on the general path
(``before``: the same call with the library's element flags off). Forms are sampled
alternately (in a new order every round; a sample is as many calls as take about
2 ms), and the executors are forgotten when the flags change, so each form runs its own.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import indexops
from indexops._plan import executors

from .interleaved import medians

ROWS = (256, 4096, 65536, 262144)
WIDTH = 64
GATHER = {
    "offset_dims": (), "collapsed_slice_dims": (1,), "start_index_map": (1,),
    "index_vector_dim": 2, "slice_sizes": (1, 1), "operand_batching_dims": (0,),
    "start_indices_batching_dims": (0,),
}  # fmt: skip
SCATTER = {
    "update_window_dims": (), "inserted_window_dims": (1,), "scatter_dims_to_operand_dims": (1,),
    "index_vector_dim": 2, "input_batching_dims": (0,), "scatter_indices_batching_dims": (0,),
}  # fmt: skip


def backend_class(library: str) -> Any:
    if library == "torch":
        from indexops._backends._torch import TorchBackend

        return TorchBackend
    from indexops._backends._numpy import NumpyBackend

    return NumpyBackend


def cases(library: str, rows: int) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """Per op: (indexops call, native call) on [rows, 64] float32 with [rows, 64] indices."""
    rng = np.random.default_rng(0)
    x_host = rng.standard_normal((rows, WIDTH), dtype=np.float32)
    idx_host = rng.integers(0, WIDTH, (rows, WIDTH))
    upd_host = rng.standard_normal((rows, WIDTH), dtype=np.float32) + 10  # no zeros
    if library == "torch":
        import torch

        x, idx, upd = (torch.from_numpy(a) for a in (x_host, idx_host, upd_host))
        native_gather = lambda: torch.gather(x, 1, idx)  # noqa: E731
        native_add = lambda: x.scatter_reduce(1, idx, upd, "sum")  # noqa: E731
        native_max = lambda: x.scatter_reduce(1, idx, upd, "amax")  # noqa: E731
    else:
        x, idx, upd = x_host, idx_host, upd_host
        where = (np.arange(rows)[:, None], idx)
        native_gather = lambda: np.take_along_axis(x, idx, axis=1)  # noqa: E731

        def at(ufunc: np.ufunc) -> Callable[[], Any]:
            def call() -> Any:
                out = x.copy()
                ufunc.at(out, where, upd)
                return out

            return call

        native_add, native_max = at(np.add), at(np.maximum)
    idx3 = idx[..., None]

    def scatter(how: str) -> Callable[[], Any]:
        return lambda: indexops.scatter(x, idx3, upd, **SCATTER, update_computation=how)

    return {
        "gather clip": (lambda: indexops.gather(x, idx3, **GATHER), native_gather),
        "scatter add": (scatter("add"), native_add),
        "scatter max": (scatter("max"), native_max),
    }


def measure(library: str, rows: int, samples: int) -> dict[str, dict[str, float]]:
    """Per op, the median seconds per call of native, after and before."""
    owner = backend_class(library)
    flags = {"gathers_elements": owner.gathers_elements}
    flags["scatters_elements"] = owner.scatters_elements

    def set_flags(on: bool) -> None:
        for name, value in flags.items():
            setattr(owner, name, value and on)
        executors._EXECUTORS.clear()

    out = {}
    for op, (ours, native) in cases(library, rows).items():
        forms = {"native": native, "after": ours, "before": ours}
        flags_on = {"native": True, "after": True, "before": False}
        prepare = {name: functools.partial(set_flags, on) for name, on in flags_on.items()}
        out[op] = medians(forms, samples, prepare)
    set_flags(True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", default="numpy,torch")
    parser.add_argument("--threads", type=int, default=1, help="torch's threads")
    parser.add_argument("--samples", type=int, default=11)
    parser.add_argument("--rows", default=",".join(map(str, ROWS)))
    args = parser.parse_args()
    print("library  op           rows     native   after/native  before/native")
    for library in args.library.split(","):
        if library == "torch":
            import torch

            torch.set_num_threads(args.threads)
        for rows in map(int, args.rows.split(",")):
            for op, t in measure(library, rows, args.samples).items():
                print(
                    f"{library:8} {op:12} {rows:>6} {t['native'] * 1e3:>8.3f}ms "
                    f"{t['after'] / t['native']:>13.2f} {t['before'] / t['native']:>14.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
