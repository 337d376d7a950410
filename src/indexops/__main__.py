"""``python -m indexops``: a short tour of the ops on every installed backend."""

from __future__ import annotations

import importlib
import time
from types import ModuleType

import indexops

CANDIDATES = {
    "numpy": "numpy",
    "array-api-strict": "array_api_strict",
    "torch": "array_api_compat.torch",
    "jax": "jax.numpy",
    "dask": "dask.array",
    "cupy": "cupy",
}


def installed_backends() -> dict[str, ModuleType]:
    found = {}
    for name, module in CANDIDATES.items():
        try:
            found[name] = importlib.import_module(module)
        except ImportError:
            continue
        if name == "cupy":
            try:
                if found[name].cuda.runtime.getDeviceCount() < 1:
                    del found[name]
            except Exception:
                del found[name]
    return found


def show(title: str, value: object) -> None:
    compute = getattr(value, "compute", None)  # a lazy array (Dask) prints its values computed
    text = str(value if compute is None else compute()).replace("\n", "\n    ")
    print(f"  {title}:\n    {text}")


def tour(xp: ModuleType) -> None:
    operand = xp.reshape(xp.arange(12, dtype=xp.int32), (4, 3))
    rows = xp.asarray([[3], [0], [9]], dtype=xp.int32)
    show(
        "gather rows 3, 0, 9 (9 is clamped to the last row)",
        indexops.gather(
            operand,
            rows,
            offset_dims=(1,),
            collapsed_slice_dims=(0,),
            start_index_map=(0,),
            index_vector_dim=1,
            slice_sizes=(1, 3),
        ),
    )
    show("dynamic_slice at (-1, 2), size (2, 2)", indexops.dynamic_slice(operand, (-1, 2), (2, 2)))
    for step in (
        _tour_scatter,
        _tour_dynamic_update_slice,
        _tour_slice_scatter,
        _tour_scatter_update,
    ):
        step(xp, operand)


def _tour_scatter(xp: ModuleType, operand: object) -> None:
    rows = xp.asarray([[1], [1], [3]], dtype=xp.int32)
    updates = xp.ones((3, 3), dtype=xp.int32)
    show(
        "scatter-add ones into rows 1, 1, 3 (duplicates accumulate)",
        indexops.scatter(
            operand,
            rows,
            updates,
            update_window_dims=(1,),
            inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,),
            index_vector_dim=1,
            update_computation="add",
        ),
    )


def _tour_dynamic_update_slice(xp: ModuleType, operand: object) -> None:
    patch = xp.zeros((2, 2), dtype=xp.int32)
    show(
        "dynamic_update_slice zeros at (3, 3) (clamped to (2, 1))",
        indexops.dynamic_update_slice(operand, patch, (3, 3)),
    )


def _tour_slice_scatter(xp: ModuleType, operand: object) -> None:
    patch = xp.full((2, 3), -1, dtype=xp.int32)
    show(
        "slice_scatter -1 into rows 3 and 1 (start 3, stop 0, step -2)",
        indexops.slice_scatter(operand, patch, [3], [0], [-2]),
    )


def _tour_scatter_update(xp: ModuleType, operand: object) -> None:
    cache = xp.zeros((4, 3), dtype=xp.int32)
    slots = xp.asarray([[2, -1]], dtype=xp.int32)
    tokens = xp.reshape(xp.arange(1, 7, dtype=xp.int32), (2, 3))
    show(
        "scatter_update: token 0 into slot 2, slot -1 is padding",
        indexops.scatter_update(cache, -2, slots, tokens, copy=True),
    )


def main() -> None:
    backends = installed_backends()
    print(f"indexops {indexops.__version__}: backends found: {', '.join(backends)}\n")
    for name, xp in backends.items():
        print(f"[{name}]")
        tour(xp)
        print()
    print("[compiled host kernels]")
    start = time.perf_counter()
    count = indexops.compile_host_kernels()
    if count:
        print(f"  {count} kernel signatures of the common dtypes in numba's cache on disk,")
        print(f"  in {time.perf_counter() - start:.1f} s (later processes load them from there)")
    else:
        print("  numba is not installed: the `fast` extra brings the compiled kernels")


if __name__ == "__main__":
    main()
