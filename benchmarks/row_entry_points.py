"""``gather`` (``clip``) and ``scatter`` (``add``) of rows through their attributes and
their ``dimension_numbers=`` form, at several sizes, against the library's own expression.

``python -m benchmarks.row_entry_points [--rounds 11] [--backend numpy,torch] [--size
1/8,1,8,64,256] [--base-package NAME]`` prints, per library, case, size and entry point,
the CPU time per call and its ratio to the library's own expression (and to the
``--base-package`` copy): ``n = 8 * size`` random rows of a [4096, 16] float32 table, and
of a [4096, 4096] one (above torch's parallel grain from 8 rows) up to 64 rows, read
(native ``x[rows]``) and added into (native ``np.add.at`` / ``index_add_`` of a copy);
``dimension_numbers=`` is jax.lax's named tuple, made once (one thread of torch).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jax.lax import GatherDimensionNumbers, ScatterDimensionNumbers

from . import base_package
from .base_package import Forms

GATHER_ROWS = GatherDimensionNumbers(
    offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
)
SCATTER_ROWS = ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)
GATHER_ATTRIBUTES = dict(GATHER_ROWS._asdict(), index_vector_dim=1)
SCATTER_ATTRIBUTES = dict(SCATTER_ROWS._asdict(), index_vector_dim=1)
del GATHER_ATTRIBUTES["operand_batching_dims"], GATHER_ATTRIBUTES["start_indices_batching_dims"]
del SCATTER_ATTRIBUTES["operand_batching_dims"], SCATTER_ATTRIBUTES["scatter_indices_batching_dims"]


def cases(library: str, size: float, packages: dict[str, Any]) -> dict[str, tuple[Forms, Forms]]:
    """Per table width and op: each entry of each package, and the library's own
    expression."""
    rng = np.random.default_rng(0)
    count = max(1, round(8 * size))
    found: dict[str, tuple[Forms, Forms]] = {}
    for width in (16, 4096):
        if width == 4096 and count > 64:  # (results of 64 MiB and more: other benchmarks')
            continue
        table = rng.standard_normal((4096, width), dtype=np.float32)
        rows = rng.integers(0, 4096, count)
        values = rng.standard_normal((count, width), dtype=np.float32)
        if library == "torch":
            import torch

            table, rows, values = map(torch.from_numpy, (table, rows, values))
            native_add = lambda t=table, r=rows, v=values: t.clone().index_add_(0, r, v)  # noqa: E731
        else:

            def native_add(t: Any = table, r: Any = rows, v: Any = values) -> Any:
                out = t.copy()
                np.add.at(out, r, v)
                return out

        starts = rows[:, None]
        sizes = (1, width)
        gathers = {
            "gather": lambda io, t=table, s=starts, z=sizes: io.gather(
                t, s, **GATHER_ATTRIBUTES, slice_sizes=z
            ),
            "gather dimension_numbers": lambda io, t=table, s=starts, z=sizes: io.gather(
                t, s, dimension_numbers=GATHER_ROWS, slice_sizes=z
            ),
        }
        scatters = {
            "scatter add": lambda io, t=table, s=starts, v=values: io.scatter(
                t, s, v, **SCATTER_ATTRIBUTES, update_computation="add"
            ),
            "scatter add dimension_numbers": lambda io, t=table, s=starts, v=values: io.scatter(
                t, s, v, dimension_numbers=SCATTER_ROWS, update_computation="add"
            ),
        }
        for op, entries, native in (
            ("read", gathers, lambda t=table, r=rows: t[r]),
            ("added", scatters, native_add),
        ):
            found[f"{count} rows of {width}, {op}"] = (
                {
                    f"{entry} {name}": (lambda f=form, p=package: f(p))
                    for entry, form in entries.items()
                    for name, package in packages.items()
                },
                {"native": native},
            )
    return found


def main(argv: list[str] | None = None) -> int:
    return base_package.entry_table(argv, __doc__.splitlines()[0], cases)


if __name__ == "__main__":
    raise SystemExit(main())
