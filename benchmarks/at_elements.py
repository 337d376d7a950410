"""``at`` on NumPy's ``take_along_axis`` idiom in small calls, at several sizes, against
another copy of indexops and the library's native expression.

``python -m benchmarks.at_elements [--rounds 11] [--backend numpy,torch] [--size
1/16,1/4,1] [--kernels off] [--base-package NAME]`` prints, per library, case, size and
method, the CPU time per call (one thread, numba's kernels loaded first unless ``--kernels
off``) of ``at(x)[arange(n)[:, None], idx]`` with 3 columns of each of ``n = 64 * size``
rows of an [n, 16] float32 table (``get``, ``add`` into a copy, ``add`` in place, ``set``
and ``max`` into a copy), sampled alternately (:mod:`.interleaved`) with the same call of
the copy importable under ``NAME`` (the source of a base commit), and the native
expression sampled apart (``np.take_along_axis`` / ``torch.gather``, ``np.add.at`` /
``scatter_add_``, the library's own assignment, ``np.maximum.at`` / ``scatter_reduce_``).
The library's own element steps (``Backend.take_elements``, ``combine_elements``) take
reads, replaces and maxima up to 4,096 elements, torch's adds too,
NumPy's adds below 1,024; the element plans and their compiled kernels the rest. See
benchmarks/README.md, "Issue 35: at's index tuples of few elements" and "Issue 35: the
idiom's replace in one pass".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import base_package
from .base_package import Forms


def cases(library: str, size: float, packages: dict[str, Any]) -> dict[str, tuple[Forms, Forms]]:
    """Per method: ``at`` of each package, and the native expression."""
    rng = np.random.default_rng(0)
    rows = max(1, round(64 * size))
    table = rng.standard_normal((rows, 16), dtype=np.float32)
    counting, columns = np.arange(rows)[:, None], rng.integers(0, 16, (rows, 3))
    values = rng.standard_normal((rows, 3), dtype=np.float32)
    written = table.copy()  # the in-place form's own table
    if library == "torch":
        import torch

        table, counting, columns, values, written = map(
            torch.from_numpy, (table, counting, columns, values, written)
        )
        native_get = lambda: torch.gather(table, 1, columns)  # noqa: E731
        native_add = lambda: table.clone().scatter_add_(1, columns, values)  # noqa: E731
        native_in_place = lambda: written.scatter_add_(1, columns, values)  # noqa: E731
        native_max = lambda: table.clone().scatter_reduce_(1, columns, values, "amax")  # noqa: E731
    else:
        native_get = lambda: np.take_along_axis(table, columns, axis=1)  # noqa: E731

        def native_add() -> Any:
            out = table.copy()
            np.add.at(out, (counting, columns), values)
            return out

        native_in_place = lambda: np.add.at(written, (counting, columns), values)  # noqa: E731

        def native_max() -> Any:
            out = table.copy()
            np.maximum.at(out, (counting, columns), values)
            return out

    index = (counting, columns)
    forms = {
        "get": lambda io: io.at(table)[index].get(),
        "add": lambda io: io.at(table)[index].add(values),
        "add in place": lambda io: io.at(written)[index].add(values, copy=False),
        "set": lambda io: io.at(table)[index].set(values),
        "max": lambda io: io.at(table)[index].max(values),
    }
    native = {
        "get": native_get,
        "add": native_add,
        "add in place": native_in_place,
        "set": lambda: _set_along_axis(table, index, values, library),
        "max": native_max,
    }
    return {
        f"{method}, {rows * 3} elements": (
            {
                f"{method} {name}": (lambda f=form, p=package: f(p))
                for name, package in packages.items()
            },
            {"native": native[method]},
        )
        for method, form in forms.items()
    }


def _set_along_axis(table: Any, index: tuple[Any, Any], values: Any, library: str) -> Any:
    """The library's own ``out[rows[:, None], idx] = values`` on a copy (which of repeated
    elements' values it leaves, the library does not say)."""
    out = table.clone() if library == "torch" else table.copy()
    out[index] = values
    return out


def main(argv: list[str] | None = None) -> int:
    return base_package.entry_table(argv, __doc__.splitlines()[0], cases)


if __name__ == "__main__":
    raise SystemExit(main())
