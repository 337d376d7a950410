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

from .._typing import Array
from .._validate.combiners import Named
from . import _kept_memory
from ._base import ValuesUnknown, repeats_elements
from ._host import (
    INCREASE_MIN_ROWS,
    LIST_ENTRIES,
    HostKernels,
    all_in_range,
    combine_in_order,
    count_distinct,
    element_numbers,
    holds_zero,
    list_in_range,
    pairs_pass,
    rows_increase,
    take_large_rows,
    zero_rows,
)
from ._signed_zeros import MIN_MAX

torch_is_compiling = torch.compiler.is_compiling
# Tensors of at least this many bytes are copied by NumPy: malloc maps memory that large
# anew for each array, and NumPy asks the kernel to back it with huge pages where torch's
# allocator does not, so where transparent huge pages are on request ("madvise", a common
# default) a 64 MB copy takes 11 ms against torch's 33; below, both reuse memory malloc
# holds and cost the same (benchmarks/README.md, "Large torch copies through NumPy").
# NumPy's copy goes into memory kept for later results (_kept_memory), already mapped.
NUMPY_COPY_MIN_BYTES = 2**25

_REDUCE = {Named.ADD: "sum", Named.MUL: "prod", Named.MIN: "amin", Named.MAX: "amax"}
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)
_NUMPY_INTS = {torch.int64: np.int64, torch.int32: np.int32}

# torch's unsigned types wider than uint8 have few kernels (none for 1-D index_select,
# index_copy_, index_add_, scatter_reduce_, comparisons, neg or pow on the CPU): rows of
# them are taken, written and combined as the same bits seen as the signed type of their
# width (Tensor.view(dtype): no copy)
_SIGNED_OF_UNSIGNED = {
    getattr(torch, f"uint{bits}"): getattr(torch, f"int{bits}")
    for bits in (16, 32, 64)
    if hasattr(torch, f"uint{bits}")
}

# torch's float8 types have no arithmetic and few kernels of any kind (no index_copy_,
# scatter_ or comparisons on the CPU): rows of them are moved as the bits of int8
_FLOAT8 = frozenset(
    getattr(torch, name)
    for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                 "float8_e8m0fnu")
    if hasattr(torch, name)
)  # fmt: skip
# what rows are moved as: the same bits in a type torch has the kernels for
_BITS_OF = {**_SIGNED_OF_UNSIGNED, **dict.fromkeys(_FLOAT8, torch.int8)}
# what NumPy sees elements as where it has no type of theirs: the same bits
_NUMPY_BITS_OF = {torch.bfloat16: torch.int16, **dict.fromkeys(_FLOAT8, torch.int8)}
_COPYING_WRITES = {None: torch.index_copy, Named.ADD: torch.index_add}
# combine_elements' writes (add also by index_add_; multiply only by the kernels' pass)
_ELEMENT_WRITES: frozenset[Named | None] = frozenset(
    {None, Named.ADD, Named.MUL, Named.MIN, Named.MAX}
)
# An add of distinct rows of a real floating type at least this wide: index_put_ with
# accumulate=True, which adds each row as index_add_ does, where index_add_ runs a parallel
# region on more than one thread (16-20 us for 8 rows of 16 float32 on two threads,
# index_put_ 2.2; on one thread 0.48-0.72 of index_add_ up to 1,024 elements; narrower rows
# 0.87-1.18: benchmarks/README.md, "Issue 35: torch's add of distinct rows by index_put_")
PUT_ADD_MIN_WIDTH = 16
_TORCH_FUNCTIONS = {Named.MUL: torch.mul, Named.MIN: torch.minimum, Named.MAX: torch.maximum}
# Multiply, min and max of rows proven distinct, as index_select, the function and
# index_copy_, cost 0.84-0.94 of scatter_reduce_ of the rows expanded up to 60 rows, and
# 0.98-1.07 from 120 rows on (one thread, float32; benchmarks/README.md, "Issue 35:
# distinct rows written in one native step"): up to this many rows they take that way
DISTINCT_COMBINE_MAX_ROWS = 64

# Row gathers on the host (measured in benchmarks/torch_row_gather.py, tables in
# benchmarks/HISTORY.md, issue 13 section 3):
# * up to torch's parallel grain index_select on one thread costs less than the trip
#   through NumPy: index_select, of clamped rows for mode="clip";
# * above it on one torch thread, NumPy's take on the shared memory, which clips as it reads;
# * above it on more threads index_select, which splits the rows among them (NumPy cannot);
# * torch maps each result of 32 MiB or more on its own and faults it in 4 KiB pages: such
#   results go into memory NumPy allocated, which asks for huge pages.
PARALLEL_GRAIN_ELEMENTS = 2**15
NUMPY_ALLOCATED_MIN_BYTES = 2**25
_BYTES = np.dtype(np.uint8)


