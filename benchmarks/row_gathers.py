"""``gather`` of rows in its default mode (``clip``) at several sizes, against ``x[rows]``.

``python -m benchmarks.row_gathers [--rounds 11] [--backend numpy,torch] [--size
1/8,1,8,64,256] [--base-package NAME]`` prints, per library, case, size and entry point,
the CPU time per call and its ratio to the library's ``x[rows]`` (and to the
``--base-package`` copy): ``n = 8 * size`` random rows of a [4096, 16] float32 table, and
as many rows of a [4096, 4096] one (above torch's parallel grain from 8 of them), through
``gather``'s attributes and its ``dimension_numbers=`` form (jax.lax's
``GatherDimensionNumbers``, made once; one thread of torch).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jax.lax import GatherDimensionNumbers

from . import base_package
from .base_package import Forms

ROWS = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))


def cases(library: str, size: float, packages: dict[str, Any]) -> dict[str, tuple[Forms, Forms]]:
    """Per table width: ``gather`` of each package by each entry, and ``x[rows]``."""
    rng = np.random.default_rng(0)
    count = max(1, round(8 * size))
    found: dict[str, tuple[Forms, Forms]] = {}
    for width in (16, 4096):
        if width == 4096 and count > 64:  # (a result of 64 MiB and more: another benchmark's)
            continue
        table = rng.standard_normal((4096, width), dtype=np.float32)
        rows = rng.integers(0, 4096, count)
        if library == "torch":
            import torch

            table, rows = torch.from_numpy(table), torch.from_numpy(rows)
        starts = rows[:, None]

        def by_attributes(io: Any, table: Any = table, starts: Any = starts) -> Any:
            return io.gather(
                table, starts, offset_dims=(1,), collapsed_slice_dims=(0,),
                start_index_map=(0,), index_vector_dim=1, slice_sizes=(1, table.shape[1]),
            )  # fmt: skip

        def by_numbers(io: Any, table: Any = table, starts: Any = starts) -> Any:
            return io.gather(table, starts, dimension_numbers=ROWS, slice_sizes=(1, table.shape[1]))

        entries = {"gather": by_attributes, "gather dimension_numbers": by_numbers}
        found[f"{count} rows of {width}"] = (
            {
                f"{entry} {name}": (lambda f=form, p=package: f(p))
                for entry, form in entries.items()
                for name, package in packages.items()
            },
            {"native": lambda table=table, rows=rows: table[rows]},
        )
    return found


def main(argv: list[str] | None = None) -> int:
    return base_package.entry_table(argv, __doc__.splitlines()[0], cases)


if __name__ == "__main__":
    raise SystemExit(main())
