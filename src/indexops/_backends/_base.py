"""The generic backend: every operation built from the Array API standard alone.

It never reads an array's values on the host (it has no way to know whether that is
free), so it is also what lazy and traced libraries get. The standard has no scatter, so
rows are written with a sort, ``searchsorted`` and ``where``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import array_api_compat as compat

from .._errors import value_error
from .._plan.cache import static_cache
from .._typing import Array
from .._validate.combiners import Named, named_function
from ._dtypes import as_array, in_byte_order
from ._signed_zeros import MIN_MAX, has_signed_zeros, with_ieee_zeros

_IDENTITY_PERMUTATIONS = frozenset(tuple(range(n)) for n in range(65))


def repeats_elements(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether an array of ``shape`` and ``strides`` is broadcast (expanded): an axis of
    length 2 or more with stride 0, so that several elements are one memory location.

    Examples
    --------
    >>> from indexops._backends._base import repeats_elements
    >>> repeats_elements((3, 4), (0, 1)), repeats_elements((1, 4), (0, 1))
    (True, False)
    """
    return any(stride == 0 and n > 1 for n, stride in zip(shape, strides))


class ValuesUnknown(Exception):
    """The values of an array cannot be read now (a tracer, a meta tensor, ...).

    ``str()`` of it describes the array, e.g. ``"traced jax"``.
    """


