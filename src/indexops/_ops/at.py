"""``at``: NumPy index expressions, read with one ``gather`` and written with one ``scatter``.

``at(x)[idx]`` (or ``at(x, idx)``) names the elements ``x[idx]`` of NumPy indexing; its
methods read them or return ``x`` with them updated. :mod:`.numpy_index` lowers the index
expression to gather/scatter attributes once per shape (a cached plan); each call builds
the start indices and makes one core call, which brings the core's checks, duplicate
order, modes, copies, tracing and fast paths.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np

from .._backends import Backend, backend_for, is_array
from .._backends._host import LIST_ENTRIES
from .._errors import type_error, value_error
from .._execute.writes import RowWriter, read_before_writing
from .._plan.cache import static_cache, torch_is_compiling
from .._plan.executors import Executor, executor, kept, kept_in, signature
from .._typing import Array
from .._validate.arguments import as_flag, casts_in_kind, check_scalar, writes_in_place
from .._validate.combiners import Combiner, Named, resolve
from .._validate.modes import GatherMode, ScatterMode
from .gather import fill_scalar, gather, gather_executor
from .numpy_index import (
    BasicIndex,
    IndexPlan,
    basic_index,
    counting_dims,
    index_plan,
    parse_index,
    start_indices,
    with_batching,
)
from .scatter import combiner_for, scatter, scatter_executor

OP = "at"

# combiners without a name in scatter: the library's own elementwise function
_XP_COMBINERS = {"divide": "divide", "power": "pow"}

# the modes every call asks for: a member read through its Enum class costs 75 ns in
# Python 3.11 (EnumType's __getattr__ slows every attribute of the class), a global 8
_CLIP, _FILL, _DROP = GatherMode.CLIP, GatherMode.FILL, ScatterMode.DROP
_READ_PROMISED, _WRITE_PROMISED = GatherMode.PROMISE_IN_BOUNDS, ScatterMode.PROMISE_IN_BOUNDS
_gather_mode, _scatter_mode = GatherMode.parse, ScatterMode.parse

_NUMERIC = ("integral", "real floating", "complex floating")
_INEXACT = ("real floating", "complex floating")
_REAL = ("integral", "real floating")  # (the Array API orders real numbers only)


@dataclass(frozen=True)
class _Update:
    """What an update method of :class:`At` scatters: ``computation`` (scatter's
    ``update_computation``, or a key of ``_XP_COMBINERS``), the dtype ``kinds`` x may
    have (``None``: any), and whether ``y`` is negated first."""

    computation: str | None
    kinds: tuple[str, ...] | None
    negate: bool = False


_UPDATES = {
    "set": _Update(None, None),
    "add": _Update("add", _NUMERIC),
    "subtract": _Update("add", _NUMERIC, negate=True),  # x - y == x + (-y), wrapping too
    "multiply": _Update("mul", _NUMERIC),
    "divide": _Update("divide", _INEXACT),
    "power": _Update("power", _NUMERIC),
    "min": _Update("min", _REAL),
    "max": _Update("max", _REAL),
    "apply": _Update(None, None),  # the callable f comes with the call
}
_OP_NAMES = {method: f"at.{method}" for method in _UPDATES}  # (an f-string costs per call)


class _NoIndex:
    def __repr__(self) -> str:
        return "<no index>"


_NO_INDEX: Any = _NoIndex()

_Method = TypeVar("_Method", bound=Callable[..., Any])


def at(x: Array, idx: Any = _NO_INDEX) -> At:
    """The elements ``x[idx]`` of NumPy indexing, to read or to update on any backend.

    ``at(x)[idx]`` and ``at(x, idx)`` are the same. Each method makes one ``gather``
    (``get``) or one ``scatter`` call (the others), so it runs wherever those run: NumPy,
    torch, JAX (also under ``jax.jit``), CuPy, array-api-strict, and other Array API
    libraries.

    Parameters
    ----------
    x : array
        The array to read or update.
    idx : index expression, optional
        What NumPy indexing accepts: ints (negative ones count from the end), slices with
        any step, ``None``, ``...``, integer arrays and (nested) sequences of ints, which
        broadcast together, boolean arrays and sequences of bools, Python bools (NumPy's
        0-d masks), and tuples mixing them; slice bounds may be anything with
        ``__index__``. Advanced (array) indices go where NumPy puts them. An int out of
        range is an error, as in NumPy; out-of-range values of an integer array follow
        ``mode``. Boolean arrays are read when the method is called (the result's shape
        depends on their values), so they are refused where values are unknown, e.g.
        under ``jax.jit``. Index arrays must belong to ``x``'s library (with a Dask
        ``x``, NumPy ones too).

    Returns
    -------
    At
        ``x[idx]`` to read or update, with the methods :meth:`~At.get`,
        :meth:`~At.set`, :meth:`~At.add`, :meth:`~At.subtract`, :meth:`~At.multiply`,
        :meth:`~At.divide`, :meth:`~At.power`, :meth:`~At.min`, :meth:`~At.max` and
        :meth:`~At.apply` (see :class:`At`).

    Notes
    -----
    Updates with repeated positions are applied one by one, in the row-major order of
    ``x[idx]``'s shape, for every method and on every backend: ``set`` keeps the last
    value, ``add`` adds every one, ``apply`` calls ``f`` once per occurrence, in order
    (float sums and products may differ from that order only by rounding).

    Default modes are JAX's: ``get`` clips out-of-range indices to the nearest element,
    the updates drop them.

    Examples
    --------
    >>> import numpy as np
    >>> import indexops
    >>> x = np.zeros(5)
    >>> indexops.at(x)[[0, 2, 2]].add(1.0)  # the repeated 2 adds twice
    array([1., 0., 2., 0., 0.])
    >>> indexops.at(x)[[0, 2, 2]].set(np.array([1.0, 2.0, 3.0]))  # the last 2 wins
    array([1., 0., 3., 0., 0.])
    >>> x  # not modified (copy=True)
    array([0., 0., 0., 0., 0.])

    Reading, with a slice, an array and ``None`` together:

    >>> table = np.arange(12).reshape(3, 4)
    >>> indexops.at(table)[::-1, np.array([3, -1, 0]), None].get()
    array([[[11],
            [11],
            [ 8]],
    <BLANKLINE>
           [[ 7],
            [ 7],
            [ 4]],
    <BLANKLINE>
           [[ 3],
            [ 3],
            [ 0]]])

    Out-of-range values of an index array follow ``mode``:

    >>> indexops.at(np.arange(4.0), np.array([1, 9])).get(mode="fill", fill_value=-1.0)
    array([ 1., -1.])
    >>> indexops.at(np.zeros(4), np.array([1, 9])).add(1.0)  # dropped: the default
    array([0., 1., 0., 0.])
    >>> indexops.at(np.zeros(4), np.array([1, 9])).add(1.0, mode="clip")
    array([0., 1., 0., 1.])
    """
    return At(x, idx)


# What every update method says of ``y`` and its options, written once: ``{options}``
# ends the description of ``y`` in each docstring.
_UPDATE_OPTIONS = """\
It broadcasts to the shape of ``x[idx]``.
            An array of another dtype is cast to ``x``'s where NumPy's ``same_kind``
            casting allows it (bool < unsigned < signed integers < real < complex
            floating, each into its own or a later kind; JAX's weakly typed integers
            into unsigned ones too); a Python scalar must be one that ``x``'s dtype holds.
        mode : {"drop", "clip", "promise_in_bounds"}, optional
            For out-of-range values of index arrays (after negative values count from the
            end): ``"drop"`` (default, as JAX does) skips the update, ``"clip"`` moves it
            to the nearest element, ``"promise_in_bounds"`` is the caller's promise that
            there are none. ``"fill"`` (JAX's name) means ``"drop"``; a
            ``jax.lax.GatherScatterMode`` member is read as JAX's ``.at`` reads it
            (``FILL_OR_DROP``: ``"drop"``).
        indices_are_sorted : bool
            JAX's hint, passed on to ``scatter``, which accepts it; the result does not
            depend on it.
        unique_indices : bool
            The caller's promise that no element is updated twice; skips duplicate
            handling (if broken, the result is undefined).
        copy : bool or None
            ``True`` (default): a new array, ``x`` untouched; ``False``: write into ``x``
            and return it (an error for arrays that cannot be written, such as JAX
            arrays); ``None``: in place where possible, else a copy. array-api-extra's
            ``at`` defaults to ``None``, after which ``x`` must not be used again; the
            default here is ``True`` so that a call gives the same result and leaves
            ``x`` alone on every library, JAX's and NumPy's alike.

        Returns
        -------
        array
            ``x`` with ``x[idx]`` updated, of ``x``'s namespace, device, shape and dtype."""


def _with_update_options(method: _Method) -> _Method:
    """``method`` with ``{options}`` in its docstring replaced by the shared options."""
    method.__doc__ = (method.__doc__ or "").replace("{options}", _UPDATE_OPTIONS.strip())
    return method


class At:
    """``x[idx]`` as a target of reads and updates; made by :func:`at`.

    :meth:`get` reads ``x[idx]`` with one ``gather``; every other method returns ``x``
    with ``x[idx]`` updated by one ``scatter``. ``y`` broadcasts to the shape of
    ``x[idx]``; an array of another dtype is cast to ``x``'s where NumPy's ``same_kind``
    casting allows it, and a Python scalar must be one ``x``'s dtype holds (see the
    table under "Values to write" in the :doc:`at guide </at>`).

    Parameters
    ----------
    x : array
        The array to read or update; a NumPy scalar is taken as a 0-d array.
    idx : index expression, optional
        As :func:`at` takes it; else given by ``at(x)[idx]``.

    See Also
    --------
    at : What makes an ``At``, and the index expressions it takes.

    Examples
    --------
    >>> import numpy as np
    >>> import indexops
    >>> target = indexops.at(np.zeros(4))[1:3]
    >>> target.add(np.float32(2.5))   # a NumPy float32 scalar, cast to float64
    array([0. , 2.5, 2.5, 0. ])
    >>> target.get()
    array([0., 0.])
    """

    __slots__ = ("_idx", "_x")

    def __init__(self, x: Array, idx: Any = _NO_INDEX) -> None:
        self._x = np.asarray(x) if isinstance(x, np.generic) else x  # a 0-d array
        # a tuple subclass (a named tuple, say) is the tuple of its items, as in NumPy
        plain = idx is _NO_INDEX or type(idx) is tuple or not isinstance(idx, tuple)
        self._idx = idx if plain else tuple(idx)

    def __getitem__(self, idx: Any) -> At:
        if self._idx is not _NO_INDEX:
            raise type_error(OP, "idx", "a second index", "one index: at(x)[idx] or at(x, idx)")
        if type(idx) is not tuple and isinstance(idx, tuple):
            return At(self._x, idx)
        indexed = At.__new__(At)  # x is as __init__ made it: one check less per call
        indexed._x, indexed._idx = self._x, idx
        return indexed

    def __repr__(self) -> str:
        return f"at({type(self._x).__name__} of shape {tuple(self._x.shape)}, {self._idx!r})"

    def get(
        self,
        *,
        mode: str | GatherMode | None = None,
        fill_value: Any = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
    ) -> Array:
        """``x[idx]``, as one ``gather``.

        Parameters
        ----------
        mode : {"clip", "fill", "promise_in_bounds"}, optional
            For out-of-range values of index arrays (after negative values count from the
            end): ``"clip"`` (default, as JAX does) reads the nearest element, ``"fill"``
            gives ``fill_value``, ``"promise_in_bounds"`` is the caller's promise that
            there are none. ``"drop"`` (JAX's name) means ``"fill"``; a
            ``jax.lax.GatherScatterMode`` member is read as JAX's ``.at`` reads it
            (``FILL_OR_DROP``: ``"fill"``).
        fill_value : scalar, optional
            For ``mode="fill"``; default NaN for floats, the minimum of signed integers,
            the maximum of unsigned ones, True for bool.
        indices_are_sorted, unique_indices : bool
            JAX's hints, passed on to ``gather``, which accepts them; the result does not
            depend on them.

        Returns
        -------
        array
            ``x[idx]``, of ``x``'s namespace, device and dtype.

        Examples
        --------
        >>> import numpy as np
        >>> import indexops
        >>> indexops.at(np.arange(10))[1:8:3].get()
        array([1, 4, 7])
        """
        op = "at.get"
        gather_mode = (  # JAX's default for reads: clip
            _CLIP if mode is None else _gather_mode(op, mode, jax_names=True)
        )
        if indices_are_sorted is not False:  # (the defaults need no call)
            as_flag(op, "indices_are_sorted", indices_are_sorted)
        if unique_indices is not False:
            as_flag(op, "unique_indices", unique_indices)
        lowering = self._lowered(op)
        x = self._x
        if gather_mode is _FILL and fill_value is not None and not lowering.fills_in_gather:
            fill_scalar(lowering.backend, x.dtype, fill_value, op)  # (the gather's checks it)
        if lowering.last_row is not None and gather_mode is not _FILL:
            # (first: of an x without rows, the checked read takes no rows or none)
            rows = _read_rows(lowering, x, self._idx)
            if rows is not None:
                return rows
        backend, plan, basic = lowering.backend, lowering.plan, lowering.basic
        if plan.empty_dims:  # a gather window must fit: only an empty read is possible
            return _empty_read(op, backend, x, plan)
        if basic is not None:
            return _read_basic(backend, basic, x)
        if lowering.elements:  # every entry in range: the same read in every mode
            taken = backend.take_elements(x, self._idx, lowering.values_first)
            if taken is not None:
                return taken
            _took_nothing(lowering, *self._idx)
        starts, in_range, plan, from_end = lowering(x, self._idx, core_from_end=True)
        if in_range and gather_mode is _CLIP:  # checked here: nothing to clip
            gather_mode = _READ_PROMISED
        if lowering.keeps_core:  # at's signature pins the gather's: skip it
            attributes = plan.gather_attributes
            run = kept_in(
                lowering.core,
                (gather_mode, plan.batching_pairs, from_end),
                lambda: gather_executor(x, starts, attributes, gather_mode, from_end, op),
            )
            return run(x, starts, fill_value)
        return gather(
            x,
            starts,
            offset_dims=plan.offset_dims,
            collapsed_slice_dims=plan.collapsed_dims,
            start_index_map=plan.start_map,
            index_vector_dim=plan.index_vector_dim,
            slice_sizes=plan.slice_sizes,
            operand_batching_dims=plan.operand_batching_dims,
            start_indices_batching_dims=plan.index_batching_dims,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=gather_mode,
            fill_value=fill_value,
        )

    @_with_update_options
    def set(
        self,
        y: Any,
        *,
        mode: str | ScatterMode | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        copy: bool | None = True,
    ) -> Array:
        """``x[idx] = y``; of repeated positions the last (row-major) wins.

        Parameters
        ----------
        y : array or Python scalar
            The values to write. {options}

        Examples
        --------
        >>> import numpy as np
        >>> import indexops
        >>> indexops.at(np.zeros((2, 3)))[:, 1].set(7.0)
        array([[0., 7., 0.],
               [0., 7., 0.]])
        """
        return self._update("set", y, mode, indices_are_sorted, unique_indices, copy)

    @_with_update_options
    def add(
        self,
        y: Any,
        *,
        mode: str | ScatterMode | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        copy: bool | None = True,
    ) -> Array:
        """``x[idx] += y``, every repeated position adding.

        Parameters
        ----------
        y : array or Python scalar
            The values to add. {options}
        """
        return self._update("add", y, mode, indices_are_sorted, unique_indices, copy)

    @_with_update_options
    def subtract(
        self,
        y: Any,
        *,
        mode: str | ScatterMode | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        copy: bool | None = True,
    ) -> Array:
        """``x[idx] -= y``, every repeated position subtracting.

        Parameters
        ----------
        y : array or Python scalar
            The values to subtract. {options}

        Notes
        -----
        Done as adding ``-y``: exact for floats, and for integers too, whose arithmetic
        wraps around (``x - y == x + (-y)`` modulo 2**bits).
        """
        return self._update("subtract", y, mode, indices_are_sorted, unique_indices, copy)

    @_with_update_options
    def multiply(
        self,
        y: Any,
        *,
        mode: str | ScatterMode | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        copy: bool | None = True,
    ) -> Array:
        """``x[idx] *= y``, every repeated position multiplying.

        Parameters
        ----------
        y : array or Python scalar
            The factors. {options}
        """
        return self._update("multiply", y, mode, indices_are_sorted, unique_indices, copy)

    @_with_update_options
    def divide(
        self,
        y: Any,
        *,
        mode: str | ScatterMode | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        copy: bool | None = True,
    ) -> Array:
        """``x[idx] /= y`` for floating ``x``, repeated positions dividing in turn.

        Parameters
        ----------
        y : array or Python scalar
            The divisors. {options}
        """
        return self._update("divide", y, mode, indices_are_sorted, unique_indices, copy)

    @_with_update_options
    def power(
        self,
        y: Any,
        *,
        mode: str | ScatterMode | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        copy: bool | None = True,
    ) -> Array:
        """``x[idx] **= y``, repeated positions raising in turn.

        Parameters
        ----------
        y : array or Python scalar
            The exponents; none negative where ``x`` has a signed integer dtype (an
            integer to a negative power is no integer): a named error, raised before
            anything is written where the values are on the host (see the ``at`` guide).
            {options}

        Examples
        --------
        >>> import numpy as np
        >>> import indexops
        >>> indexops.at(np.full(3, 2.0))[[1, 1]].power(np.array([2.0, 3.0]))  # (2**2)**3
        array([ 2., 64.,  2.])
        """
        return self._update("power", y, mode, indices_are_sorted, unique_indices, copy)

    @_with_update_options
    def min(
        self,
        y: Any,
        *,
        mode: str | ScatterMode | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        copy: bool | None = True,
    ) -> Array:
        """``x[idx] = minimum(x[idx], y)``, over every repeated position.

        Parameters
        ----------
        y : array or Python scalar
            The values to take the minimum with. {options}
        """
        return self._update("min", y, mode, indices_are_sorted, unique_indices, copy)

    @_with_update_options
    def max(
        self,
        y: Any,
        *,
        mode: str | ScatterMode | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        copy: bool | None = True,
    ) -> Array:
        """``x[idx] = maximum(x[idx], y)``, over every repeated position.

        Parameters
        ----------
        y : array or Python scalar
            The values to take the maximum with. {options}
        """
        return self._update("max", y, mode, indices_are_sorted, unique_indices, copy)

    @_with_update_options
    def apply(
        self,
        f: Callable[[Array, Array], Array],
        y: Any,
        *,
        mode: str | ScatterMode | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        copy: bool | None = True,
    ) -> Array:
        """``x[idx] = f(x[idx], y)``, once per occurrence of a repeated position, in order.

        Parameters
        ----------
        f : callable
            ``f(old, new)``, elementwise on arrays of ``x``'s library; its result must
            be an array of the shape of ``old`` (a named error otherwise), and is cast to
            ``x``'s dtype.
        y : array or Python scalar
            The second argument of ``f``. {options}

        Examples
        --------
        >>> import numpy as np
        >>> import indexops
        >>> def twice_plus(old, new):
        ...     return 2 * old + new
        >>> indexops.at(np.ones(3))[[0, 0]].apply(twice_plus, np.array([1.0, 10.0]))
        array([16.,  1.,  1.])
        """
        if not callable(f):
            raise type_error("at.apply", "f", f, "a callable f(old, new)")
        return self._update("apply", y, mode, indices_are_sorted, unique_indices, copy, f=f)

    # -- shared by the methods ------------------------------------------------------------

    def _lowered(self, op: str, y: Any = None) -> _Lowering:
        """The index expression validated and planned: looked up by its signature, made
        the first time (see :func:`_lower`).

        ``y``, where it is an array of ``x``'s type, is checked with ``x`` on every call
        (one of another type gets :func:`backend_for`'s checks later)."""
        if self._idx is _NO_INDEX:
            raise type_error(op, "idx", "no index", "an index: at(x)[idx] or at(x, idx)")
        x, idx = self._x, self._idx
        key = _index_signature(x, idx)
        lowering: _Lowering | None = kept(key)  # (a repeat makes no builder)
        if lowering is None:
            if key is not None and _has_mask(x, idx):
                key = None  # a mask's values set the plan: lowered on every call
            lowering = cast(
                _Lowering, executor(key, lambda: _lower(op, x, idx, cached=key is not None))
            )
        backend = lowering.backend
        if type(y) is type(x):
            backend.check_pair(op, x, y)
        return lowering

    def _update(
        self,
        method: str,
        y: Any,
        mode: str | ScatterMode | None,
        indices_are_sorted: bool,
        unique_indices: bool,
        copy: bool | None,
        f: Callable[[Array, Array], Array] | None = None,
    ) -> Array:
        """One scatter for the update ``method`` (see :data:`_UPDATES`); ``f`` for apply."""
        op, update = _OP_NAMES[method], _UPDATES[method]
        x = self._x
        scatter_mode = (  # JAX's default for updates: drop
            _DROP if mode is None else _scatter_mode(op, mode, jax_names=True)
        )
        lowering = self._lowered(op, y)
        backend, plan = lowering.backend, lowering.plan
        kinds = update.kinds
        if kinds is not None and not _of_kinds(backend, x.dtype, kinds):
            raise type_error(op, "x.dtype", str(x.dtype), f"a dtype of kind {' or '.join(kinds)}")
        in_place = writes_in_place(backend, op, x, copy, name="x")
        if indices_are_sorted is not False:  # (the defaults need no call)
            as_flag(op, "indices_are_sorted", indices_are_sorted)
        if unique_indices is not False:
            unique_indices = as_flag(op, "unique_indices", unique_indices)
        updates = _updates(op, backend, x, y, plan.result_shape, update.negate)
        if method == "power" and backend.has_kind(x.dtype, "signed integer"):
            updates = _non_negative_exponents(op, backend, y, updates)
        computation = f if f is not None else update.computation
        if computation in _XP_COMBINERS:
            computation = backend.elementwise(_XP_COMBINERS[computation])
        elif f is not None:  # checked on each call, its errors naming f
            computation = resolve(op, backend.xp, f, name="f").fn
        rows = self._idx
        if lowering.element_combines and type(computation) in _NAMED_FORMS:
            how = _ELEMENT_COMBINES.get(computation, _OTHER)
            if how in lowering.element_combines:
                written = _combine_elements(backend, x, rows, updates, how, in_place)
                if written is not None:
                    return written
        if lowering.last_row is not None and type(computation) in _NAMED_FORMS:
            if lowering.rows_in_one_pass:
                write = _row_write(lowering, x, rows, computation)  # type: ignore[arg-type]
                written = write.in_one_pass(x, rows, updates, in_place, scatter_mode)
                if written is not None:
                    return written
            distinct: bool | None
            counted = backend.few_rows_from_end(rows, lowering.last_row + 1)
            if counted is not None:  # a few rows, read once: in range once counted from the end
                rows, distinct = counted
            else:
                distinct = backend.distinct_in_range(rows, lowering.last_row)
            if distinct is not None:  # in range: nothing to drop or clip
                write = _row_write(lowering, x, rows, computation)  # type: ignore[arg-type]
                return write(x, rows, updates, in_place, unique_indices or distinct)
        own_key = lowering.updates_basic
        if own_key is not None:  # (index arrays: the core resolves the combiner)
            combiner = (
                resolve(op, backend.xp, computation)
                if callable(computation)
                else _named_combiner(op, backend.xp, computation)
            )
            if _own_arithmetic(backend, x.dtype, combiner):
                return _write_basic(backend, own_key, x, updates, combiner, in_place)
        named_form = type(computation) in _NAMED_FORMS
        unique_indices = unique_indices or lowering.selects_once
        starts, in_range, plan, from_end = lowering(x, self._idx, core_from_end=named_form)
        if in_range:  # checked here: nothing to drop or clip
            scatter_mode = _WRITE_PROMISED
        if lowering.keeps_core and named_form:
            # at's signature pins the scatter's but for these (y: a Dask x's NumPy array)
            options = (
                computation,
                scatter_mode,
                unique_indices,
                type(updates),
                plan.batching_pairs,
                from_end,
            )
            named = cast("str | None", computation)
            attributes = plan.scatter_attributes
            run = kept_in(
                lowering.core,
                options,
                lambda: scatter_executor(
                    x, starts, updates, attributes, named, scatter_mode, unique_indices, from_end
                ),
            )
            return cast(Array, run(x, starts, updates, copy))
        return scatter(
            x,
            starts,
            updates,
            update_window_dims=plan.offset_dims,
            inserted_window_dims=plan.collapsed_dims,
            scatter_dims_to_operand_dims=plan.start_map,
            index_vector_dim=plan.index_vector_dim,
            input_batching_dims=plan.operand_batching_dims,
            scatter_indices_batching_dims=plan.index_batching_dims,
            update_computation=computation,
            mode=scatter_mode,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            copy=copy,
        )


# (backend, dtype's type, dtype, kinds) -> whether the dtype is of one of the kinds: a dict
# lookup on every call (an lru_cache behind torch's compile check costs twice as much); the
# dtype's type first, so that dtypes of different libraries are never compared
_DTYPE_KINDS: dict[tuple[Backend, type, Any, tuple[str, ...]], bool] = {}


def _of_kinds(backend: Backend, dtype: Any, kinds: tuple[str, ...]) -> bool:
    """Whether ``dtype`` is of one of ``kinds``, found once per backend and dtype."""
    key = (backend, type(dtype), dtype, kinds)
    try:
        return _DTYPE_KINDS[key]
    except KeyError:
        found = any(backend.has_kind(dtype, kind) for kind in kinds)
        if not torch_is_compiling():  # (Dynamo cannot replay an insert of the backend)
            _DTYPE_KINDS[key] = found  # an atomic insert; dtypes and kinds are few
        return found
    except TypeError:  # an unhashable dtype object
        return any(backend.has_kind(dtype, kind) for kind in kinds)


@static_cache()
def _named_combiner(op: str, xp: Any, computation: str | None) -> Combiner:
    """:func:`resolve` of a named combiner (or None), once per library."""
    return resolve(op, xp, computation)


def _updates(
    op: str, backend: Backend, x: Array, y: Any, shape: tuple[int, ...], negate: bool
) -> Array:
    """``y`` broadcast to ``shape`` in x's dtype: an array that casts to it within its
    kind (NumPy's ``same_kind``), or a Python scalar that x's dtype holds."""
    if type(y) is type(x) and y.shape == shape and y.dtype == x.dtype and not negate:
        return y  # the common call: nothing to check, cast or broadcast
    xp = backend.xp
    if is_array(y):
        if type(y) is not type(x):
            backend_for(op, x=x, y=y)  # one library
        if y.ndim > len(shape):
            y = _without_leading_ones(backend, y, len(shape))
        y_shape = tuple(y.shape)
        if y_shape != shape and not _broadcasts(y_shape, shape):
            raise value_error(
                op, "y.shape", y_shape, f"a shape that broadcasts to x[idx]'s {shape}"
            )
        if y.dtype != x.dtype:
            if not (casts_in_kind(backend, y.dtype, x.dtype) or _weak_int(backend, y, x)):
                raise type_error(
                    op,
                    "y.dtype",
                    str(y.dtype),
                    f"x's dtype ({x.dtype}) or one that casts to it within its kind, as "
                    "NumPy's same_kind: bool < unsigned < signed integers < real < complex "
                    "floating, each into its own or a later kind (a weakly typed JAX "
                    "integer, a Python int's, into unsigned ones too)",
                )
            y = backend.astype(y, x.dtype)
    else:
        if type(y) is bool and not backend.has_kind(x.dtype, "bool"):
            y = int(y)  # True is 1, as NumPy and JAX cast it
        y = backend.full((), check_scalar(op, "y", y, backend, x.dtype), x.dtype, x)
    if negate:
        y = backend.negative(y)
        if not shape:  # broadcast_to makes NumPy's 0-d result (a scalar) an array again
            return xp.broadcast_to(y, shape)
    return y if y.shape == shape else xp.broadcast_to(y, shape)


def _weak_int(backend: Backend, y: Array, x: Array) -> bool:
    """Whether ``y`` is a weakly typed signed integer and ``x`` unsigned: a Python int's
    array in JAX (a traced one under ``jit``), which JAX casts into any integer type
    without its warning, as a Python int is cast (whose value is checked where known)."""
    return (
        backend.weakly_typed(y)
        and backend.has_kind(y.dtype, "signed integer")
        and backend.has_kind(x.dtype, "unsigned integer")
    )


# -- executors per index-expression signature ----------------------------------------------

_NAMED_FORMS = frozenset({str, type(None)})  # combiners the core keeps executors for
_ARRAY = ("array",)  # an index array's place in a signature (its facts follow the static ones)
_PLAIN_BOUNDS = frozenset({int, type(None)})
# the first entries of the flat signatures of one index array, and of a tuple of index
# arrays, of x's type (no other signature starts with them): one tuple, not one per array
# (one array's built and hashed in 0.52 us, not 0.63)
_ROWS_OF_X = "at: one index array of x's type"
_ARRAYS_OF_X = "at: a tuple of index arrays of x's type"
_ROWS = "rows"  # the key of a row writer (_RowWrite) among a lowering's core executors


def _index_signature(x: Array, idx: Any) -> tuple[Any, ...] | None:
    """What the lowering of ``idx`` on ``x`` depends on: its ints, slices, ``None`` and
    ``...`` by value, and each index array's type, shape, dtype and device, with ``x``'s.

    None (lowered on every call) for anything else: Python bools (0-d masks);
    sequences; arrays of another library; NumPy integers, floats and bools, which compare
    equal to ints. Boolean arrays, whose values set the plan too, have a signature that
    is never kept: their dtypes are asked only where a signature is missed
    (:meth:`At._lowered`)."""
    kind = type(x)
    try:  # one array, or a tuple of arrays, of x's type: the common calls, keyed flat
        if type(idx) is kind:
            return (_ROWS_OF_X, kind, x.shape, x.dtype, x.device, idx.shape, idx.dtype, idx.device)
        if type(idx) is tuple:
            flat = [_ARRAYS_OF_X, kind, x.shape, x.dtype, x.device]
            for item in idx:
                if type(item) is not kind:
                    break
                flat += (item.shape, item.dtype, item.device)
            else:
                return tuple(flat)
    except AttributeError:  # (Dask's arrays have no device): the general form
        pass
    items = idx if type(idx) is tuple else (idx,)
    static: list[Any] = [OP, type(idx) is tuple]
    arrays = []
    for item in items:
        item_kind = type(item)
        if item_kind is int or item is None or item is Ellipsis:
            static.append(item)
        elif item_kind is slice:
            bounds = (item.start, item.stop, item.step)
            if not _PLAIN_BOUNDS.issuperset(map(type, bounds)):
                return None
            static.append(bounds)
        elif item_kind is kind:
            static.append(_ARRAY)
            arrays.append(item)
        else:
            return None
    return signature(tuple(static), x, *arrays)


def _has_mask(x: Array, idx: Any) -> bool:
    """Whether ``idx`` is, or holds, a boolean array of ``x``'s type."""
    items = idx if type(idx) is tuple else (idx,)
    return any(type(item) is type(x) and _is_bool(item.dtype) for item in items)


# (dtype's type, dtype) -> whether it is bool (str costs microseconds); the type first, so
# that dtypes of different libraries are never compared
_BOOL_DTYPES: dict[tuple[type, Any], bool] = {}


def _is_bool(dtype: Any) -> bool:
    key = (type(dtype), dtype)
    try:
        return _BOOL_DTYPES[key]
    except KeyError:
        found = _BOOL_DTYPES[key] = str(dtype).endswith("bool")  # an atomic insert
        return found
    except TypeError:  # an unhashable dtype object
        return str(dtype).endswith("bool")


class _Lowering:
    """An index expression validated and planned for one signature: the backend, the
    plan, the library's own key where the expression is basic (NumPy and torch), and,
    where the lowering is not kept, the index arrays it found (a mask's positions).
    Called with a call's ``x`` and ``idx``, it gives the start indices, whether the
    host found them all in range (:func:`start_indices`) and the plan they are for: the
    lowering's, or its form with batching dims where index arrays count along one axis
    (:func:`counting_dims`)."""

    __slots__ = (
        "arrays",
        "backend",
        "basic",
        "checked_take",
        "core",
        "element_combines",
        "elements",
        "fills_in_gather",
        "last_row",
        "plan",
        "rows_in_one_pass",
        "selects_once",
        "updates_basic",
        "values_first",
    )

    def __init__(
        self,
        backend: Backend,
        plan: IndexPlan,
        basic: BasicIndex | None,
        arrays: list[Array] | None,
        updates_basic: BasicIndex | None = None,
        last_row: int | None = None,
        elements: bool = False,
        element_combines: frozenset[Named | None] = frozenset(),
    ) -> None:
        self.backend, self.plan, self.basic, self.arrays = backend, plan, basic, arrays
        # where idx is a tuple of index arrays, one per dim of x, selecting few elements:
        # whether the library's own step reads them, and the combiners its own step
        # writes, where every entry is in range (Backend.take_elements, combine_elements),
        # before any lowering to the core
        self.elements, self.element_combines = elements, element_combines
        # x's last row where idx is one array of rows that the library's own indexing
        # reads as at does when every row is in range (see _read_rows), and that the
        # core's row writer writes directly then (see _RowWrite)
        self.last_row = last_row
        # whether those rows' updates are large enough for the row writer's one pass,
        # which places each row itself (RowWriter.in_one_pass): no range check first
        self.rows_in_one_pass = last_row is not None and backend.applies_rows_in_order(
            math.prod(plan.result_shape)
        )
        # the library's own key for updates only: a boolean mask of whole wide rows
        self.updates_basic = basic if updates_basic is None else updates_basic
        # no index array, so no element twice: the scatter's indices are unique (JAX then
        # differentiates mul and a function: its scatter_mul of possible repeats, and a
        # loop of passes, it cannot)
        self.selects_once = plan.selects_once
        # whether the backend's checked reads of these rows or elements (whose own check
        # may raise slowly: torch's) read the values on the host first; set once a read
        # took nothing (an entry outside), so a signature pays that raise once
        self.values_first = False
        # the backend's checked read of x[rows] for reads of this size where it is not
        # take_rows_checked itself (NumPy's of large ones: into kept memory)
        self.checked_take = backend.checked_row_take(plan.result_size)
        # whether a read with mode="fill" always reaches the core gather's executor made
        # for at.get, whose check of fill_value names at.get (the other reads check it first)
        self.fills_in_gather = arrays is None and basic is None
        self.fills_in_gather &= not (plan.empty_dims or elements)
        # the core op's executor per call options (mode, combiner, ...), for a kept
        # lowering: its signature pins the types, shapes, dtypes and devices of the core
        # call's arrays, so the core's own signature and validation are skipped
        self.core: dict[Any, Executor] = {}

    @property
    def keeps_core(self) -> bool:
        """Whether calls look up the core op's executor in :attr:`core`."""
        return self.arrays is None

    def __call__(
        self, x: Array, idx: Any, core_from_end: bool = False
    ) -> tuple[Array, bool, IndexPlan, bool]:
        arrays = self.arrays
        if arrays is None:  # a kept lowering: the arrays are the items of x's type
            items = idx if type(idx) is tuple else (idx,)
            arrays = [item for item in items if type(item) is type(x)]
        plan = self.plan
        counting = counting_dims(self.backend, plan, arrays, x)
        if counting:  # (x[rows[:, None], idx]: an element gather or scatter, no stack)
            plan = with_batching(plan, counting)
        # an element read or write of a kept lowering whose core executor may count
        # negative indices from the end (core_from_end): the loop does, not a pass here
        from_end = core_from_end and bool(counting) and self.keeps_core
        from_end = from_end and _one_index_array(plan)
        starts, in_range = start_indices(self.backend, plan, arrays, x, not from_end)
        return starts, in_range, plan, from_end


def _one_index_array(plan: IndexPlan) -> bool:
    """Whether ``plan``'s one start column is an index array whose negative entries
    count from the end."""
    return len(plan.columns) == 1 and plan.columns[0].wrap is not None


_OWN_SLICING = {"numpy": True, "torch": False}  # libraries whose slicing at runs, and
# whether it takes negative steps


def _lower(op: str, x: Array, idx: Any, cached: bool) -> _Lowering:
    """Validate and plan ``idx`` on ``x``; keep its arrays unless the lowering is cached."""
    backend = backend_for(op, x=x)
    parts, arrays = parse_index(op, backend, x, idx)
    names = ["idx"] if len(arrays) == 1 else [f"idx (array {k})" for k in range(len(arrays))]
    backend.check_arrays(op, {"x": x, **dict(zip(names, arrays))})  # x's type skips backend_for
    plan = index_plan(op, tuple(x.shape), parts)
    negative_steps = _OWN_SLICING.get(backend.name)
    basic = None
    if negative_steps is not None and not plan.empty_dims:
        basic = basic_index(op, tuple(x.shape), parts, negative_steps)
    rows = None if cached else _row_mask(backend, x, idx)
    one_array = cached and negative_steps is not None and type(idx) is type(x)
    last_row = None  # (torch reads a uint8 array as a mask: the index dtype only)
    if one_array and idx.ndim and idx.dtype == backend.index_dtype():
        last_row = x.shape[0] - 1
    elements: bool = False
    combines: frozenset[Named | None] = frozenset()
    if cached and _element_tuple(backend, x, idx):
        count = math.prod(plan.result_shape)
        elements, combines = backend.takes_elements(count), backend.element_combines(count)
    arrays_kept = None if cached else arrays
    return _Lowering(backend, plan, basic, arrays_kept, rows, last_row, elements, combines)


def _element_tuple(backend: Backend, x: Array, idx: Any) -> bool:
    """Whether ``idx`` is a tuple of index arrays of ``x``'s type and the index dtype,
    one per dim of ``x``: it selects elements, ``x[idx]`` of the library's own indexing."""
    index_dtype = backend.index_dtype()
    return (
        type(idx) is tuple
        and len(idx) == x.ndim > 0
        and all(type(item) is type(x) and item.dtype == index_dtype for item in idx)
    )


# Updates through a boolean mask of rows of at least this many elements, in an x of at
# most that many, run as NumPy's own boolean indexing (x[mask] = f(x[mask], y)); narrower
# rows, and bigger arrays, are faster as a scatter of the mask's positions
# (benchmarks/HISTORY.md, "Thresholds of the host paths")
ROW_MASK_MIN_WIDTH = 32
ROW_MASK_MAX_ELEMENTS = 2**20


def _row_mask(backend: Backend, x: Array, idx: Any) -> BasicIndex | None:
    """``idx`` as NumPy's own key for updates where it is one boolean array over the
    leading dims of ``x`` (shape checked) whose rows hold :data:`ROW_MASK_MIN_WIDTH`
    elements or more, in an ``x`` of at most :data:`ROW_MASK_MAX_ELEMENTS`: each row is
    written once, so the library's own ``x[mask] =`` is exact."""
    if backend.name != "numpy" or type(idx) is not type(x) or idx.dtype != bool:
        return None
    rank = idx.ndim
    if not 0 < rank < x.ndim or tuple(idx.shape) != tuple(x.shape[:rank]):
        return None
    if math.prod(x.shape[rank:]) < ROW_MASK_MIN_WIDTH or x.size > ROW_MASK_MAX_ELEMENTS:
        return None
    return BasicIndex((idx, Ellipsis), ())


def _read_rows(lowering: _Lowering, x: Array, rows: Array) -> Array | None:
    """``x[rows]`` (a new array) where one native step reads it checking every row
    (NumPy's take; torch's own indexing of up to :data:`LIST_ENTRIES` rows: negative rows
    from the end, as the core's gather counts them), or where :func:`_rows_in_range`;
    else None. More rows by the backend's row take, faster there: 3-4x on torch from 256
    rows (benchmarks/README.md, "Issue 35: a repeated `get` of one array of rows, at
    several sizes")."""
    backend = lowering.backend
    take = lowering.checked_take
    if take is None:
        taken = backend.take_rows_checked(x, rows, lowering.values_first)
    else:
        taken = take(x, rows, lowering.values_first)
    if taken is not None:
        return taken
    _took_nothing(lowering, rows)
    last_row = cast(int, lowering.last_row)
    if math.prod(rows.shape) <= LIST_ENTRIES or not _rows_in_range(backend, last_row, rows):
        return None
    if rows.ndim == 1:
        return backend.take_rows(x, rows)
    taken = backend.take_rows(x, backend.reshape(rows, (-1,)))
    return backend.reshape(taken, (*rows.shape, *x.shape[1:]))


def _took_nothing(lowering: _Lowering, *index: Array) -> None:
    """Where the backend's checked read of ``index`` took nothing though its values are
    on the host (an entry outside, or more than the step reads), the lowering's reads
    find their values first from then on (:attr:`_Lowering.values_first`)."""
    if all(lowering.backend.values_on_host(array) for array in index):
        lowering.values_first = True


def _rows_in_range(backend: Backend, last_row: int, rows: Array) -> bool:
    """Whether the host finds every entry of the index array ``rows`` in ``[0, last_row]``
    (False where its values are not on the host): then no mode has anything to clip,
    fill or drop, and no entry counts from the end."""
    return backend.values_on_host(rows) and backend.all_in_range(rows, last_row)


def _row_write(lowering: _Lowering, x: Array, rows: Array, computation: str | None) -> _RowWrite:
    """The lowering's :class:`_RowWrite` of ``computation``, made on its first call."""
    key = (_ROWS, computation)
    found: Any = lowering.core.get(key)  # (a repeat makes no builder, nor calls cast)
    if found is None:
        found = kept_in(
            lowering.core, key, lambda: _RowWrite(lowering.backend, x, rows, computation)
        )
    return found


class _RowWrite:
    """The executor of updates at one array of rows (the index dtype), for arrays of
    the signature of ``x`` and ``rows``, prepared once: the rows and updates, seen as
    rows of a 2-D view, go to the core's row writer (:class:`RowWriter`: duplicates in
    order, updates read before the write, copies and autograd as every scatter's) with
    the scatter's combiner and its errors (:func:`combiner_for`); neither start indices
    nor target rows are made. ``write(x, rows, updates, in_place, unique)`` takes rows
    in range (:func:`_rows_in_range`); :meth:`in_one_pass` any rows, where the writer's
    one pass takes them."""

    __slots__ = ("backend", "count", "direct", "put", "shaped", "values_shape")

    def __init__(self, backend: Backend, x: Array, rows: Array, computation: str | None):
        combiner = combiner_for(backend, x.dtype, computation)
        self.count, width = math.prod(rows.shape), math.prod(x.shape[1:])
        self.values_shape = (self.count, width)
        self.backend = backend
        self.put = RowWriter(
            backend, x.dtype, (int(x.shape[0]), width), self.count, combiner, x.shape
        )
        self.direct = self.put.direct
        self.shaped = x.ndim == 2 and rows.ndim == 1  # the arrays are in the writer's shapes

    def __call__(
        self, x: Array, rows: Array, updates: Array, in_place: bool, unique: bool
    ) -> Array:
        if not self.shaped:
            rows, updates = self._shaped(rows, updates)
        if unique and self.direct:  # (updates are of x's dtype: _updates casts them)
            written = self.put.write_distinct(x, rows, updates, in_place)
            if written is not None:
                return written
        return self.put(x, rows, updates, in_place=in_place, unique=unique)

    def in_one_pass(
        self, x: Array, rows: Array, updates: Array, in_place: bool, mode: ScatterMode
    ) -> Array | None:
        """The write by the row writer's one pass (:meth:`RowWriter.in_one_pass`), rows
        counted from the end as NumPy's and each placed by ``mode``, where it takes
        them; else ``None``, nothing written."""
        if self.put.one_pass is None:
            return None
        if not self.shaped:
            rows, updates = self._shaped(rows, updates)
        return self.put.in_one_pass(x, rows, updates, in_place, outside=mode.outside, wrap=True)

    def _shaped(self, rows: Array, updates: Array) -> tuple[Array, Array]:
        reshape = self.backend.reshape
        return reshape(rows, (self.count,)), reshape(updates, self.values_shape)


def _read_basic(backend: Backend, basic: BasicIndex, x: Array) -> Array:
    """``x[idx]`` for a basic ``idx``, by the library's own slicing, as a new array."""
    view = x[basic.key]
    if basic.flips:
        return backend.flipped(view, basic.flips)
    return backend.copy(view)


# at's combiners that Backend.combine_elements may take (None: set; subtract is an add of
# -y), and what the others give
_ELEMENT_COMBINES: dict[Any, Named | None] = {  # (Any: a callable gets _OTHER)
    None: None,
    "add": Named.ADD,
    "mul": Named.MUL,
    "min": Named.MIN,
    "max": Named.MAX,
}
_OTHER = object()


def _combine_elements(
    backend: Backend,
    x: Array,
    index: tuple[Array, ...],
    values: Array,
    how: Named | None,
    in_place: bool,
) -> Array | None:
    """``x`` (in place) or a copy with ``values`` combined into the elements ``x[index]``
    by the library's own step (:meth:`~indexops._backends.Backend.combine_elements`),
    where it takes them and nothing is for autograd to record; else ``None``, nothing
    written. The index arrays and values are read before anything is written."""
    if backend.records_gradient(x, values):
        return None
    if in_place:
        *read, values = read_before_writing(backend, x, *index, values)
        index = tuple(read)
    return backend.combine_elements(x, index, values, how, copy=not in_place)


def _write_basic(
    backend: Backend, basic: BasicIndex, x: Array, y: Array, combiner: Combiner, in_place: bool
) -> Array:
    """``x[idx] = combiner(x[idx], y)`` for a basic ``idx`` (no element repeats), by the
    library's own slicing; ``y`` is read before anything is written."""
    xp = backend.xp
    out = x if in_place else backend.copy(x)
    if basic.flips:  # the key takes the elements in increasing order: so must y
        y = backend.flipped(y, basic.flips)
    if combiner.fn is None:
        if in_place and backend.shares_memory(y, out):
            y = backend.copy(y)
        out[basic.key] = y
        return out
    augmented = _AUGMENTED.get(combiner.named)
    if augmented is not None and not (in_place and backend.shares_memory(y, out)):
        out[basic.key] = augmented(out[basic.key], y)  # x[idx] += y: into the view
        return out
    function = _OPERATORS.get(combiner.named, combiner.fn)
    old = out[basic.key]
    if backend.records_gradient(out, y):  # autograd keeps old and y for the backward
        old = backend.copy(old)  # pass: the write below must change neither
        if backend.shares_memory(y, out):
            y = backend.copy(y)
    new = function(old, y)  # a new array: y is read before the write
    out[basic.key] = new if new.dtype == x.dtype else xp.astype(new, x.dtype)
    return out


# The array's own operators for the named combiners of y in x's dtype: the standard's
# functions cost more where array-api-compat wraps them (torch's add: 3 us of 14); their
# augmented forms write into the view x[idx] (no new array: torch's sliced add 4.9 us
# against 5.9) where y cannot share its memory (a functional call's copy, or a y apart)
_OPERATORS: dict[Named | None, Callable[[Any, Any], Any]] = {
    Named.ADD: operator.add,
    Named.MUL: operator.mul,
}
_AUGMENTED: dict[Named | None, Callable[[Any, Any], Any]] = {
    Named.ADD: operator.iadd,
    Named.MUL: operator.imul,
}


# min and max: the core's scatter gives IEEE-754 signed zeros, which the library's own
# minimum and maximum may not
_SIGNED_ZEROS = (Named.MIN, Named.MAX)
# libraries without arithmetic on unsigned integers wider than 8 bits (torch's add)
_NARROW_UNSIGNED_ONLY = frozenset({"torch"})


def _own_arithmetic(backend: Backend, dtype: Any, combiner: Combiner) -> bool:
    """Whether the library's own slicing and elementwise ``combiner`` do the update."""
    if combiner.fn is None:
        return True
    if combiner.named in _SIGNED_ZEROS:
        return False
    return backend.name not in _NARROW_UNSIGNED_ONLY or not (
        backend.has_kind(dtype, "unsigned integer") and backend.iinfo(dtype).bits > 8
    )


_NON_NEGATIVE = (
    "exponents of 0 or more for an integer x: an integer to a negative power is no "
    "integer (NumPy refuses it; torch and JAX would write a wrong value); use a floating x"
)


def _non_negative_exponents(op: str, backend: Backend, y: Any, updates: Array) -> Array:
    """``updates``, the exponents of ``power`` into a signed integer ``x``, checked: a
    Python scalar when the call is made (everywhere), an array by one reduction where its
    values are on the host (NumPy, torch on the CPU), both before anything is written.
    Elsewhere a negative entry is reported the library's way (a torch device-side assert,
    JAX's ``checkify``, an error when Dask computes) and the library's value is written."""
    if not is_array(y):
        if y < 0:
            raise value_error(op, "y", y, _NON_NEGATIVE)
        return updates
    xp = backend.xp
    if backend.values_on_host(updates):
        if not backend.all_in_range(updates, int(backend.iinfo(updates.dtype).max)):
            lowest = int(xp.min(updates))
            raise value_error(op, "y", f"an array holding {lowest}", _NON_NEGATIVE)
        return updates
    negative = xp.reshape(updates < 0, (-1,))
    backend.check_on_device(~xp.any(negative), f"{op}: y has a negative entry; {_NON_NEGATIVE}")

    def error(position: int, value: int) -> Exception:
        return value_error(op, f"y (entry {position} of x[idx])", value, _NON_NEGATIVE)

    return backend.raise_lazily(updates, negative, xp.reshape(updates, (-1,)), error)


def _without_leading_ones(backend: Backend, y: Array, rank: int) -> Array:
    """``y`` without the leading dims of size 1 beyond ``rank``, which NumPy's assignment
    drops (``x[:2] = ones((1, 1, 2))``); other leading dims stay (and fail to broadcast)."""
    extra = y.ndim - rank
    if any(n != 1 for n in y.shape[:extra]):
        return y
    return backend.reshape(y, tuple(y.shape[extra:]))


def _broadcasts(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether NumPy broadcasting takes ``shape`` to ``target``."""
    if len(shape) > len(target):
        return False
    return all(n in (1, m) for n, m in zip(shape, target[len(target) - len(shape) :]))


def _empty_read(op: str, backend: Backend, x: Array, plan: IndexPlan) -> Array:
    """``x[idx]`` where an index array stands on a dim of size 0: empty, or an error."""
    if plan.result_size:
        raise value_error(
            op,
            "idx",
            f"index arrays that select {plan.result_size} elements",
            f"none: x has size 0 on dims {plan.empty_dims}, so there is nothing to read",
        )
    return backend.keeps_graph(backend.full(plan.result_shape, 0, x.dtype, x), x)
