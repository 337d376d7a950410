"""Writes in place that a row outside may stop, checked before they write: the paged KV
write and ``promise_in_bounds`` scatters, through each entry point, against another copy of
indexops and the library's native expression.

``python -m benchmarks.checked_writes [--rounds 11] [--backend numpy,torch] [--size
1/16,1/4,1] [--base-package NAME]`` prints, per library, case, size and entry point, the CPU
time per call (one thread, numba's kernels loaded first), sampled alternately
(:mod:`.interleaved`) with the same call of the copy of indexops importable under ``NAME``
(the source of a base commit), and the native expression sampled apart. The cases:
workload 3's ``scatter_update`` of a paged KV cache (with the last eighth of each sequence
padding, -1, too), workload 2's add of repeating rows in place under ``promise_in_bounds``
(core ``scatter`` and ``at(x)[rows].add``), and an add of elements along the last axis in
place under ``promise_in_bounds`` (core ``scatter`` with batching dims and
``at(x)[rows[:, None], idx].add``). See benchmarks/README.md, "Issue 33: row writes
prepared per signature, checked before they write".
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import base_package
from .base_package import Forms
from .workloads import ROWS, _rng, scatter_add_problem

ELEMENTS = {
    "update_window_dims": (), "inserted_window_dims": (1,), "scatter_dims_to_operand_dims": (1,),
    "index_vector_dim": 2, "input_batching_dims": (0,), "scatter_indices_batching_dims": (0,),
}  # fmt: skip
PROMISE = {"mode": "promise_in_bounds", "copy": False}


def paged_cache(size: float, padded: bool) -> tuple[Any, Any, Any]:
    """Workload 3's cache ``[2048, 16, 1, 1024]``, slots ``[4, 1024]`` and tokens, at
    ``size`` of the blocks and tokens; ``padded``: the last eighth of each sequence -1."""
    rng = _rng()
    blocks, tokens = max(1, round(2048 * size)), max(8, round(1024 * size))
    cache = rng.standard_normal((blocks, 16, 1, 1024), dtype=np.float32)
    slots = rng.permutation(blocks * 16)[: 4 * tokens].reshape(4, tokens)
    if padded:
        slots[:, tokens - tokens // 8 :] = -1
    return cache, slots, rng.standard_normal((4, tokens, 1, 1024), dtype=np.float32)


def element_problem(size: float) -> tuple[Any, Any, Any]:
    """``[rows, 64]`` float32, 64 indices per row along the last axis, and their updates:
    4M elements at full size."""
    rng = _rng()
    rows = max(1, round(65536 * size))
    x = rng.standard_normal((rows, 64), dtype=np.float32)
    return x, rng.integers(0, 64, (rows, 64)), rng.standard_normal((rows, 64), dtype=np.float32)


def cases(library: str, size: float, packages: dict[str, Any]) -> dict[str, tuple[Forms, Forms]]:
    """Per case: each entry point of each package, and the native expression."""
    convert: Callable[[Any], Any] = np.asarray
    if library == "torch":
        import torch

        convert = torch.from_numpy
    found: dict[str, tuple[Forms, Forms]] = {}
    for padded in (False, True):
        cache, slots, tokens = (convert(a) for a in paged_cache(size, padded))
        found["paged KV write" + (", padded" if padded else "")] = (
            {
                f"scatter_update {name}": functools.partial(
                    package.scatter_update, cache, -2, slots, tokens
                )
                for name, package in packages.items()
            },
            {"native": _native_rows_set(library, cache, slots, tokens)},
        )
    table, rows, updates, _ = (convert(a) for a in scatter_add_problem(False, size))
    found["row add, promise_in_bounds"] = (
        _entries(
            packages,
            lambda p: p.scatter(
                table, rows[:, None], updates, **ROWS, update_computation="add", **PROMISE
            ),
            lambda p: p.at(table)[rows].add(updates, **PROMISE),
        ),
        {"native": _native_row_add(library, table, rows, updates)},
    )
    x, idx, values = (convert(a) for a in element_problem(size))
    lead = convert(np.arange(x.shape[0]))[:, None]
    found["element add, promise_in_bounds"] = (
        _entries(
            packages,
            lambda p: p.scatter(
                x, idx[..., None], values, **ELEMENTS, update_computation="add", **PROMISE
            ),
            lambda p: p.at(x)[lead, idx].add(values, **PROMISE),
        ),
        {"native": _native_element_add(library, x, idx, values)},
    )
    return found


def _entries(
    packages: dict[str, Any], core: Callable[[Any], object], at: Callable[[Any], object]
) -> Forms:
    """The core form and the ``at`` form, a function of the package, of each package."""
    return {
        f"{entry} {name}": functools.partial(call, package)
        for name, package in packages.items()
        for entry, call in (("core", core), ("at", at))
    }


def _native_rows_set(library: str, cache: Any, slots: Any, tokens: Any) -> Callable[[], object]:
    """The cache's rows assigned at the slots (where some are padding, those kept, the
    mask made on each call)."""
    table = cache.reshape(-1, cache.shape[-1])
    flat, values = slots.reshape(-1), tokens.reshape(-1, cache.shape[-1])
    padded = bool((flat < 0).any())

    def write() -> None:
        rows, kept = flat, values
        if padded:
            mask = flat >= 0
            rows, kept = flat[mask], values[mask]
        if library == "torch":
            table.index_copy_(0, rows, kept)
        else:
            table[rows] = kept

    return write


def _native_row_add(library: str, table: Any, rows: Any, updates: Any) -> Callable[[], object]:
    if library == "torch":
        return lambda: table.index_add_(0, rows, updates)
    return lambda: np.add.at(table, rows, updates)


def _native_element_add(library: str, x: Any, idx: Any, values: Any) -> Callable[[], object]:
    if library == "torch":
        return lambda: x.scatter_add_(1, idx, values)
    lead = np.arange(x.shape[0])[:, None]
    return lambda: np.add.at(x, (lead, idx), values)


def main(argv: list[str] | None = None) -> int:
    return base_package.entry_table(argv, __doc__.splitlines()[0], cases)


if __name__ == "__main__":
    raise SystemExit(main())