class TorchBackend(HostKernels):
    name = "torch"
    short_keys = True
    gathers_elements = True
    scatters_elements = True
    writes_check_first = False

    def __init__(self, xp: ModuleType = torch_namespace) -> None:
        super().__init__(xp)

    def device(self, x: Array) -> Any:
        return x.device

    def check_pair(self, op: str, x: Array, y: Array) -> None:
        if y.device != x.device:  # (the attributes: two calls of device() cost 0.1 us)
            self.check_arrays(op, {"x": x, "y": y})

    def why_not_writable(self, x: Array) -> str | None:
        """The cases where torch itself refuses an in-place write, in its own terms."""
        if x.requires_grad and torch.is_grad_enabled() and _leaf_or_view_of_one(x):
            return (
                "it is a leaf tensor that requires grad (or a view of one), which torch "
                "writes in place only under torch.no_grad()"
            )
        if not x.is_contiguous() and repeats_elements(x.shape, x.stride()):
            return (
                "it is an expanded tensor (an axis of length > 1 with stride 0: its elements "
                "share memory), which torch does not write in place"
            )
        if torch_is_compiling():  # Dynamo cannot ask is_inference()
            return None
        if x.is_inference() and not torch.is_inference_mode_enabled():
            return (
                "it is an inference tensor, which torch writes in place only inside "
                "torch.inference_mode() (call there, or clone it once for a normal tensor)"
            )
        return None

    def shares_memory(self, a: Array, b: Array) -> bool:
        if a.is_meta:
            return a is b
        if torch_is_compiling():  # Dynamo cannot read storage pointers; a reshape of a
            return a.is_contiguous() and b.is_contiguous()  # contiguous tensor is a view
        return bool(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())

    def host_arrays(self, *arrays: Array) -> list[np.ndarray] | None:
        """NumPy views of the tensors' memory where autograd, tracing and inference mode
        allow the kernels to use them: CPU tensors whose values are on the host (eager,
        plain ``torch.Tensor``), none requiring grad (a kernel's result would carry no
        gradient); ``None`` otherwise, or where NumPy has no view (bfloat16, a tensor
        with its conjugate bit set)."""
        if not self.host_reads or torch_is_compiling():  # (asked once for all of them)
            return None
        views = []
        try:  # (one loop: a generator and a comprehension cost 0.5 us of 4.7 for four)
            for t in arrays:
                if t.requires_grad or not _eager_on_cpu(t):
                    return None
                views.append(t.numpy())
        except (TypeError, RuntimeError):
            return None
        return views

    def from_host(self, x: np.ndarray) -> Array:
        return torch.from_numpy(x)

    def written_on_host(self, x: Array) -> None:
        """Count the write in the tensor's version, as torch's own in-place ops do, so
        that autograd refuses a backward that needs the values from before it."""
        torch.autograd.graph.increment_version(x)

    def values_on_host(self, x: Array) -> bool:
        # (in this order: Dynamo cannot trace _eager_on_cpu's question)
        return self.host_reads and not torch_is_compiling() and _eager_on_cpu(x)

    def records_gradient(self, *arrays: Array) -> bool:
        for x in arrays:  # (a loop: a generator costs more than the check, in small calls)
            if x.requires_grad:
                return torch.is_grad_enabled()
        return False

    def keeps_graph(self, result: Array, *sources: Array) -> Array:
        """``result`` followed by no element of each source that requires grad: a
        concatenation, which autograd records (one copy of ``result``)."""
        recorded = [x for x in sources if x.requires_grad]
        if not recorded or not torch.is_grad_enabled():
            return result
        none_of = [torch.reshape(x, (-1,))[:0].to(result.dtype) for x in recorded]
        return torch.reshape(torch.cat([torch.reshape(result, (-1,)), *none_of]), result.shape)

    def to_numpy(self, x: Array) -> Any:
        return x.detach().cpu().numpy()

    def host_ints(self, x: Array) -> tuple[int, ...]:
        if torch_is_compiling() or x.device.type == "meta" or type(x) not in _PLAIN_TYPES:
            raise ValuesUnknown("traced or meta torch")
        return tuple(int(v) for v in x.tolist())

    def check_on_device(self, ok: Array, message: str) -> None:
        if ok.device.type != "meta":
            torch._assert_async(ok, message)  # a device-side assert: no sync

    def astype(self, x: Array, dtype: Any) -> Array:
        if x.dtype == torch.uint64 and dtype == torch.int64:  # torch refuses to wrap these
            return x.view(torch.int64)
        return x.to(dtype)

    def index_dtype(self) -> Any:
        return torch.int64

    def arange(self, n: int, dtype: Any, like: Array) -> Array:
        return torch.arange(n, dtype=dtype, device=like.device)

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any, like: Array) -> Array:
        return torch.full(shape, value, dtype=dtype, device=like.device)

    def ints(self, values: list[int], dtype: Any, like: Array) -> Array:
        """On the CPU, NumPy's array of the list, shared (1 us for 8 ints, against 3 for
        torch's own from a list)."""
        numpy_dtype = _NUMPY_INTS.get(dtype)
        if numpy_dtype is None or not like.is_cpu or torch_is_compiling():
            return torch.asarray(values, dtype=dtype, device=like.device)
        return torch.from_numpy(np.array(values, dtype=numpy_dtype))

    def computes_in(self, dtype: Any) -> bool:
        """False for torch's float8 types, which have no arithmetic."""
        return dtype not in _FLOAT8

    def clip(self, x: Array, low: int | None, high: int | None) -> Array:
        return torch.clamp(x, low, high)

    def where(self, condition: Array, a: Any, b: Any) -> Array:
        like = a if isinstance(a, torch.Tensor) else b
        signed = _BITS_OF.get(like.dtype) if isinstance(like, torch.Tensor) else None
        if signed is None:
            return torch.where(condition, a, b)
        # eager torch has where for these types, but torch.compile's lowering of it fails
        # ("Promotion for uint16, uint32, uint64 types is not supported")
        chosen = torch.where(condition, _as_signed(a, signed), _as_signed(b, signed))
        return chosen.view(like.dtype)

    def copy(self, x: Array) -> Array:
        """``x.clone()``; a large tensor that :meth:`host_arrays` lets NumPy read, by
        NumPy's copy (see :data:`NUMPY_COPY_MIN_BYTES`)."""
        if _copied_by_numpy(x):
            views = self.host_arrays(x)
            if views is not None:
                return torch.from_numpy(_kept_memory.copy(views[0]))
        return x.clone()

    def all_in_range(self, x: Array, high: int) -> bool:
        # on the host: a small tensor as a list, else NumPy reads the shared memory in one
        # reduction (tensor reductions and comparisons cost several times more)
        if x.numel() <= LIST_ENTRIES:
            return list_in_range((x if x.dim() == 1 else x.ravel()).tolist(), high)
        return all_in_range(x.numpy(), high)

    def holds_zero(self, x: Array) -> bool:
        # NumPy's view of the same memory where it has one (not bfloat16, not a tensor
        # that requires grad): torch's comparison and any cost several times more
        try:
            return holds_zero(x.numpy())
        except (TypeError, RuntimeError):
            return bool(torch.any(x == 0))

    def zero_rows(self, x: Array) -> Array | None:
        try:  # as holds_zero
            found = zero_rows(x.numpy())
        except (TypeError, RuntimeError):
            return super().zero_rows(x)
        return None if found is None else torch.from_numpy(found)

    def reshape(self, x: Array, shape: tuple[int, ...]) -> Array:
        # torch.reshape parses a tuple in 0.8 us, the method in 1.4; ravel, reshape's
        # flat form, takes 0.6
        if shape == (-1,):
            return x if x.dim() == 1 else x.ravel()
        return x if x.shape == shape else torch.reshape(x, shape)

    def flipped(self, x: Array, axes: tuple[int, ...]) -> Array:
        """``torch.flip``; for a strided view above the parallel grain on one thread, on
        the host without autograd and one NumPy can view (no bfloat16, no conjugate or
        negative bit), NumPy's copy of its flipped view: 0.5-0.8x the time of
        ``torch.flip`` there, which is faster on a contiguous tensor (33 against 57 us
        for [8192, 20] float32; benchmarks/README.md, "Strided reads on torch")."""
        if (
            x.numel() > PARALLEL_GRAIN_ELEMENTS
            and not x.is_contiguous()
            and not x.requires_grad
            and torch.get_num_threads() == 1
            and self.values_on_host(x)
        ):
            try:
                return torch.from_numpy(np.flip(x.numpy(), axes).copy())
            except (TypeError, RuntimeError):  # a dtype or view NumPy cannot share
                pass
        return torch.flip(x, axes)

    def take_rows(self, table: Array, rows: Array) -> Array:
        """``index_select``, or NumPy's ``take`` (see :data:`PARALLEL_GRAIN_ELEMENTS`)."""
        return self._take(table, rows, "raise")

    def element_combines(self, count: int) -> frozenset[Named | None]:
        """Every named combiner where :meth:`takes_elements` (see
        :meth:`combine_elements`: multiply only by the kernels' pass; the replace costs
        0.22-0.73 of the element plans' from 1,024 elements to 4,096:
        benchmarks/README.md, "Issue 35: the idiom's replace in one pass")."""
        return _ELEMENT_WRITES if self.takes_elements(count) else frozenset()

    def take_elements(
        self, x: Array, index: tuple[Array, ...], values_first: bool = False
    ) -> Array | None:
        """torch's own ``x[index]`` on the CPU (4.2 us for 192 elements), which checks
        every entry before it reads; its IndexError for one outside costs 17-20 us, so
        where an earlier read of the signature raised (``values_first``), ``torch.take``
        of the flat element numbers found in range on the host (8.1 us). Never on a GPU,
        whose check is a device-side assert."""
        if values_first:
            numbers = _element_numbers(self, x, index)
            if numbers is None:
                return None
            signed = _BITS_OF.get(x.dtype)  # (no take for them: their bits)
            if signed is not None:
                return torch.take(x.view(signed), torch.from_numpy(numbers)).view(x.dtype)
            return torch.take(x, torch.from_numpy(numbers))
        if not self.host_reads or torch_is_compiling():  # (asked once for all of them)
            return None
        for a in index:  # (values_on_host of each: a loop, not a generator's frames)
            if not _eager_on_cpu(a):
                return None
        try:
            return x[index]
        except IndexError:
            return None

    def combine_elements(
        self, x: Array, index: tuple[Array, ...], values: Array, how: Named | None, copy: bool
    ) -> Array | None:
        """On the flat view of a contiguous ``x`` (or copy), in order:
        :meth:`_in_order` where it takes them (a replace wherever NumPy views the
        tensors; min and max of integers and real floats; add and multiply where the
        kernels' pass does), else an add by
        ``index_add_`` at the element numbers found in range on the host, one element per
        index entry, in order (torch's ``index_put_`` with ``accumulate`` adds repeats out
        of order on more threads; no add for the types of :data:`_BITS_OF`)."""
        if torch_is_compiling() or not (copy or x.is_contiguous()):
            return None  # (Dynamo traces no question of the host's)
        written = self._in_order(x, index, values, how, copy)
        if written is not None or how is not _ADD or x.dtype in _BITS_OF:
            return written
        numbers = _element_numbers(self, x, index)
        if numbers is None:
            return None
        out = x.clone(memory_format=torch.contiguous_format) if copy else x
        out.view(-1).index_add_(0, torch.from_numpy(numbers.reshape(-1)), values.reshape(-1))
        return out

    def _in_order(
        self, x: Array, index: tuple[Array, ...], values: Array, how: Named | None, copy: bool
    ) -> Array | None:
        """:func:`combine_in_order` on NumPy's views of the tensors (a replace's on their
        bits for the types NumPy lacks, which no other combiner takes), into ``x`` or
        NumPy's copy (the idiom's replace 9 us for 192 elements with the kernels, where
        torch's ``clone`` and ``put_`` of the last writes took 21)."""
        bits = _NUMPY_BITS_OF.get(x.dtype)
        if how is not None and (bits is not None or not _combined_in_order(x, index, how)):
            return None  # (no views made where no step of combine_in_order combines)
        seen = (x, values) if bits is None else (x.view(bits), values.view(bits))
        views = self.host_arrays(*seen, *index)
        if views is None:
            return None
        target, updates, *positions = views
        written = combine_in_order(target, tuple(positions), updates, how, copy)
        if written is None:
            return None
        if not copy:
            self.written_on_host(x)
            return x
        out = torch.from_numpy(written)
        return out if bits is None else out.view(x.dtype)

    def take_rows_checked(self, x: Array, rows: Array, values_first: bool = False) -> Array | None:
        # torch's own indexing of up to LIST_ENTRIES rows on the CPU: it counts negative
        # rows from the end and checks each before it reads; its IndexError for a row
        # outside costs 17-20 us, so where an earlier read of the signature raised
        # (values_first), the rows are read as one list and found in [-n, n) first. Never
        # on a GPU (its check is a device-side assert); more rows read faster by take_rows
        if values_first:
            values = self.few_on_host(rows)
            n = x.shape[0]
            if not values or min(values) < -n or max(values) >= n:
                return None
            return x[rows]
        if rows.numel() > LIST_ENTRIES or not self.values_on_host(rows):
            return None
        try:
            return x[rows]
        except IndexError:
            return None

    def take_rows_clipped(self, table: Array, rows: Array) -> Array:
        return self._take(table, rows, "clip")

    def clipped_row_take(self, elements: int) -> Callable[[Array, Array], Array]:
        # (above the parallel grain _take's NumPy routes are faster)
        if elements > PARALLEL_GRAIN_ELEMENTS:
            return self.take_rows_clipped
        return _ClippedRowTake(self)

    def _take(self, table: Array, rows: Array, mode: Literal["raise", "clip"]) -> Array:
        """Above the parallel grain on the host (no autograd): on one thread NumPy's
        ``take`` or the compiled row gather on shared memory, a large result into kept
        memory (``_host.take_large_rows``; where NumPy can view the tensors: no bfloat16,
        no conjugate or negative bit); on more, ``index_select`` into memory NumPy allocates
        for big results. Else ``index_select``, of clamped rows for ``mode="clip"``
        but where :meth:`few_in_range` shows them in range (1 us; a clamp costs 2.7)."""
        signed = _BITS_OF.get(table.dtype)
        if signed is not None:
            return self._take(table.view(signed), rows, mode).view(table.dtype)
        elements = rows.shape[0] * math.prod(table.shape[1:])
        out = None
        if (
            elements > PARALLEL_GRAIN_ELEMENTS
            and not table.requires_grad
            and self.values_on_host(table)
            and self.values_on_host(rows)
        ):
            if torch.get_num_threads() == 1:
                try:
                    taken = take_large_rows(table.numpy(), rows.numpy(), mode)
                    return torch.from_numpy(taken)
                except (TypeError, RuntimeError):  # a dtype or view NumPy cannot share
                    pass
            elif elements * table.element_size() >= NUMPY_ALLOCATED_MIN_BYTES:
                out = _numpy_allocated((rows.shape[0], *table.shape[1:]), table.dtype)
        if mode == "clip" and not self.few_in_range(rows, table.shape[0] - 1):
            rows = torch.clamp(rows, 0, table.shape[0] - 1)
        if out is None:
            return table.index_select(0, rows)
        return torch.index_select(table, 0, rows, out=out)

    def dynamic_update_slice(
        self, x: Array, update: Array, starts: list[Any], *, in_place: bool
    ) -> Array:
        signed = _BITS_OF.get(x.dtype)
        if signed is None:
            return super().dynamic_update_slice(x, update, starts, in_place=in_place)
        # index_put has no unsigned kernels: write the bits through signed views
        written = super().dynamic_update_slice(
            x.view(signed), update.view(signed), starts, in_place=in_place
        )
        return x if in_place else written.view(x.dtype)

    def take_along_axis_natively(self, x: Array, indices: Array, axis: int) -> Array:
        """``torch.gather`` (guard: it checks every index, on a GPU by a device-side
        assert)."""
        signed = _BITS_OF.get(x.dtype)
        if signed is not None:
            return torch.gather(x.view(signed), axis, indices).view(x.dtype)
        return torch.gather(x, axis, indices)

    def take_along_axis_inside(self, x: Array, indices: Array, axis: int) -> Array | None:
        """:meth:`take_along_axis` at once: on the CPU ``torch.gather`` raises before it
        reads an entry outside (negative ones included), and so does the kernel, which
        spares the reduction over the indices."""
        try:
            return self.take_along_axis(x, indices, axis)
        except (RuntimeError, IndexError):  # an entry outside: the caller clamps
            return None

    def rows_increase(self, rows: Array) -> bool:
        # NumPy's view of the same memory: torch's comparisons cost several times more
        # (small arrays: not looked at, as there)
        return (
            rows.shape[0] >= INCREASE_MIN_ROWS
            and self.values_on_host(rows)
            and rows_increase(rows.numpy())
        )

    def count_distinct_rows(self, rows: Array, n: int) -> int:
        """On one thread, or up to 2**20 rows, NumPy's bitmap on the rows' shared memory;
        else ``index_fill_`` of a bool tensor and ``count_nonzero``, which run on every
        thread: they pay for their three calls from about 2**20 rows on two threads
        (benchmarks/HISTORY.md, "Thresholds of the host paths").
        """
        if rows.shape[0] <= LIST_ENTRIES and self.values_on_host(rows):
            return len(set(rows.tolist()))
        if self.values_on_host(rows) and (n <= 2**20 or torch.get_num_threads() == 1):
            return count_distinct(rows.numpy(), n)
        bitmap = torch.zeros(n, dtype=torch.bool, device=rows.device).index_fill_(0, rows, True)
        return int(torch.count_nonzero(bitmap))

    # The writes below go into the table they get, except where autograd records them:
    # then into a new tensor (index_copy, not index_copy_), so that no tensor autograd
    # keeps for the backward pass changes afterwards (scatter max keeps its result, a
    # callable's pass the rows it read; torch.compile's graphs may keep their inputs)

    def _set(self, table: Array, rows: Array, values: Array) -> Array:
        if table.dtype not in _BITS_OF and self.records_gradient(table, values):
            return table.index_copy(0, rows, values)
        return _copied_in(table, rows, values)

    def _writes_distinct_natively(self, dtype: Any, how: Named | None, count: int) -> bool:
        """Replace (:meth:`_set`) and add (``index_add_``); multiply, min and max of up
        to :data:`DISTINCT_COMBINE_MAX_ROWS` rows; neither for torch's unsigned types
        beyond uint8, whose combines go through signed views."""
        if how is None:
            return True
        if dtype in _SIGNED_OF_UNSIGNED:
            return False
        return how is Named.ADD or count <= DISTINCT_COMBINE_MAX_ROWS

    def write_distinct_rows(
        self, table: Array, rows: Array, values: Array, how: Named | None
    ) -> Array:
        """``index_copy_``; ``index_add_``; the other combiners as one ``index_select``,
        the elementwise function into the rows taken and one ``index_copy_`` (1 us less
        than ``scatter_reduce_`` of the rows expanded, for 8 rows of 16)."""
        if how is None:  # (autograd records nothing here: no question)
            return _copied_in(table, rows, values)
        if how is Named.ADD:
            if _adds_by_put(table):
                return table.index_put_((rows,), values, accumulate=True)
            return table.index_add_(0, rows, values)
        taken = table.index_select(0, rows)
        _TORCH_FUNCTIONS[how](taken, values, out=taken)
        return table.index_copy_(0, rows, taken)

    def copies_distinct_rows(self, dtype: Any, how: Named | None, shape: tuple[int, ...]) -> bool:
        """Replace and add (``index_copy``, ``index_add``: 0.7-0.9 us less than a clone
        and the in-place write); multiply, min and max (the rows taken from the table,
        the function into them and ``index_copy``: 0.6 us less), for the types torch has
        those kernels for, below the size :meth:`copy` copies through NumPy (no size
        asked while ``torch.compile`` traces: the writer is then made for that trace
        alone)."""
        if (how not in _COPYING_WRITES and how not in _TORCH_FUNCTIONS) or dtype in _BITS_OF:
            return False
        return torch_is_compiling() or math.prod(shape) * dtype.itemsize < NUMPY_COPY_MIN_BYTES

    def distinct_rows_copied(
        self, table: Array, rows: Array, values: Array, how: Named | None
    ) -> Array:
        if how is _ADD and _adds_by_put(table):
            return table.index_put((rows,), values, accumulate=True)
        if how is None or how is _ADD:
            return _COPYING_WRITES[how](table, 0, rows, values)
        taken = table.index_select(0, rows)
        _TORCH_FUNCTIONS[how](taken, values, out=taken)
        return table.index_copy(0, rows, taken)

    def _combine(self, table: Array, rows: Array, values: Array, how: Named) -> Array | None:
        if table.dtype == torch.bool:
            return None
        if how is Named.ADD and table.dtype not in _SIGNED_OF_UNSIGNED:
            if self.records_gradient(table, values):
                return table.index_add(0, rows, values)
            return table.index_add_(0, rows, values)
        return self.combine_along_axis(table, 0, rows[:, None].expand_as(values), values, how)

    def combine_along_axis(
        self, x: Array, axis: int, indices: Array, values: Array, how: Named | None
    ) -> Array:
        """``scatter_reduce_`` (``include_self=True``), or ``scatter_`` for ``how=None``
        (guard: both check every index, on a GPU by a device-side assert); where autograd
        records, ``scatter_reduce`` and ``scatter`` into a new tensor."""
        signed = _SIGNED_OF_UNSIGNED.get(x.dtype)
        if signed is not None:
            self._combine_as_signed(
                x.view(signed),
                values.view(signed),
                how,
                lambda table, new: self.combine_along_axis(table, axis, indices, new, how),
            )
            return x
        if how is None and x.dtype in _FLOAT8:  # (float8 has no named combiner: see computes_in)
            self.combine_along_axis(x.view(torch.int8), axis, indices, values.view(torch.int8), how)
            return x
        recorded = self.records_gradient(x, values)
        if how is None:
            if recorded:
                return x.scatter(axis, indices, values)
            return x.scatter_(axis, indices, values)
        reduce = _REDUCE[how]
        if recorded:
            return x.scatter_reduce(axis, indices, values, reduce=reduce, include_self=True)
        return x.scatter_reduce_(axis, indices, values, reduce=reduce, include_self=True)

    def _combine_as_signed(
        self,
        table: Array,
        values: Array,
        how: Named | None,
        combine: Callable[[Array, Array], object],
    ) -> None:
        """``combine(table, values)`` into ``table``, the signed view of an unsigned
        table (``values`` likewise).

        Wrapping add and mul leave the same bits in two's complement as in unsigned
        arithmetic (both are exact modulo 2**bits), as does a plain write; min and max
        compare the views with their sign bit flipped, which orders them as the unsigned
        values (0 becomes the smallest signed value, 2**bits - 1 the largest). The flips
        cost two passes over the table.
        """
        if how is not Named.MIN and how is not Named.MAX:
            combine(table, values)
            return
        sign_bit = torch.iinfo(table.dtype).min
        table.bitwise_xor_(sign_bit)
        combine(table, values ^ sign_bit)
        table.bitwise_xor_(sign_bit)

    def negative(self, x: Array) -> Array:
        signed = _SIGNED_OF_UNSIGNED.get(x.dtype)
        if signed is None:
            return torch.negative(x)
        return torch.negative(x.view(signed)).view(x.dtype)  # -x modulo 2**bits: same bits

    def elementwise(self, name: str) -> Callable[[Array, Array], Array]:
        function = super().elementwise(name)
        if name != "pow":
            return function

        def power(base: Array, exponent: Array) -> Array:
            if base.dtype in _SIGNED_OF_UNSIGNED:
                return _unsigned_power(base, exponent)
            return function(base, exponent)

        return power

    def without_gradient_where(self, mask: Array, rows: Array) -> Array:
        if not rows.requires_grad:
            return rows
        mask = torch.reshape(mask, (-1,) + (1,) * (rows.ndim - 1))
        return self.where(mask, rows.detach(), rows)

    def repeat(
        self, count: Array, body: Callable[[Array, int | Array], Array], state: Array
    ) -> Array:
        """Under ``torch.compile``: ``torch.while_loop``, whose count stays a tensor (no
        graph break), the result written back into ``state``; but where autograd records
        the passes, on the host as eagerly (a graph break): the loop's backward gives
        wrong gradients for the tensors its body closes over (torch 2.13). On meta
        tensors: one pass, which gives the shape. Else on the host."""
        if count.device.type == "meta":  # no values, so no count
            return body(state, 0)
        if torch_is_compiling():
            looped = _device_loop(count, body, state)
            if not looped.requires_grad:
                return state.copy_(looped)
        return super().repeat(count, body, state)