class Backend:
    """What indexops needs from one array library; this class is the generic one.

    One instance per array type, made by :func:`~indexops._backends.backend_for`.
    ``xp`` is the library's Array API namespace.
    """

    name = "generic"
    # set_rows and combine_rows write into the table they get (not where autograd records:
    # see records_gradient)
    writes_into_table = False
    chunked = False  # arrays of chunks, written chunk by chunk (indexops._execute.chunked)
    chunks_generic = False  # for chunked libraries: chunks get the generic backend
    # combine_rows' float min and max are IEEE-754 minimum and maximum for signed zeros
    # too (min(-0.0, +0.0) is -0.0); where not, _execute.rows fixes zero results with
    # signed_view
    min_max_ieee = True
    native_combine = False  # combine_rows is one native scatter (else pass by pass)
    # the library's writes in place check every index before they write the first (NumPy's
    # fancy assignment and ufunc.at); where not (torch's index_add_ and scatter_reduce_ on
    # the CPU check each as they reach it), starts promised in range are checked first
    writes_check_first = True
    # whether a basic key may leave out the slices of trailing dims (NumPy's and torch's
    # indexing, faster so: torch's x[3:11] = y 1.7 us, x[3:11, 0:16] = y 2.1); the Array
    # API asks for one entry per dim or an Ellipsis
    short_keys = False
    # take_along_axis is the library's own element gather (GatherElements, torch.gather):
    # element plans read through it instead of rows of one element
    gathers_elements = False
    scatters_elements = False  # combine_along_axis likewise, for element scatters
    # whether scatter_along_axis_in_order may take an element scatter (it says per call)
    scatters_elements_in_order = False
    # how many entries of an index array few_on_host reads as one list (0: none)
    few_entries = 0

    def __init__(self, xp: ModuleType) -> None:
        self.xp = xp
        self.host_reads = True  # False in the "device" variant
        self._variants: dict[str, Backend] = {}

    def __repr__(self) -> str:
        return f"<indexops {self.name} backend>"

    def variant(self, name: str) -> Backend:
        """This library's backend made to take other paths, for the test hooks of
        :mod:`indexops._testing`: ``"generic"`` (the standard alone) or ``"device"`` (as if
        no value could be read on the host). Made once per backend and name."""
        made = self._variants.get(name)
        if made is None:
            made = self._variants[name] = self._make_variant(name)
        return made

    def _make_variant(self, name: str) -> Backend:
        if name == "generic":
            return Backend(self.xp)
        variant = copy.copy(self)
        variant.host_reads, variant._variants = False, {}
        return variant

    # -- what an array allows -------------------------------------------------------------

    def check_arrays(self, op: str, arrays: dict[str, Array]) -> None:
        """Raise a named error for arrays this backend cannot take together (``arrays``
        maps argument names to arrays of this library): here, arrays on different devices.

        Runs when a call is validated, before any work.
        """
        if len(arrays) < 2:
            return
        devices = {name: self.device(x) for name, x in arrays.items()}
        known = {device for device in devices.values() if device is not None}  # traced: None
        if len(known) > 1:
            found = ", ".join(f"{name} on {device}" for name, device in devices.items())
            raise value_error(
                op,
                ", ".join(devices),
                found,
                "arrays on one device; move them with the library's own call first "
                "(e.g. torch's .to(device))",
            )

    def check_pair(self, op: str, x: Array, y: Array) -> None:
        """:meth:`check_arrays` of ``x`` and ``y`` for a call made on every use (``at``'s
        ``y``): here only where their devices differ (one comparison otherwise)."""
        if self.device(y) != self.device(x):
            self.check_arrays(op, {"x": x, "y": y})

    def device(self, x: Array) -> Any:
        return compat.device(x)

    def why_not_writable(self, x: Array) -> str | None:
        """Why ``x`` cannot be written in place now, or ``None`` if it can.

        The reason completes "cannot be written in place: ..." in the ``copy=False``
        error. It runs on every call of a writing op, so it must stay cheap.
        """
        return None if hasattr(type(x), "__setitem__") else "its type has no __setitem__"

    def shares_memory(self, a: Array, b: Array) -> bool:
        """Whether writes into ``a`` are seen by ``b`` (False when unknown)."""
        return False

    def values_on_host(self, x: Array) -> bool:
        """Whether the values of ``x`` can be read without a device sync or a trace.

        Only then may an op branch on them (for speed, or to raise a value error). Never
        where :attr:`host_reads` is False (the "device" variant); here: never.
        """
        return False

    def host_ints(self, x: Array) -> tuple[int, ...]:
        """The entries of the 1-D integer array ``x`` as Python ints.

        Raises :class:`ValuesUnknown` where they cannot be read.
        """
        return tuple(int(x[i]) for i in range(x.shape[0]))

    def writes_distinct_rows(self, dtype: Any, how: Named | None, count: int, width: int) -> bool:
        """Whether :meth:`write_distinct_rows` takes a write of ``count`` rows of
        ``width`` elements of ``dtype`` with ``how`` (replace where ``None``): a fact of
        the signature, decided once by the row writer. Here: never."""
        return False

    def write_distinct_rows(
        self, table: Array, rows: Array, values: Array, how: Named | None
    ) -> Array:
        """Write ``values[k]`` into row ``rows[k]`` of the 2-D ``table`` in place with
        ``how`` (replace where ``None``), in one native step: the rows are distinct and
        in range, neither they nor ``values`` share memory with ``table``, the write is one
        :meth:`writes_distinct_rows` takes and autograd records nothing. Returns
        ``table``."""
        raise NotImplementedError

    def copies_distinct_rows(self, dtype: Any, how: Named | None, shape: tuple[int, ...]) -> bool:
        """Whether :meth:`distinct_rows_copied` takes writes with ``how`` into copies of
        2-D tables of ``dtype`` and ``shape``: a fact of the signature, decided once by
        the row writer. Here: never."""
        return False

    def distinct_rows_copied(
        self, table: Array, rows: Array, values: Array, how: Named | None
    ) -> Array:
        """A copy of the 2-D ``table`` with :meth:`write_distinct_rows`' write, made and
        written in one native call (``table`` untouched), for the writes
        :meth:`copies_distinct_rows` takes."""
        raise NotImplementedError

    def records_gradient(self, *arrays: Array) -> bool:
        """Whether the library's autograd records an op on ``arrays`` now (an array that
        requires grad, in grad mode). Tensors it records may be kept for the backward
        pass, which fails (torch) or goes wrong if they change afterwards: where it
        records, writes go into new arrays. Here: False (JAX differentiates functions
        of immutable arrays)."""
        return False

    def keeps_graph(self, result: Array, *sources: Array) -> Array:
        """``result``, which holds no value of ``sources`` (nothing was written: no
        updates, a zero-size table, every update dropped), recorded by the library's
        autograd as made from them all the same, as its own ops are (torch's
        ``index_add`` of no rows): their gradients are zeros, not missing. Here:
        ``result``."""
        return result

    def to_numpy(self, x: Array) -> Any:
        """A NumPy copy (or view) of ``x`` on the host."""
        import numpy as np

        try:
            return np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError, AttributeError):
            return np.asarray(x)

    def raise_lazily(
        self,
        result: Array,
        bad: Array,
        culprit: Array,
        error: Callable[[int, int], Exception],
    ) -> Array:
        """For lazy libraries: ``result``, made to raise ``error(position,
        culprit[position])`` for the first ``position`` where the 1-D ``bad`` is True when
        it is computed. Others return ``result`` (see :meth:`check_on_device`)."""
        return result

    def check_on_device(self, ok: Array, message: str) -> None:
        """A value check where the values are not on the host: report ``message`` unless
        the 0-d bool ``ok`` is True, without waiting for it. Each library has its own way
        (a device-side assert, ``checkify``); the generic backend has none."""

    # -- dtypes and small arrays ----------------------------------------------------------

    def weakly_typed(self, x: Array) -> bool:
        """Whether ``x`` is weakly typed: JAX's array of a Python scalar (eagerly, or
        traced under ``jit``), whose dtype casts as the scalar would. Here: never."""
        return False

    def has_kind(self, dtype: Any, kind: str) -> bool:
        """``xp.isdtype(dtype, kind)``, remembered per dtype (isdtype costs microseconds).

        Dtypes that ``isdtype`` refuses or misses (ml_dtypes' bfloat16, float8, int4, ...
        in NumPy and Dask arrays) are classified by their NumPy kind or ml_dtypes'
        finfo/iinfo instead.
        """
        try:
            return _cached_kind(self.xp, dtype, kind)
        except TypeError:  # an unhashable dtype object
            return _kind(self.xp, dtype, kind)

    def computes_in(self, dtype: Any) -> bool:
        """Whether the library has arithmetic for ``dtype`` (named combiners need it).
        Here: True."""
        return True

    def iinfo(self, dtype: Any) -> Any:
        """``xp.iinfo``, or ml_dtypes' for its integer types (int4, ...)."""
        try:
            return self.xp.iinfo(dtype)
        except (TypeError, ValueError, AttributeError):  # NumPy's, array-api-compat's
            from . import _dtypes

            return _dtypes.info(dtype, integer=True)

    def finfo(self, dtype: Any) -> Any:
        """``xp.finfo``, or ml_dtypes' for its float types (bfloat16, float8, ...)."""
        try:
            return self.xp.finfo(dtype)
        except (TypeError, ValueError, AttributeError):  # NumPy's, array-api-compat's
            from . import _dtypes

            return _dtypes.info(dtype, integer=False)

    def holds(self, dtype: Any, value: float) -> bool:
        """Whether the float ``value`` (NaN, an infinity, -0.0, ...) survives a cast to
        ``dtype``: float8_e4m3fn has no infinity, float4_e2m1fn no NaN."""
        from . import _dtypes

        return _dtypes.holds(dtype, value)

    def astype(self, x: Array, dtype: Any) -> Array:
        """``xp.astype``; integers that do not fit ``dtype`` wrap (two's complement)."""
        return self.xp.astype(x, dtype)

    def index_dtype(self) -> Any:
        """The dtype of positions and start indices."""
        return self.xp.int64

    def arange(self, n: int, dtype: Any, like: Array) -> Array:
        return self.xp.arange(n, dtype=dtype, device=self.device(like))

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any, like: Array) -> Array:
        return self.xp.full(shape, value, dtype=dtype, device=self.device(like))

    def ints(self, values: list[int], dtype: Any, like: Array) -> Array:
        """The Python ints ``values`` as a 1-D array of the integer ``dtype`` on the device
        of ``like``."""
        return self.xp.asarray(values, dtype=dtype, device=self.device(like))

    def all_in_range(self, x: Array, high: int) -> bool:
        """Whether every entry of the integer array ``x`` lies in ``[0, high]``, read on
        the host (only for values on the host)."""
        xp = self.xp
        return bool((xp.min(x) >= 0) & (xp.max(x) <= high)) if math.prod(x.shape) else True

    def distinct_in_range(self, rows: Array, high: int) -> bool | None:
        """Where the host finds every entry of the integer array ``rows`` in ``[0,
        high]``: whether they are distinct (False where not shown: the writer then looks
        for repeats itself); else ``None`` (an entry outside, or values not on the host).
        Here: the range alone, by :meth:`all_in_range`."""
        if not self.values_on_host(rows):
            return None
        return False if self.all_in_range(rows, high) else None

    def few_on_host(self, x: Array) -> list[int] | None:
        """The entries of the integer array ``x``, flat, as one list of Python ints where
        they are few and on the host (a list read costs less than an array operation
        there); else ``None`` (nothing read). Here: ``None``."""
        return None

    def few_distinct_in_range(self, rows: Array, high: int) -> bool:
        """Whether a few entries of the 1-D integer array ``rows``, read on the host as
        one list, lie in ``[0, high]`` and are distinct (:meth:`few_rows_in_range`); False
        where not shown (nothing more is read: for callers whose rows are promised in
        range)."""
        found = self.few_rows_in_range(rows, high)
        return found is not None and found[1]

    def few_rows_in_range(self, index: Array, high: int) -> tuple[Array, bool] | None:
        """The integer array ``index`` flat, in the index dtype, and whether its entries
        are distinct, where they are few and on the host and, read as one list, lie in
        ``[0, high]``; else ``None`` (nothing more read). ``index`` is 1-D or holds few
        entries (its flat view is made before its size is looked at: a row writer's
        count of rows, which its signature fixes). Here: ``None``."""
        return None

    def few_rows_from_end(self, rows: Array, n: int) -> tuple[Array, bool] | None:
        """The array ``rows`` of the index dtype with each negative entry counted from
        the end (``+ n``), in ``rows``' shape, and whether its entries are then distinct,
        where they are few and on the host and, read as one list, lie in ``[-n, n)``; else
        ``None`` (nothing more read). Here: ``None``."""
        return None

    def few_in_range(self, rows: Array, high: int) -> bool:
        """Whether every entry of the integer array ``rows`` is shown to lie in ``[0,
        high]`` by a read that costs less than a clip of them (a few entries on the
        host): a clip would then change nothing. False where not shown (nothing read).
        Here: never."""
        return False

    def counts_up(self, x: Array, elements: int) -> bool:
        """Whether the values of the integer array ``x``, flat, are ``0, 1, 2, ...``,
        where the library reads them for a compiled kernel taking work of ``elements``
        elements; here never (False, nothing read): see ``HostKernels``."""
        return False

    def holds_zero(self, x: Array) -> bool:
        """Whether some entry of ``x`` equals zero, read on the host (only for values on
        the host)."""
        return bool(self.xp.any(x == 0))

    def zero_rows(self, x: Array) -> Array | None:
        """The rows of the 2-D ``x`` that hold a zero, as a mask per row or as positions
        (either selects them: ``values[zero_rows]``); ``None`` where no entry of ``x`` is
        zero. Read on the host (only for values on the host). Here: a mask."""
        return self.xp.any(x == 0, axis=1) if self.holds_zero(x) else None

    def clip(self, x: Array, low: int | None, high: int | None) -> Array:
        """``x`` clipped to Python-int bounds (either may be None); where ``high < low``
        (a dim of size 0) every entry becomes ``high``, as ``minimum(maximum(x, low),
        high)`` gives."""
        if low is not None and high is not None and high < low:
            low = high
        return self.xp.clip(x, min=low, max=high)

    def where(self, condition: Array, a: Any, b: Any) -> Array:
        """``xp.where``; ``a`` or ``b`` may be a Python scalar. The result keeps their
        byte order (NumPy's gives the native one)."""
        return in_byte_order(self.xp.where(condition, a, b), a, b)

    def negative(self, x: Array) -> Array:
        """``-x`` in the dtype of ``x``: modulo ``2**bits`` for unsigned integers and
        ml_dtypes' int4 (whose negation NumPy gives as int8), byte order kept."""
        negated = self.xp.negative(x)
        return negated if negated.dtype == x.dtype else self.astype(as_array(negated), x.dtype)

    def elementwise(self, name: str) -> Callable[[Array, Array], Array]:
        """The library's elementwise function ``name`` (``"divide"``, ``"pow"``), made to
        work on every dtype that the library's arrays hold."""
        return getattr(self.xp, name)

    def reshape(self, x: Array, shape: tuple[int, ...]) -> Array:
        """``xp.reshape``, skipped where ``x`` has the shape already (a call costs
        microseconds); libraries override it where their own method is cheaper."""
        return x if x.shape == shape else self.xp.reshape(x, shape)

    def flipped(self, x: Array, axes: tuple[int, ...]) -> Array:
        """A new array of ``x``'s elements in reverse order along ``axes``
        (``xp.flip``)."""
        return self.xp.flip(x, axis=axes)

    def permute_dims(self, x: Array, axes: tuple[int, ...]) -> Array:
        """``xp.permute_dims``, skipped for the identity (a call costs microseconds)."""
        if axes in _IDENTITY_PERMUTATIONS:
            return x
        return self.xp.permute_dims(x, axes)

    def copy(self, x: Array) -> Array:
        """A new array with the values of ``x`` (writable where the library allows)."""
        return self.xp.asarray(x, copy=True)

    # -- rows of a 2-D table --------------------------------------------------------------

    def take_rows(self, table: Array, rows: Array) -> Array:
        """``table[rows]`` for 1-D integer ``rows``, all in range (``table`` may be 1-D)."""
        return self.xp.take(table, rows, axis=0)

    def take_along_axis(self, x: Array, indices: Array, axis: int) -> Array:
        """``x`` read at ``indices`` along ``axis`` (``take_along_axis``): ``indices``
        has the index dtype and ``x``'s rank, its other dims are ``x``'s, and every entry
        is in range. Only for libraries whose :attr:`gathers_elements` is True."""
        raise NotImplementedError

    def take_along_axis_inside(self, x: Array, indices: Array, axis: int) -> Array | None:
        """:meth:`take_along_axis` where every entry of ``indices`` lies in ``[0,
        x.shape[axis])``, else ``None``; only for indices whose values are on the host.
        Here: one reduction first."""
        if not self.all_in_range(indices, x.shape[axis] - 1):
            return None
        return self.take_along_axis(x, indices, axis)

    def take_along_axis_clipped(self, x: Array, indices: Array, axis: int) -> Array:
        """:meth:`take_along_axis` with each entry of ``indices`` clipped to ``[0,
        x.shape[axis] - 1]`` first (a dim that is not empty). Here: no clip where the
        host finds every entry inside."""
        if self.values_on_host(indices):
            found = self.take_along_axis_inside(x, indices, axis)
            if found is not None:
                return found
        return self.take_along_axis(x, self.clip(indices, 0, x.shape[axis] - 1), axis)

    def take_along_axis_filled(self, x: Array, indices: Array, axis: int, fill: Any) -> Array:
        """:meth:`take_along_axis` with ``fill`` (a Python scalar or a 0-d array of
        ``x``'s dtype) where an entry of ``indices`` is outside ``[0, x.shape[axis])``.
        Here: no clip and no mask where the host finds every entry inside."""
        if self.values_on_host(indices):
            found = self.take_along_axis_inside(x, indices, axis)
            if found is not None:
                return found
        n = x.shape[axis]
        taken = self.take_along_axis(x, self.clip(indices, 0, n - 1), axis)
        if not hasattr(fill, "shape"):
            fill = self.full((), fill, x.dtype, x)
        return self.where((indices >= 0) & (indices < n), taken, fill)

    def take_along_axis_from_end(
        self, x: Array, indices: Array, axis: int, outside: str, fill: Any = None
    ) -> Array | None:
        """NumPy's element read in one pass: a negative entry of ``indices`` counts from
        the end of ``axis`` first, then an entry still outside ``[0, x.shape[axis])`` is
        clipped (``outside="clip"``, :meth:`take_along_axis_clipped`), read as ``fill``
        (``"fill"``, :meth:`take_along_axis_filled`) or raises :class:`IndexError`
        (``"stop"``, :meth:`take_along_axis`: a broken promise). ``None`` where the
        backend has no such pass (the caller counts the negative entries from the end
        with array operations first). Here: ``None``."""
        return None

    def may_compile(self, x: Array, elements: int) -> bool:
        """Whether a compiled kernel may take work of ``elements`` elements on ``x``: a
        cheap look before the work that asking for one needs. Here: False."""
        return False

    def scatter_along_axis_in_order(
        self,
        x: Array,
        axis: int,
        indices: Array,
        values: Array,
        how: Named | None,
        *,
        wrap: bool,
        outside: str,
        copy: bool,
    ) -> tuple[Array, int] | None:
        """The element scatter in one pass, for arrays whose values are on the host
        (arguments as :meth:`combine_along_axis`): ``values`` combined into ``x``, or
        into a copy where ``copy``, in their row-major order (replace where ``how`` is
        ``None``: the last write wins); a negative index counting from the end first
        where ``wrap``; then an index outside is clipped (``outside="clip"``), dropped
        (``"drop"``) or stops the loop (``"stop"``: the result is unspecified, the
        caller raises). Returns the array written and the flat position in ``indices``
        of the first index that stopped the loop, or -1; ``None`` where the backend has
        no such pass for these arrays (nothing was written). Here: ``None``."""
        return None

    def scatter_tuples_from_end(
        self, data: Array, indices: Array, updates: Array, how: Named | None
    ) -> tuple[Array, int] | None:
        """ONNX's ScatterND in one pass, for ``indices`` whose values are on the host: a
        new array, ``data`` with ``updates`` applied in their order at the index tuples
        of ``indices``' last dim (a negative component counting from the end; replace
        where ``how`` is ``None``, the last write winning); with the flat position in
        ``indices`` of the first component outside ``[-n, n)``, or -1 (the result is
        then unspecified: the caller raises). ``data`` is never written. ``None`` where
        the backend has no such pass (the caller wraps and checks with array
        operations). Here: ``None``."""
        return None

    def take_along_axis_wrapped(
        self, x: Array, indices: Array, axis: int
    ) -> tuple[Array, int] | None:
        """ONNX's GatherElements in one pass, for ``indices`` of any integer dtype whose
        values are on the host: ``x`` read at ``indices`` along ``axis`` (``indices`` has
        ``x``'s other dims), a negative index counting from the end; with the flat
        position of the first index outside ``[-s, s)`` (``s = x.shape[axis]``), or -1.
        Where one is outside the result is unspecified (the caller raises). ``None``
        where the backend has no such pass (the caller wraps and checks with array
        operations). Here: ``None``."""
        return None

    def take_rows_clipped(self, table: Array, rows: Array) -> Array:
        """``table[rows]`` with each row number clipped to ``[0, len(table) - 1]`` first
        (``table`` is not empty)."""
        return self.take_rows(table, self.clip(rows, 0, table.shape[0] - 1))

    def clipped_row_take(self, elements: int) -> Callable[[Array, Array], Array]:
        """:meth:`take_rows_clipped` for one executor, whose takes read ``elements``
        elements; it may keep what its calls found (torch's: whether a row was outside).
        Here: the method itself."""
        return self.take_rows_clipped

    def row_take(self, elements: int) -> Callable[[Array, Array], Array]:
        """:meth:`take_rows` for one executor, whose takes read ``elements`` elements.
        Here: the method itself."""
        return self.take_rows

    def checked_row_take(self, elements: int) -> Callable[..., Array | None] | None:
        """:meth:`take_rows_checked` for one signature, whose reads take ``elements``
        elements, where it differs from the method (``None``: the method). Here: None."""
        return None

    def takes_elements(self, count: int) -> bool:
        """Whether :meth:`take_elements` takes index tuples that select ``count``
        elements: a fact of a lowering's signature. Here: never."""
        return False

    def element_combines(self, count: int) -> frozenset[Named | None]:
        """The combiners (``None``: replace) :meth:`combine_elements` takes for index
        tuples that select ``count`` elements: a fact of a lowering's signature. Here:
        none."""
        return frozenset()

    def take_elements(
        self, x: Array, index: tuple[Array, ...], values_first: bool = False
    ) -> Array | None:
        """``x[index]`` for a tuple of index arrays of the index dtype, one per dim of
        ``x`` (broadcasting together), where one native step reads it and checks every
        entry (negative ones count from the end, as NumPy's indexing does); ``None``
        where an entry lies outside, where the values are not on the host (nothing read)
        or the library has no such step. ``values_first``: the caller's reads of this
        signature found an entry outside before, so where the native check raises
        slowly, the values are read on the host first. Here: ``None``."""
        return None

    def combine_elements(
        self, x: Array, index: tuple[Array, ...], values: Array, how: Named | None, copy: bool
    ) -> Array | None:
        """``x``, or where ``copy`` a copy of it, with ``values`` (of ``x``'s dtype, the
        shape ``index`` broadcasts to) combined by ``how`` (replace where ``None``) into
        the elements ``x[index]``, repeated elements in the order of ``values`` (a
        replace leaves the last write), where one native step does it with
        every entry in range (checked before anything is written) and nothing is for
        autograd to record. ``None``, ``x`` untouched, where an entry lies outside (or is
        negative, where the step does not count those from the end), where the values
        are not on the host or the library has no such step (``how`` is one
        :meth:`element_combines` gave). ``index`` and ``values`` share no memory with
        ``x``. Here: ``None``."""
        return None

    def take_rows_checked(self, x: Array, rows: Array, values_first: bool = False) -> Array | None:
        """``x[rows]`` for an array ``rows`` of the index dtype, where one native step
        reads it and checks each row in ``[-len(x), len(x))`` (negative rows count from
        the end, as in NumPy's indexing); ``None`` where a row lies outside, where the
        values are not on the host (nothing read) or the library has no such step
        (nothing written). ``values_first`` as for :meth:`take_elements`. Here:
        ``None``."""
        return None

    def set_rows(
        self, table: Array, rows: Array, values: Array, keep: Array | None = None
    ) -> Array:
        """Write ``values[k]`` into row ``rows[k]`` where ``keep[k]``; return the table.

        ``rows`` are in range. Rows written twice must get identical values, so the order of
        the writes does not matter. Writes into ``table`` where the library can, otherwise
        returns a new array.
        """
        xp = self.xp
        n = table.shape[0]
        targets = rows if keep is None else self.where(keep, rows, n)  # n is never hit
        order = xp.argsort(targets)
        ordered = self.take_rows(targets, order)
        every_row = self.arange(n, ordered.dtype, table)
        position = self.clip(xp.searchsorted(ordered, every_row), None, rows.shape[0] - 1)
        hit = self.take_rows(ordered, position) == every_row
        source = self.take_rows(values, self.take_rows(order, position))
        return self.where(hit[:, None], source, table)

    def rows_increase(self, rows: Array) -> bool:
        """Whether each entry of the 1-D ``rows`` is above the one before, so that no row
        repeats; False where not shown. Read on the host (host paths only). Here: one
        comparison of neighbours."""
        return bool(self.xp.all(rows[1:] > rows[:-1]))

    def count_distinct_rows(self, rows: Array, n: int) -> int:
        """How many different rows the 1-D ``rows`` (all in ``[0, n)``) name: a count on
        the host, so for host paths only. Here: a bitmap of ``n`` entries written with
        :meth:`set_rows`, then counted."""
        xp = self.xp
        hit = self.full((rows.shape[0], 1), True, xp.bool, rows)
        bitmap = self.set_rows(self.full((n, 1), False, xp.bool, rows), rows, hit)
        return int(xp.count_nonzero(bitmap))

    def combine_rows(
        self,
        table: Array,
        rows: Array,
        values: Array,
        how: Named,
        keep: Array | None = None,
        unique: bool = False,
    ) -> Array:
        """Combine ``values[k]`` into row ``rows[k]`` with ``how`` where ``keep[k]``;
        repeated rows accumulate (``unique=True``: no row repeats). Writes into ``table``
        where the library can and returns it, else returns a new array. Here:
        :meth:`combine_by_passes`."""
        return self.combine_by_passes(table, rows, values, how, keep=keep, unique=unique)

    def applies_rows_in_order(self, elements: int) -> bool:
        """Whether :meth:`apply_rows_in_order` may take writes of ``elements`` elements (a
        fact of their size: a call may still decline). Here: never."""
        return False

    def row_pass(self, how: Named | None, elements: int) -> Callable[..., Array | None] | None:
        """:meth:`apply_rows_in_order` prepared for the combiner ``how`` and writes of
        ``elements`` elements (the same arguments but ``how``), or ``None`` where the
        backend never takes them (:meth:`applies_rows_in_order`). Here: ``None``."""
        return None

    def apply_rows_in_order(
        self,
        table: Array,
        rows: Array,
        values: Array,
        how: Named | None,
        *,
        wrap: bool = False,
        outside: str = "stop",
        copy: bool = False,
    ) -> Array | None:
        """Apply ``values[k]`` to row ``rows[k]`` of the 2-D ``table`` for each ``k`` in
        order, in place (or into a new array where ``copy``: ``table`` is then not
        written), in one pass that checks each row's bounds: replace where ``how`` is
        ``None`` (the last write wins), else the named combiner (min and max IEEE-754's,
        signed zeros included); return the array written. ``wrap``: a negative row
        counts from the end first; then a row outside is clipped (``outside`` is
        ``"clip"``), its update dropped (``"drop"``) or, for ``"stop"``,
        :class:`IndexError` raised, the rows before it written. ``rows`` and ``values``
        are read as they were before the call. ``None`` where the backend has no such
        pass for these arrays (the caller's other ways run). For values on the host.
        Here: ``None``."""
        return None

    def combine_by_passes(
        self,
        table: Array,
        rows: Array,
        values: Array,
        how: Named,
        keep: Array | None = None,
        unique: bool = False,
    ) -> Array:
        """:meth:`combine_rows` as :meth:`apply_rows` of the library's elementwise
        function, for libraries and dtypes without an accumulating scatter; min and max
        give IEEE-754 ``minimum``/``maximum``, signed zeros included."""
        xp = self.xp
        function = named_function(xp, how)
        exact_zeros = how in MIN_MAX and has_signed_zeros(self, table.dtype)

        def combine(old: Array, new: Array) -> Array:
            result = xp.astype(function(old, new), old.dtype)
            return with_ieee_zeros(xp, how, old, new, result) if exact_zeros else result

        return self.apply_rows(table, rows, values, combine, keep=keep, unique=unique)

    def apply_rows(
        self,
        table: Array,
        rows: Array,
        values: Array,
        step: Callable[[Array, Array], Array],
        keep: Array | None = None,
        unique: bool = False,
    ) -> Array:
        """``table[rows[k]] = step(table[rows[k]], values[k])`` for each kept ``k`` in
        order, without a host read: pass ``p`` applies the ``p``-th occurrence of every
        row at once (one pass where ``unique``)."""
        if unique:  # one pass, whose count no value decides (torch.compile traces it)
            return self.set_rows(table, rows, step(self.take_rows(table, rows), values), keep)
        rank = self.occurrence_rank(rows, keep, table.shape[0])

        def one_pass(table: Array, p: int | Array) -> Array:
            new = step(self.take_rows(table, rows), values)
            return self.set_rows(table, rows, new, keep=rank == p)

        return self.repeat(self.xp.max(rank) + 1, one_pass, table)

    def occurrence_rank(self, rows: Array, keep: Array | None, n: int) -> Array:
        """Per entry of ``rows`` (in ``[0, n)``): how many kept entries before it name
        the same row (-1 where not kept)."""
        xp = self.xp
        order, ordered = self.sort_rows(rows, keep, n)
        firsts = xp.searchsorted(ordered, ordered, side="left")
        rank = self.arange(rows.shape[0], firsts.dtype, rows) - firsts
        rank = self.take_rows(rank, xp.argsort(order))
        return rank if keep is None else self.where(keep, rank, -1)

    def sort_rows(self, rows: Array, keep: Array | None, n: int) -> tuple[Array, Array]:
        """A stable sort of ``rows`` (entries not kept as ``n``, after every real row):
        the order and the sorted keys."""
        keys = rows if keep is None else self.where(keep, rows, n)
        order = self.xp.argsort(keys, stable=True)
        return order, self.take_rows(keys, order)

    def combine_along_axis(
        self, x: Array, axis: int, indices: Array, values: Array, how: Named | None
    ) -> Array:
        """Combine ``values`` into ``x`` at ``indices`` along ``axis`` in place (the
        inverse of :meth:`take_along_axis`, arguments alike; ``how=None`` writes); repeated
        targets accumulate in some order (for ``None``: one of the values wins). Only for
        libraries whose :attr:`scatters_elements` is True."""
        raise NotImplementedError

    def signed_view(self, x: Array) -> Array | None:
        """The bits of the float array ``x`` as the signed integer type of their width,
        a view that writes go through, or ``None`` where there is none (float4 and float6
        dtypes are narrower than any). For libraries with a native :meth:`combine_rows`
        whose min and max are not IEEE-754 on signed zeros."""
        return None

    # -- windows --------------------------------------------------------------------------

    def assign_window(
        self, x: Array, key: tuple[Any, ...], values: Array, *, in_place: bool
    ) -> Array:
        """``x[key] = values`` for a ``key`` that names each element once (slices, or
        the open grid of :meth:`NativeScatter.dynamic_slice`), into ``x`` itself or a
        copy; ``values`` may view ``x``: they are read before the write."""
        if in_place and self.shares_memory(values, x):
            values = self.copy(values)
        target = x if in_place else self.copy(x)
        target[key] = values
        return target

    def dynamic_slice(self, x: Array, starts: list[Any], sizes: tuple[int, ...]) -> Array:
        """The window of ``sizes`` at ``starts`` (Python ints and 0-d index arrays, each
        already clamped to ``[0, dim - size]``), without reading them on the host.

        Here: ``take`` along each dim the window does not cover whole, the most
        narrowing dim first.
        """
        window = x
        for d in sorted(_cut_dims(x.shape, sizes), key=lambda d: sizes[d] / x.shape[d]):
            positions = self._window_positions(starts[d], sizes[d], x)
            window = self.xp.take(window, positions, axis=d)
        return window

    def dynamic_update_slice(
        self, x: Array, update: Array, starts: list[Any], *, in_place: bool
    ) -> Array:
        """``x`` with ``update`` at ``starts`` (clamped, as for :meth:`dynamic_slice`),
        into ``x`` itself or a new array.

        Here: each element of ``x`` takes the element of ``update`` at its offset from
        the window's corner where it lies in the window (a ``where`` over ``x``: no
        scatter, which the standard lacks).
        """
        xp = self.xp
        placed, inside = update, None
        for d in _cut_dims(x.shape, update.shape):
            offsets = self.arange(x.shape[d], self.index_dtype(), x) - starts[d]
            placed = xp.take(placed, self.clip(offsets, 0, update.shape[d] - 1), axis=d)
            shape = [1] * x.ndim
            shape[d] = x.shape[d]
            hit = xp.reshape((offsets >= 0) & (offsets < update.shape[d]), tuple(shape))
            inside = hit if inside is None else inside & hit
        result = placed if inside is None else self.where(inside, placed, x)
        if not in_place:
            return result
        x[...] = result
        return x

    def _window_positions(self, start: Any, size: int, like: Array) -> Array:
        """``start + arange(size)`` in the index dtype, for a Python-int or 0-d start."""
        return self.arange(size, self.index_dtype(), like) + start

    # -- control flow ---------------------------------------------------------------------

    def repeat(
        self, count: Array, body: Callable[[Array, int | Array], Array], state: Array
    ) -> Array:
        """``state = body(state, p)`` for ``p`` in ``range(count)``; ``count`` is a 0-d
        array, read on the host here (backends with a device loop override this, where
        ``p`` may be a 0-d array)."""
        for p in range(int(count)):
            state = body(state, p)
        return state


