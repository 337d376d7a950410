"""JAX: immutable arrays, never read on the host; scatters that drop, loops on the device."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.experimental import checkify

from .._typing import Array
from .._validate.combiners import Named
from ._base import Backend, ValuesUnknown

_METHODS = {Named.ADD: "add", Named.MUL: "multiply", Named.MIN: "min", Named.MAX: "max"}


class JaxBackend(Backend):
    name = "jax"
    min_max_ieee = True  # XLA's scatter min and max (tests/test_semantics_edges.py)
    native_combine = True

    def why_not_writable(self, x: Array) -> str | None:
        return "JAX arrays are immutable"

    def to_numpy(self, x: Array) -> Any:
        import numpy as np

        return np.asarray(x)

    def host_ints(self, x: Array) -> tuple[int, ...]:
        try:
            return tuple(int(v) for v in x.tolist())
        except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
            raise ValuesUnknown("traced jax") from None

    def check_on_device(self, ok: Array, message: str) -> None:
        # a no-op unless the caller wraps the function in checkify.checkify
        checkify.debug_check(ok, message)

    def weakly_typed(self, x: Array) -> bool:
        return getattr(x, "weak_type", False) is True

    def index_dtype(self) -> Any:
        """int64, or int32 without ``jax_enable_x64`` (where asking for int64 warns)."""
        return jnp.int64 if jax.config.read("jax_enable_x64") else jnp.int32

    # no device arguments: inside jit there is no concrete device, and an uncommitted
    # array follows the committed arrays it meets

    def arange(self, n: int, dtype: Any, like: Array) -> Array:
        return jnp.arange(n, dtype=dtype)

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any, like: Array) -> Array:
        return jnp.full(shape, value, dtype=dtype)

    def copy(self, x: Array) -> Array:
        return jnp.array(x, copy=True)

    def take_rows(self, table: Array, rows: Array) -> Array:
        return table.at[rows].get(mode="promise_in_bounds", unique_indices=False)

    def set_rows(
        self, table: Array, rows: Array, values: Array, keep: Array | None = None
    ) -> Array:
        if keep is None:
            return table.at[rows].set(values, mode="promise_in_bounds")
        targets = jnp.where(keep, rows, table.shape[0])
        return table.at[targets].set(values, mode="drop")

    def combine_rows(
        self,
        table: Array,
        rows: Array,
        values: Array,
        how: Named,
        keep: Array | None = None,
        unique: bool = False,
    ) -> Array:
        at = table.at[rows if keep is None else jnp.where(keep, rows, table.shape[0])]
        mode = "promise_in_bounds" if keep is None else "drop"
        # unique_indices also lets JAX differentiate a product (jax.grad of scatter_mul)
        return getattr(at, _METHODS[how])(values, mode=mode, unique_indices=unique)

    def assign_window(
        self, x: Array, key: tuple[Any, ...], values: Array, *, in_place: bool
    ) -> Array:
        return x.at[key].set(values)

    def dynamic_slice(self, x: Array, starts: list[Any], sizes: tuple[int, ...]) -> Array:
        return jax.lax.dynamic_slice(x, starts, sizes)

    def dynamic_update_slice(
        self, x: Array, update: Array, starts: list[Any], *, in_place: bool
    ) -> Array:
        return jax.lax.dynamic_update_slice(x, update, starts)

    def repeat(
        self, count: Array, body: Callable[[Array, int | Array], Array], state: Array
    ) -> Array:
        def step(carry: tuple[Array, Array]) -> tuple[Array, Array]:
            state, p = carry
            return body(state, p), p + 1

        final, _ = jax.lax.while_loop(lambda carry: carry[1] < count, step, (state, 0))
        return final