def _device_loop(count: Array, body: Callable[[Array, int | Array], Array], state: Array) -> Array:
    """``state = body(state, p)`` for the 0-d tensor ``p`` in ``range(count)``, on the
    device; the loop's body may not write its inputs, so each pass writes a clone."""

    def more(p: Array, state: Array) -> Array:
        return p < count

    def one_pass(p: Array, state: Array) -> tuple[Array, Array]:
        return p + 1, body(state.clone(), p)

    start = torch.zeros((), dtype=count.dtype, device=count.device)
    return torch.while_loop(more, one_pass, (start, state))[1]


def _leaf_or_view_of_one(x: Array) -> bool:
    """Whether ``x`` is a leaf of autograd's graph or a view of one (``_base``: the
    tensor a view's memory belongs to; Dynamo traces it as None in the graph, so a view
    of a leaf is not recognised under ``torch.compile``)."""
    if x.is_leaf:
        return True
    return not torch_is_compiling() and x._base is not None and x._base.is_leaf


_functorch_wrapped = torch._C._functorch.is_functorch_wrapped_tensor  # (looked up once)


_ADD = Named.ADD  # (a member read through its Enum class costs 75 ns, a global 8: at.py)


def _combined_in_order(x: Array, index: tuple[Array, ...], how: Named) -> bool:
    """Whether :func:`combine_in_order` may combine into ``x`` by ``how``: min and max
    (``compare_at`` takes the orderable types at's methods allow), else by the kernels'
    pass."""
    return how in MIN_MAX or pairs_pass(x, index) is not None