def _kind(xp: ModuleType, dtype: Any, kind: str) -> bool:
    try:
        if xp.isdtype(dtype, kind):
            return True
    except TypeError:  # a dtype the standard does not name (NumPy's isdtype refuses it)
        pass
    # array-api-compat's isdtype (Dask's) answers False for such dtypes instead: ask the
    # dtype itself (False for any dtype that is not NumPy's)
    from . import _dtypes

    return _dtypes.has_kind(dtype, kind)


_cached_kind = static_cache(maxsize=256)(_kind)


def _cut_dims(shape: tuple[int, ...], sizes: tuple[int, ...]) -> list[int]:
    """The dims a window of ``sizes`` does not cover whole (its start there matters)."""
    return [d for d, (dim, size) in enumerate(zip(shape, sizes)) if size != dim]


class NativeScatter(Backend):
    """A library with native scatters that cannot leave an entry out (NumPy, torch, CuPy).

    Subclasses give ``_set`` (plain row assignment) and ``_combine`` (accumulating row
    scatter); leaving entries out is built here: a left-out write repeats a kept one, and a
    left-out combine adds the combiner's identity.
    """

    writes_into_table = True
    native_combine = True
    min_max_ieee = False

    def _set(self, table: Array, rows: Array, values: Array) -> Array:
        raise NotImplementedError

    def _combine(self, table: Array, rows: Array, values: Array, how: Named) -> Array | None:
        """Combine in place (repeated rows accumulate); ``None`` for a dtype without a
        native path. Every library here has one for int32/int64 ``max``."""
        raise NotImplementedError

    def _combine_distinct(
        self, table: Array, rows: Array, values: Array, how: Named
    ) -> Array | None:
        """:meth:`_combine` of ``rows`` that do not repeat, where the library has a
        faster way to it than its accumulating scatter; ``None`` where not (here: never)."""
        return None

    def dynamic_slice(self, x: Array, starts: list[Any], sizes: tuple[int, ...]) -> Array:
        """Here: one advanced-index read, ``x[key]`` with the window's open grid."""
        return x[self._window_key(x, starts, sizes)]

    def dynamic_update_slice(
        self, x: Array, update: Array, starts: list[Any], *, in_place: bool
    ) -> Array:
        """Here: one advanced-index write of the window's open grid (no pass over ``x``)."""
        key = self._window_key(x, starts, tuple(update.shape))
        return self.assign_window(x, key, update, in_place=in_place)

    def _window_key(self, x: Array, starts: list[Any], sizes: tuple[int, ...]) -> tuple[Any, ...]:
        """The index arrays of the window, broadcast against each other as an open grid
        (``np.ix_``), up to the last dim it does not cover whole; the dims after it are
        taken whole."""
        cut = _cut_dims(x.shape, sizes)
        if not cut:
            return (...,)
        rank = cut[-1] + 1
        key = []
        for d in range(rank):
            shape = [1] * rank
            shape[d] = sizes[d]
            key.append(self.reshape(self._window_positions(starts[d], sizes[d], x), tuple(shape)))
        return tuple(key)

    def set_rows(
        self, table: Array, rows: Array, values: Array, keep: Array | None = None
    ) -> Array:
        if keep is None:
            return self._set(table, rows, values)
        return self._set_kept(table, rows, values, keep)

    def _set_kept(self, table: Array, rows: Array, values: Array, keep: Array) -> Array:
        """Write the kept entries (their rows are distinct) without a host read.

        A native scatter cannot leave an entry out, so each entry not kept repeats the write
        of the first kept one: that row gets the same value more than once. Where no entry
        is kept, the row written is put back afterwards. The cost over a plain write is one
        gather of the values. The repeated writes carry no gradient: the kept write's
        gradient reaches its value once.
        """
        xp = self.xp
        positions = self.arange(rows.shape[0], self.index_dtype(), rows)
        first = xp.reshape(xp.argmax(xp.astype(keep, xp.int32)), (1,))  # 0 if none kept
        source = self.where(keep, positions, first)
        first_row = self.take_rows(rows, first)
        before = self.take_rows(table, first_row)
        written = self.without_gradient_where(~keep, self.take_rows(values, source))
        table = self._set(table, self.take_rows(rows, source), written)
        after = self.where(xp.any(keep), self.take_rows(table, first_row), before)
        return self._set(table, first_row, after)

    def without_gradient_where(self, mask: Array, rows: Array) -> Array:
        """``rows`` whose entries where the 1-D ``mask`` is True carry no gradient (for
        libraries with autograd; here: ``rows`` itself)."""
        return rows

    def signed_view(self, x: Array) -> Array | None:
        signed = getattr(self.xp, f"int{self.finfo(x.dtype).bits}", None)
        return None if signed is None else x.view(signed)

    def combine_rows(
        self,
        table: Array,
        rows: Array,
        values: Array,
        how: Named,
        keep: Array | None = None,
        unique: bool = False,
    ) -> Array:
        """Here: one native scatter, entries not kept combining the identity; pass by pass
        for a dtype without an identity (float8_e8m0fnu has no zero) or without a native
        scatter (:meth:`_combine` gives ``None``)."""
        written = None
        identity = None if keep is None else combine_identity(self, how, values.dtype)
        if keep is None:
            if unique:
                written = self._combine_distinct(table, rows, values, how)
            if written is None:
                written = self._combine(table, rows, values, how)
        elif identity is not None:
            fill = self.full((), identity, values.dtype, values)
            written = self._combine(table, rows, self.where(keep[:, None], values, fill), how)
        if written is None:
            return self.combine_by_passes(table, rows, values, how, keep=keep, unique=unique)
        return written


def combine_identity(backend: Backend, how: Named, dtype: Any) -> Any | None:
    """The value ``e`` with ``how(x, e) == x`` for every ``x`` of ``dtype``, or ``None``
    where ``dtype`` holds no such value (float8_e8m0fnu has no zero).

    For float add it is -0.0, so that a -0.0 already there stays -0.0 (0.0 in a dtype
    without a negative zero); for float min and max the infinities, or the largest and
    smallest values in a dtype without them (float8_e4m3fn).
    """
    if how is Named.MUL:
        return 1
    if backend.has_kind(dtype, "complex floating"):
        return complex(-0.0, -0.0) if how is Named.ADD else None
    if backend.has_kind(dtype, "real floating"):
        if how is Named.ADD:
            candidates = (-0.0, 0.0)
        else:
            finfo = backend.finfo(dtype)
            low = how is Named.MAX
            candidates = (
                (float("-inf"), float(finfo.min)) if low else (float("inf"), float(finfo.max))
            )
        return next((value for value in candidates if backend.holds(dtype, value)), None)
    if how is Named.ADD:
        return 0
    info = backend.iinfo(dtype)
    return info.max if how is Named.MIN else info.min
