"""Workloads 8-10 against onnxruntime, beside the one library pass that any composition of
the library's calls must make: how close to onnxruntime NumPy and torch can get without
compiled code of our own.

``python -m benchmarks.onnx_floors [--size 1] [--rounds 11]`` (about a minute on 2 cores,
onnxruntime required) prints, per workload and library, the median time of onnxruntime
(one thread), of indexops, of the native expression and of the *floor*, each over
onnxruntime. The floors, with their inputs made beforehand and left out of the timing:

* 8, GatherElements: NumPy's ``np.take`` of the flat element numbers, already computed;
  torch's ``torch.gather`` (the one call that reads the elements).
* 9 and 10 on NumPy, ScatterND max and int64 add of rows with duplicates: the table's
  copy and the updates read in the order of their rows (``np.take`` of a computed order),
  the two passes of a route by sorted rows, before any combine.
* 9 on torch: the native ``scatter_reduce`` (whose zeros can have the wrong sign) and the
  one comparison over its result that finds the zeros whose sign IEEE-754 may change.
* 10 on torch: ``index_add``, the native.

torch runs on one thread, as in the runner.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import indexops

from . import onnx_peer
from .interleaved import medians
from .workloads import ROWS, _pick, _rng, scatter_add_problem

ELEMENT_GATHER = {
    "offset_dims": (), "collapsed_slice_dims": (1,), "start_index_map": (1,),
    "index_vector_dim": 2, "slice_sizes": (1, 1), "operand_batching_dims": (0,),
    "start_indices_batching_dims": (0,),
}  # fmt: skip

Forms = dict[str, Callable[[], object]]


def element_gather(size: float) -> dict[str, Forms]:
    """8: the forms of each library, on the same arrays as the runner's workload 8."""
    n, d = _pick(262144, 32768, False, size), 64
    rng = _rng()
    host = rng.standard_normal((n, d), dtype=np.float32)
    idx_host = rng.integers(0, d, (n, d))
    ort = _needed(onnx_peer.one_node("GatherElements", host, {"indices": idx_host}, 1, axis=1))
    flat = (idx_host + np.arange(n)[:, None] * d).reshape(-1)
    x, idx = torch.from_numpy(host), torch.from_numpy(idx_host)
    return {
        "numpy": {
            "onnxruntime": lambda: ort(host),
            "indexops": lambda: indexops.gather(host, idx_host[..., None], **ELEMENT_GATHER),
            "native": lambda: np.take_along_axis(host, idx_host, axis=1),
            "floor": lambda: np.take(host.reshape(-1), flat),
        },
        "torch": {
            "onnxruntime": lambda: ort(host),
            "indexops": lambda: indexops.gather(x, idx[..., None], **ELEMENT_GATHER),
            "native": lambda: torch.gather(x, 1, idx),
            "floor": lambda: torch.gather(x, 1, idx),
        },
    }


def rows_reduce(size: float, how: str) -> dict[str, Forms]:
    """9 (``max``, float32) and 10 (``add``, int64): the runner's workloads 9 and 10."""
    host, idx_host, upd_host, _ = scatter_add_problem(False, size)
    if how == "add":
        host, upd_host = (np.round(a * 1000).astype(np.int64) for a in (host, upd_host))
    feeds = {"indices": idx_host[:, None], "updates": upd_host}
    ort = _needed(onnx_peer.one_node("ScatterND", host, feeds, 1, reduction=how))
    ufunc = {"max": np.maximum, "add": np.add}[how]
    order = np.argsort(idx_host, kind="stable")
    x, idx, upd = (torch.from_numpy(a) for a in (host, idx_host, upd_host))
    index = idx[:, None].expand_as(upd)

    def native_numpy() -> Any:
        out = host.copy()
        ufunc.at(out, idx_host, upd_host)
        return out

    def scan_of_zeros() -> Any:
        result = torch.scatter_reduce(x, 0, index, upd, "amax")
        return result, np.equal(result.numpy(), 0).any()

    def call(table: Any, rows: Any, values: Any) -> Callable[[], object]:
        rows = rows[:, None]
        return lambda: indexops.scatter(table, rows, values, **ROWS, update_computation=how)

    torch_native = (
        (lambda: x.index_add(0, idx, upd))
        if how == "add"
        else (lambda: torch.scatter_reduce(x, 0, index, upd, "amax"))
    )
    return {
        "numpy": {
            "onnxruntime": lambda: ort(host),
            "indexops": call(host, idx_host, upd_host),
            "native": native_numpy,
            "floor": lambda: (host.copy(), np.take(upd_host, order, axis=0)),
        },
        "torch": {
            "onnxruntime": lambda: ort(host),
            "indexops": call(x, idx, upd),
            "native": torch_native,
            "floor": scan_of_zeros if how == "max" else torch_native,
        },
    }


def _needed(session: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    if session is None:
        raise SystemExit("onnxruntime and onnx are needed (the bench extra)")
    return session


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=float, default=1.0, help="fraction of the full size")
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    torch.set_num_threads(1)
    workloads = {
        "8 element gather": element_gather(args.size),
        "9 scatter max float32": rows_reduce(args.size, "max"),
        "10 scatter add int64": rows_reduce(args.size, "add"),
    }
    print(f"size {args.size}, torch {torch.get_num_threads()} thread, onnxruntime 1 thread")
    columns = ("indexops", "native", "floor")
    header = "".join(f" {column:>9}" for column in columns)
    print(f"{'workload':24} {'library':6} {'onnxruntime':>12}{header}")
    for name, libraries in workloads.items():
        for library, forms in libraries.items():
            times = medians(forms, args.rounds)
            ort = times.pop("onnxruntime")
            ratios = "".join(f" {times[form] / ort:9.2f}" for form in columns)
            print(f"{name:24} {library:6} {ort * 1e3:9.2f} ms{ratios}")


if __name__ == "__main__":
    main()
