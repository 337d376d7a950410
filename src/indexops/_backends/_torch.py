"""torch: CPU tensors read on the host when eager; GPU, meta and compiled calls never are.

Elementwise work calls torch directly rather than through array-api-compat's wrappers,
which copy Python scalars to the device (a host-to-device transfer per call) and are
not all traceable by ``torch.compile``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any, Literal

import array_api_compat.torch as torch_namespace
import numpy as np
import torch

from .._combiners import Named
from .._typing import Array
from ._base import NativeScatter, ValuesUnknown

torch_is_compiling = torch.compiler.is_compiling
_REDUCE = {Named.MUL: "prod", Named.MIN: "amin", Named.MAX: "amax"}
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)

# Row gathers of up to this many elements (torch's parallel grain size) use index_select on
# the host too: it costs 2-3 us less than the trip through NumPy (f32, 1 thread, medians:
# 8 rows of 16 4.8 vs 7.5 us, 256 rows of 128 9.0 vs 10.8 us, 1024 rows of 128 20.6 vs
# 20.7 us), and on 2 threads it stayed that fast up to 256 rows of 128 (5.3 us). Above it
# NumPy's take was as fast or faster on 1 thread (4096 rows 0.97x, 16384 0.87x, 65536 0.42x
# of index_select), and index_select on 2 threads of a busy 2-core machine 1.8-600x slower
# (512 to 65536 rows of 128)
INDEX_SELECT_MAX_ELEMENTS = 2**15


class TorchBackend(NativeScatter):
    name = "torch"

    def __init__(self, xp: ModuleType = torch_namespace) -> None:
        super().__init__(xp)

    def device(self, x: Array) -> Any:
        return x.device

    def writable(self, x: Array) -> bool:
        if x.requires_grad and x.is_leaf:
            return False
        return torch_is_compiling() or not x.is_inference()  # Dynamo cannot ask

    def shares_memory(self, a: Array, b: Array) -> bool:
        if a.device.type == "meta":
            return a is b
        if torch_is_compiling():  # Dynamo cannot read storage pointers; a reshape of a
            return a.is_contiguous() and b.is_contiguous()  # contiguous tensor is a view
        return bool(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())

    def _values_on_host(self, x: Array) -> bool:
        return (
            x.device.type == "cpu"
            and type(x) in _PLAIN_TYPES
            and not torch_is_compiling()
            and not torch._C._functorch.is_functorch_wrapped_tensor(x)
        )

    def to_numpy(self, x: Array) -> Any:
        return x.detach().cpu().numpy()

    def host_ints(self, x: Array) -> tuple[int, ...]:
        if torch_is_compiling() or x.device.type == "meta" or type(x) not in _PLAIN_TYPES:
            raise ValuesUnknown("traced or meta torch")
        return tuple(int(v) for v in x.tolist())

    def check_on_device(self, ok: Array, message: str) -> None:
        if ok.device.type != "meta":
            torch._assert_async(ok, message)  # a device-side assert: no sync

    def index_dtype(self) -> Any:
        return torch.int64

    def arange(self, n: int, dtype: Any, like: Array) -> Array:
        return torch.arange(n, dtype=dtype, device=like.device)

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any, like: Array) -> Array:
        return torch.full(shape, value, dtype=dtype, device=like.device)

    def clip(self, x: Array, low: int | None, high: int | None) -> Array:
        return torch.clamp(x, low, high)

    def where(self, condition: Array, a: Any, b: Any) -> Array:
        return torch.where(condition, a, b)

    def copy(self, x: Array) -> Array:
        return x.clone()

    def take_rows(self, table: Array, rows: Array) -> Array:
        """``index_select``; for big gathers on the host, NumPy's ``take`` (see
        :data:`INDEX_SELECT_MAX_ELEMENTS`)."""
        return self._take(table, rows, "raise")

    def take_rows_clipped(self, table: Array, rows: Array) -> Array:
        return self._take(table, rows, "clip")

    def _take(self, table: Array, rows: Array, mode: Literal["raise", "clip"]) -> Array:
        """NumPy's ``take`` on shared memory where the gather is big, on the host, and NumPy
        can view the tensors (no autograd, no bfloat16, no conjugate or negative bit);
        else ``index_select`` (of clamped rows for ``mode="clip"``)."""
        if (
            rows.shape[0] * math.prod(table.shape[1:]) > INDEX_SELECT_MAX_ELEMENTS
            and not table.requires_grad
            and self.values_on_host(table)
            and self.values_on_host(rows)
        ):
            try:
                return torch.from_numpy(np.take(table.numpy(), rows.numpy(), axis=0, mode=mode))
            except (TypeError, RuntimeError):  # a dtype or view NumPy cannot share
                pass
        if mode == "clip":
            rows = torch.clamp(rows, 0, table.shape[0] - 1)
        return table.index_select(0, rows)

    def _set(self, table: Array, rows: Array, values: Array) -> Array:
        return table.index_copy_(0, rows, values)

    def _combine(self, table: Array, rows: Array, values: Array, how: Named) -> Array | None:
        if table.dtype == torch.bool:
            return None
        if how is Named.ADD:
            return table.index_add_(0, rows, values)
        index = rows[:, None].expand_as(values)
        return table.scatter_reduce_(0, index, values, reduce=_REDUCE[how], include_self=True)

    def repeat(self, count: Array, body: Callable[[Array, int], Array], state: Array) -> Array:
        if count.device.type == "meta":  # no values, so no count: one pass gives the shape
            return body(state, 0)
        return super().repeat(count, body, state)

    def assign_window(
        self, x: Array, key: tuple[slice, ...], values: Array, *, in_place: bool
    ) -> Array:
        target = x if in_place else x.clone()
        target[key] = values
        return target
