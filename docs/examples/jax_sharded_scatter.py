"""indexops under ``jax.jit`` on a table sharded over several devices (SPMD partitioning).

Run ``python docs/examples/jax_sharded_scatter.py``: on a CPU-only machine it asks XLA for 4
host devices (``XLA_FLAGS=--xla_force_host_platform_device_count=4``), shards a table by
rows over them, and scatter-adds and gathers rows under ``jax.jit``. It prints where the
result lives and checks the values against NumPy.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

import indexops

ROWS = {
    "update_window_dims": (1,),
    "inserted_window_dims": (0,),
    "scatter_dims_to_operand_dims": (0,),
    "index_vector_dim": 1,
}
GATHER_ROWS = {
    "offset_dims": (1,),
    "collapsed_slice_dims": (0,),
    "start_index_map": (0,),
    "index_vector_dim": 1,
}


def main() -> None:
    # before jax is first imported: XLA reads the flag once
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    devices = jax.devices()
    # Auto axes: XLA's SPMD partitioner decides how each op of the jitted function splits
    mesh = jax.make_mesh((len(devices),), ("rows",), axis_types=(AxisType.Auto,))
    by_rows = NamedSharding(mesh, P("rows"))
    rng = np.random.default_rng(0)
    table = np.zeros((1024, 8), np.float32)
    rows = rng.integers(-16, 1040, (4096, 1))  # some out of bounds: dropped per element
    updates = rng.standard_normal((4096, 8)).astype(np.float32)

    @jax.jit
    def step(table: Any, rows: Any, updates: Any) -> tuple[Any, Any]:
        added = indexops.scatter(table, rows, updates, **ROWS, update_computation="add")
        read = indexops.gather(added, rows[:8], **GATHER_ROWS, slice_sizes=(1, 8))
        return added, read

    sharded = jax.device_put(jnp.asarray(table), by_rows)
    added, read = step(sharded, jnp.asarray(rows), jnp.asarray(updates))
    expected = indexops.scatter(table, rows, updates, **ROWS, update_computation="add")
    np.testing.assert_allclose(np.asarray(added), expected, rtol=1e-5, atol=1e-5)
    print(f"{len(devices)} devices: {[d.platform for d in devices]}")
    print(f"table sharding: {sharded.sharding.spec}, result sharding: {added.sharding.spec}")
    print("rows per device:", [s.data.shape[0] for s in added.addressable_shards])
    print("gathered rows:", read.shape, "values match NumPy: True")
    compiled = step.lower(sharded, jnp.asarray(rows), jnp.asarray(updates)).compile().as_text()
    collectives = ("all-gather", "all-reduce", "all-to-all", "collective-permute")
    print("collectives in the compiled step:", {c: compiled.count(f"{c}(") for c in collectives})


if __name__ == "__main__":
    main()