def _eager_on_cpu(x: Array) -> bool:
    """Whether ``x`` is a plain tensor on the CPU, not one of functorch's wrappers
    (``vmap``, ``grad``): its values are on the host unless ``torch.compile`` traces,
    which callers ask first (Dynamo cannot trace functorch's question)."""
    return x.is_cpu and type(x) in _PLAIN_TYPES and not _functorch_wrapped(x)


def _copied_by_numpy(x: Array) -> bool:
    """Whether :meth:`TorchBackend.copy` may copy ``x`` through NumPy: of
    :data:`NUMPY_COPY_MIN_BYTES` or more, asked only where sizes are known (not while
    ``torch.compile`` traces: they may be symbolic)."""
    return not torch_is_compiling() and x.nbytes >= NUMPY_COPY_MIN_BYTES


def _copied_in(table: Array, rows: Array, values: Array) -> Array:
    """``table.index_copy_(0, rows, values)``; for the types of :data:`_BITS_OF`, of
    the same bits in a type torch has the kernel for."""
    signed = _BITS_OF.get(table.dtype)
    if signed is not None:
        table.view(signed).index_copy_(0, rows, values.view(signed))
        return table
    return table.index_copy_(0, rows, values)


class _ClippedRowTake:
    """:meth:`TorchBackend.take_rows_clipped` for one executor whose takes stay below
    :data:`PARALLEL_GRAIN_ELEMENTS`: rows on the CPU by ``index_select`` at once, which
    checks every row before it reads (up to 16 rows 1.8 us less than finding them in
    range as a list first; more, 2.7 us less than their clamp). Its ``IndexError`` for a
    row outside (negative ones too) costs 17-20 us: from the first, this executor's
    calls clip as :meth:`~TorchBackend.take_rows_clipped` does. Never on a GPU, whose
    check is a device-side assert."""

    __slots__ = ("backend", "clips")

    def __init__(self, backend: TorchBackend) -> None:
        self.backend, self.clips = backend, False

    def __call__(self, table: Array, rows: Array) -> Array:
        backend = self.backend
        if (
            not self.clips
            and table.dtype not in _BITS_OF  # (no index_select for them: their bits)
            and backend.values_on_host(rows)
        ):
            try:
                return table.index_select(0, rows)
            except IndexError:
                self.clips = True
        return backend.take_rows_clipped(table, rows)


