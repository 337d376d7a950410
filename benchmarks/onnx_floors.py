"""Workloads 8-10 (and ScatterND's replace, ScatterElements add along axis 1, and
ScatterElements add on onnxruntime's tracker workload) against onnxruntime, through every
entry point users call, with and without the compiled kernels, beside the native
expression and the one library pass that any composition of the library's calls must
make.

``python -m benchmarks.onnx_floors [--size 1/16,1/4,1] [--rounds 11] [--only TEXT]
[--host-threads N] [--no-streaming] [--no-prefetch]`` (a few minutes on 2 cores,
onnxruntime required) prints, per workload, library and size, the median time of
onnxruntime (one thread) and of each form, each over onnxruntime and over the native
expression, all sampled alternately in one process (:mod:`.interleaved`). The forms:

* ``onnx``: ``indexops.onnx``'s operator (GatherElements with indices in ``[-s, s)``, as
  ONNX allows, and as onnxruntime gets them); ``at``: the NumPy idiom through
  ``indexops.at`` (``x[rows[:, None], idx]`` for GatherElements); ``core``:
  ``indexops.gather``/``scatter`` with the attributes;
* on NumPy each of these again as ``... no kernels``: within
  ``indexops._testing.without_kernels()``, the paths taken where numba is not installed;
* ``native``: the library's own expression; ``floor``, with its inputs made beforehand
  and left out of the timing: for 8 NumPy's ``np.take`` of the flat element numbers,
  already computed, and torch's ``torch.gather``; for 9 and 10 on NumPy the table's copy
  and the updates read in the order of their rows (the two passes of a route by sorted
  rows, before any combine), on torch the native ``scatter_reduce`` with the one
  comparison over its result that finds the zeros whose sign IEEE-754 may change (9) and
  ``index_add`` (10); for ScatterND's replace and ScatterElements, the table's copy.

torch runs on one thread, as in the runner, and the compiled kernels on ``--host-threads``
(default 1, as onnxruntime; ``0`` leaves the library's default, which splits a large
element gather between every core: :func:`indexops.set_host_threads`). ``--no-streaming``
stores every element gather's result through the cache (``_kernels.STREAM_MIN_BYTES``
out of reach: the kernels before "Issue 33: large gathers streamed past the cache").
``--no-prefetch`` asks for no row ahead in the row writes (``_kernels.PREFETCH_MIN_BYTES``
out of reach: the kernels before "Issue 33: rows asked for ahead").
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import torch

import indexops
from indexops import onnx
from indexops._backends import _host
from indexops._testing import without_kernels

from . import onnx_peer
from .interleaved import medians
from .workloads import ROWS, _pick, _rng, scatter_add_problem

ELEMENT_GATHER = {
    "offset_dims": (), "collapsed_slice_dims": (1,), "start_index_map": (1,),
    "index_vector_dim": 2, "slice_sizes": (1, 1), "operand_batching_dims": (0,),
    "start_indices_batching_dims": (0,),
}  # fmt: skip
ELEMENT_SCATTER = {
    "update_window_dims": (), "inserted_window_dims": (1,), "scatter_dims_to_operand_dims": (1,),
    "index_vector_dim": 2, "input_batching_dims": (0,), "scatter_indices_batching_dims": (0,),
}  # fmt: skip
ROWS_OF_ELEMENTS = {
    "update_window_dims": (), "inserted_window_dims": (0,), "scatter_dims_to_operand_dims": (0,),
    "index_vector_dim": 2, "input_batching_dims": (1,), "scatter_indices_batching_dims": (1,),
}  # fmt: skip
ENTRY_POINTS = ("onnx", "at", "core")

Forms = dict[str, Callable[[], object]]


def element_gather(size: float) -> dict[str, Forms]:
    """8: the forms of each library, on the same arrays as the runner's workload 8; the
    ONNX forms (onnxruntime's too) get half the indices as negative ones."""
    n, d = _pick(262144, 32768, False, size), 64
    rng = _rng()
    host = rng.standard_normal((n, d), dtype=np.float32)
    idx_host = rng.integers(0, d, (n, d))
    signed = np.where(rng.random((n, d)) < 0.5, idx_host - d, idx_host)  # in [-d, d)
    rows_host = np.arange(n)[:, None]
    ort = _needed(onnx_peer.one_node("GatherElements", host, {"indices": signed}, 1, axis=1))
    flat = (idx_host + np.arange(n)[:, None] * d).reshape(-1)
    x, idx, neg, rows = (torch.from_numpy(a) for a in (host, idx_host, signed, rows_host))
    return {
        "numpy": {
            "onnxruntime": lambda: ort(host),
            **_entry_points(
                lambda: onnx.gather_elements(host, signed, axis=1),
                lambda: indexops.at(host)[rows_host, signed].get(),
                lambda: indexops.gather(host, idx_host[..., None], **ELEMENT_GATHER),
                kernels_off=True,
            ),
            "native": lambda: np.take_along_axis(host, idx_host, axis=1),
            "floor": lambda: np.take(host.reshape(-1), flat),
        },
        "torch": {
            "onnxruntime": lambda: ort(host),
            **_entry_points(
                lambda: onnx.gather_elements(x, neg, axis=1),
                lambda: indexops.at(x)[rows, neg].get(),
                lambda: indexops.gather(x, idx[..., None], **ELEMENT_GATHER),
            ),
            "native": lambda: torch.gather(x, 1, idx),
            "floor": lambda: torch.gather(x, 1, idx),
        },
    }


def element_scatter_add(size: float) -> dict[str, Forms]:
    """ScatterElements add along axis 1 on workload 8's arrays (f32 updates of its
    indices' shape); the ONNX forms (onnxruntime's too) get half the indices as negative
    ones, ``at`` through ``x[rows[:, None], idx]``, the core form and the natives the
    non-negative ones."""
    n, d = _pick(262144, 32768, False, size), 64
    rng = _rng()
    host = rng.standard_normal((n, d), dtype=np.float32)
    idx_host = rng.integers(0, d, (n, d))
    signed = np.where(rng.random((n, d)) < 0.5, idx_host - d, idx_host)
    upd_host = rng.standard_normal((n, d), dtype=np.float32)
    rows_host = np.arange(n)[:, None]
    feeds = {"indices": signed, "updates": upd_host}
    ort = _needed(onnx_peer.one_node("ScatterElements", host, feeds, 1, axis=1, reduction="add"))
    x, idx, neg, upd, rows = (
        torch.from_numpy(a) for a in (host, idx_host, signed, upd_host, rows_host)
    )

    def native_numpy() -> Any:
        out = host.copy()
        np.add.at(out, (rows_host, idx_host), upd_host)
        return out

    return {
        "numpy": {
            "onnxruntime": lambda: ort(host),
            **_entry_points(
                lambda: onnx.scatter_elements(host, signed, upd_host, axis=1, reduction="add"),
                lambda: indexops.at(host)[rows_host, signed].add(upd_host),
                lambda: indexops.scatter(
                    host,
                    idx_host[..., None],
                    upd_host,
                    **ELEMENT_SCATTER,
                    update_computation="add",
                ),
                kernels_off=True,
            ),
            "native": native_numpy,
            "floor": host.copy,
        },
        "torch": {
            "onnxruntime": lambda: ort(host),
            **_entry_points(
                lambda: onnx.scatter_elements(x, neg, upd, axis=1, reduction="add"),
                lambda: indexops.at(x)[rows, neg].add(upd),
                lambda: indexops.scatter(
                    x, idx[..., None], upd, **ELEMENT_SCATTER, update_computation="add"
                ),
            ),
            "native": lambda: x.scatter_add(1, idx, upd),
            "floor": x.clone,
        },
    }


def tracker_scatter_add(size: float) -> dict[str, Forms]:
    """onnxruntime's tracker workload: ScatterElements add along axis 0 of [481385, 80]
    f32 updates with random rows (each row's index repeated along it) into [556416, 80]
    (both row counts times ``size``). ``at`` writes ``x[rows[:, None], columns]``; the
    core form pairs the columns as batching dims."""
    n, m, d = _pick(556416, 34776, False, size), _pick(481385, 30087, False, size), 80
    rng = _rng()
    host = np.zeros((n, d), dtype=np.float32)
    upd_host = rng.standard_normal((m, d), dtype=np.float32)
    rows_host = rng.integers(0, n, m)
    idx_host = np.broadcast_to(rows_host[:, None], (m, d)).copy()
    columns_host = np.arange(d)[None, :]
    feeds = {"indices": idx_host, "updates": upd_host}
    ort = _needed(onnx_peer.one_node("ScatterElements", host, feeds, 1, axis=0, reduction="add"))
    x, idx, upd, rows, columns = (
        torch.from_numpy(a) for a in (host, idx_host, upd_host, rows_host, columns_host)
    )

    def native_numpy() -> Any:
        out = host.copy()
        np.add.at(out, rows_host, upd_host)
        return out

    return {
        "numpy": {
            "onnxruntime": lambda: ort(host),
            **_entry_points(
                lambda: onnx.scatter_elements(host, idx_host, upd_host, axis=0, reduction="add"),
                lambda: indexops.at(host)[idx_host, columns_host].add(upd_host),
                lambda: indexops.scatter(
                    host,
                    idx_host[..., None],
                    upd_host,
                    **ROWS_OF_ELEMENTS,
                    update_computation="add",
                ),
            ),
            "native": native_numpy,
            "floor": host.copy,
        },
        "torch": {
            "onnxruntime": lambda: ort(host),
            **_entry_points(
                lambda: onnx.scatter_elements(x, idx, upd, axis=0, reduction="add"),
                lambda: indexops.at(x)[idx, columns].add(upd),
                lambda: indexops.scatter(
                    x, idx[..., None], upd, **ROWS_OF_ELEMENTS, update_computation="add"
                ),
            ),
            "native": lambda: x.index_add(0, rows, upd),
            "floor": x.clone,
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

    torch_native = (
        (lambda: x.index_add(0, idx, upd))
        if how == "add"
        else (lambda: torch.scatter_reduce(x, 0, index, upd, "amax"))
    )
    return {
        "numpy": {
            "onnxruntime": lambda: ort(host),
            **_scatter_entry_points(host, idx_host, upd_host, how, kernels_off=True),
            "native": native_numpy,
            "floor": lambda: (host.copy(), np.take(upd_host, order, axis=0)),
        },
        "torch": {
            "onnxruntime": lambda: ort(host),
            **_scatter_entry_points(x, idx, upd, how),
            "native": torch_native,
            "floor": scan_of_zeros if how == "max" else torch_native,
        },
    }


def rows_replace(size: float) -> dict[str, Forms]:
    """ScatterND ``none`` of distinct f32 rows (a quarter of the table's rows, in random
    order) into workload 2's table, without ``unique_indices``: the last-write search
    that the kernel makes unneeded."""
    host, _, _, _ = scatter_add_problem(False, size)
    rng = _rng()
    idx_host = rng.permutation(host.shape[0])[: max(1, host.shape[0] // 4)]
    upd_host = rng.standard_normal((idx_host.shape[0], host.shape[1]), dtype=np.float32)
    feeds = {"indices": idx_host[:, None], "updates": upd_host}
    ort = _needed(onnx_peer.one_node("ScatterND", host, feeds, 1, reduction="none"))
    x, idx, upd = (torch.from_numpy(a) for a in (host, idx_host, upd_host))

    def native_numpy() -> Any:
        out = host.copy()
        out[idx_host] = upd_host
        return out

    return {
        "numpy": {
            "onnxruntime": lambda: ort(host),
            **_scatter_entry_points(host, idx_host, upd_host, None, kernels_off=True),
            "native": native_numpy,
            "floor": host.copy,
        },
        "torch": {
            "onnxruntime": lambda: ort(host),
            **_scatter_entry_points(x, idx, upd, None),
            "native": lambda: x.index_copy(0, idx, upd),
            "floor": x.clone,
        },
    }


def _scatter_entry_points(
    table: Any, rows: Any, values: Any, how: str | None, kernels_off: bool = False
) -> Forms:
    """ScatterND, ``at`` and the core scatter of ``values`` into ``table``'s ``rows``."""
    method = {"max": "max", "add": "add", None: "set"}[how]
    column = rows[:, None]
    return _entry_points(
        lambda: onnx.scatter_nd(table, column, values, reduction=how or "none"),
        lambda: getattr(indexops.at(table)[rows], method)(values),
        lambda: indexops.scatter(table, column, values, **ROWS, update_computation=how),
        kernels_off=kernels_off,
    )


def _entry_points(
    onnx_form: Callable[[], object],
    at_form: Callable[[], object],
    core_form: Callable[[], object],
    kernels_off: bool = False,
) -> Forms:
    """The three entry points, and where asked each again without the compiled kernels."""
    forms = dict(zip(ENTRY_POINTS, (onnx_form, at_form, core_form)))
    if kernels_off:
        forms |= {f"{name} no kernels": _without_kernels(fn) for name, fn in forms.items()}
    return forms


def _without_kernels(fn: Callable[[], object]) -> Callable[[], object]:
    def call() -> object:
        with without_kernels():
            return fn()

    return call


def _needed(session: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    if session is None:
        raise SystemExit("onnxruntime and onnx are needed (the bench extra)")
    return session


WORKLOADS: dict[str, Callable[[float], dict[str, Forms]]] = {
    "8 GatherElements": element_gather,
    "9 ScatterND max, f32": lambda size: rows_reduce(size, "max"),
    "10 ScatterND add, int64": lambda size: rows_reduce(size, "add"),
    "ScatterND none, distinct rows": rows_replace,
    "ScatterElements add, axis 1": element_scatter_add,
    "ScatterElements add, tracker": tracker_scatter_add,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--size", default="1", help="fractions of the full size, comma-separated (1/16,1/4,1)"
    )
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--only", default="", help="workloads whose name contains this text")
    parser.add_argument("--library", default="numpy,torch")
    parser.add_argument(
        "--host-threads", type=int, default=1, help="the kernels' threads (0: the default)"
    )
    parser.add_argument(
        "--no-streaming", action="store_true", help="no element gather streams its result"
    )
    parser.add_argument(
        "--no-prefetch", action="store_true", help="no row write asks for its rows ahead"
    )
    args = parser.parse_args()
    kernels = _host.load_kernels()
    if args.no_streaming and kernels is not None:
        kernels.STREAM_MIN_BYTES = 2**62
    if args.no_prefetch and kernels is not None:
        kernels.PREFETCH_MIN_BYTES = 2**62
    torch.set_num_threads(1)
    indexops.set_host_threads(args.host_threads or None)
    sizes = [Fraction(size) for size in args.size.split(",")]
    print(
        f"torch {torch.get_num_threads()} thread, onnxruntime 1 thread, "
        f"the kernels up to {indexops.host_threads()}"
    )
    print("| workload | library | size | form | ms | / onnxruntime | / native |")
    print("|---|---|---|---|---|---|---|")
    for name, workload in WORKLOADS.items():
        if args.only not in name:
            continue
        for size in sizes:
            libraries = workload(float(size))
            for library in args.library.split(","):
                times = medians(libraries[library], args.rounds)
                ort, native = times["onnxruntime"], times["native"]
                for form, seconds in times.items():
                    print(
                        f"| {name} | {library} | {size} | {form} | {seconds * 1e3:.2f} | "
                        f"{seconds / ort:.2f} | {seconds / native:.2f} |"
                    )


if __name__ == "__main__":
    main()