def _element_numbers(backend: TorchBackend, x: Array, index: tuple[Array, ...]) -> Any:
    """The flat element numbers ``x[index]`` selects (:func:`element_numbers`), where the
    host reads the index arrays; else None."""
    views = backend.host_arrays(*index)
    return None if views is None else element_numbers(views, tuple(x.shape))


def _adds_by_put(table: Array) -> bool:
    """Whether an add of distinct rows into the 2-D ``table`` goes through ``index_put_``
    (see :data:`PUT_ADD_MIN_WIDTH`)."""
    return table.shape[1] >= PUT_ADD_MIN_WIDTH and table.dtype.is_floating_point


def _numpy_allocated(shape: tuple[int, ...], dtype: torch.dtype) -> Array:
    """An uninitialised host tensor whose memory NumPy allocated, kept for later results
    (``_kept_memory.empty``; any dtype: the bytes are NumPy's, their type torch's)."""
    nbytes = math.prod(shape) * dtype.itemsize
    return torch.from_numpy(_kept_memory.empty((nbytes,), _BYTES)).view(dtype).view(shape)


def _as_signed(value: Any, signed: torch.dtype) -> Any:
    """An unsigned tensor or Python int as the same bits of the signed type ``signed``."""
    if isinstance(value, torch.Tensor):
        return value.view(signed) if value.dtype in _SIGNED_OF_UNSIGNED else value
    bits = torch.iinfo(signed).bits
    return value - 2**bits if value >= 2 ** (bits - 1) else value


def _unsigned_power(base: Array, exponent: Array) -> Array:
    """``base ** exponent`` for torch's unsigned types wider than uint8, which have no
    ``pow``: computed in int64, exact modulo 2**bits once cast back.

    uint16 and uint32 are widened. uint64 is seen as int64, where exponents of 2**63 or
    more turn negative; such an ``e`` becomes ``e % 2**62 + 2**62``, which gives the same
    power modulo 2**64 (odd bases: their powers repeat with period dividing 2**62; even
    bases: both powers are 0).
    """
    if base.dtype != torch.uint64:
        return torch.pow(base.to(torch.int64), exponent.to(torch.int64))
    exponent = exponent.view(torch.int64)
    same_power = (exponent & (2**62 - 1)) | 2**62
    return torch.pow(base.view(torch.int64), torch.where(exponent < 0, same_power, exponent))
