"""The writes of every op into its input: rows of a 2-D view, in memory or chunk by chunk,
into the input itself or into a copy, with updates read before anything is written."""

from __future__ import annotations

from .._backends import Backend
from .._plan.executors import Executor
from .._typing import Array
from .._validate.arguments import writes_in_place
from .._validate.combiners import Combiner
from .rows import put_rows, signed_zero_fixes


def write_rows(
    backend: Backend,
    x: Array,
    rows_shape: tuple[int, int],
    rows: Array,
    values: Array,
    combiner: Combiner,
    *,
    in_place: bool,
    keep: Array | None = None,
    unique: bool = False,
) -> Array:
    """Put rows into ``x`` seen as a 2-D array of ``rows_shape``; the result has x's shape.

    ``rows`` (1-D, index dtype) are in range wherever ``keep`` is True (or everywhere
    without ``keep``), ``values`` is ``[len(rows), rows_shape[1]]``. With
    ``in_place=True`` the result is ``x`` itself, written even where the 2-D view had to
    be a copy; otherwise ``x`` is left untouched. ``rows`` and ``values`` may view ``x``:
    the result is that of their values before the call. ``unique=True`` promises that no
    row repeats among the kept entries. A :class:`RowWriter` made for the call (an
    executor keeps one instead).
    """
    writer = RowWriter(backend, x.dtype, rows_shape, rows.shape[0], combiner, x.shape)
    return writer(x, rows, values, in_place=in_place, keep=keep, unique=unique)


class RowWriter:
    """:func:`write_rows` prepared for one signature: arrays ``x`` of one dtype and
    ``shape``, seen as ``rows_shape``, ``count`` rows written with one combiner, on one
    backend.

    What depends on those alone is decided once, here: whether anything is written;
    whether the library writes chunk by chunk; for min and max, whether zero results
    need IEEE-754's signs fixed (:func:`~indexops._execute.rows.signed_zero_fixes`);
    whether rows known to be distinct go straight to the library's one native write
    (:attr:`direct`, :meth:`~indexops._backends.Backend.write_distinct_rows`: small
    writes, which no compiled kernel takes, where autograd records nothing); whether the
    rows are so few that :meth:`write_few` reads them as one list to find them distinct
    itself (:attr:`few`); whether ``x`` is its own 2-D view (:attr:`is_table`); and
    whether the library makes a functional call's copy and writes it in one call
    (:attr:`copies`, :meth:`~indexops._backends.Backend.distinct_rows_copied`); and
    whether the writes are large enough for the backend's one pass that places each row
    as it goes, unchecked rows included (:attr:`one_pass`, :meth:`in_one_pass`). A call
    does only what its values decide: copies of the updates that view ``x``, the copy of
    a functional call (or of autograd's), the write. Immutable once made, so one writer
    serves many threads.
    """

    __slots__ = (
        "backend",
        "combiner",
        "copies",
        "count",
        "direct",
        "dtype",
        "empty",
        "few",
        "is_table",
        "one_pass",
        "passes",
        "rows_shape",
        "signed_zeros",
    )

    def __init__(
        self,
        backend: Backend,
        dtype: object,
        rows_shape: tuple[int, int],
        count: int,
        combiner: Combiner,
        shape: tuple[int, ...],
    ) -> None:
        self.backend, self.rows_shape, self.combiner = backend, rows_shape, combiner
        self.is_table = tuple(shape) == rows_shape  # x is its own 2-D view
        self.empty = 0 in (count, *rows_shape)
        self.signed_zeros = signed_zero_fixes(backend, dtype, combiner)
        self.dtype = dtype
        self.direct = (
            not self.empty
            and (combiner.replaces or combiner.named is not None)
            and backend.writes_distinct_rows(dtype, combiner.named, count, rows_shape[1])
        )
        self.count = count
        # a user's function, applied pass by pass where rows repeat (see _into_a_copy)
        self.passes = combiner.named is None and not combiner.replaces
        self.few = self.direct and count <= backend.few_entries
        self.copies = (
            self.direct
            and self.is_table
            and backend.copies_distinct_rows(dtype, combiner.named, rows_shape)
        )
        in_order = not self.empty and (combiner.replaces or combiner.named is not None)
        self.one_pass = (
            backend.row_pass(combiner.named, count * rows_shape[1]) if in_order else None
        )

    def __call__(
        self,
        x: Array,
        rows: Array,
        values: Array,
        *,
        in_place: bool,
        keep: Array | None = None,
        unique: bool = False,
    ) -> Array:
        """Write ``values`` at ``rows`` (see :func:`write_rows`). A replace of a few rows
        on the host that repeat writes the last write of each row, as distinct rows."""
        backend = self.backend
        if (
            self.direct
            and (unique or self.combiner.replaces)
            and keep is None
            and values.dtype == self.dtype
        ):
            if not unique:
                last = self._last_writes(rows, values)
                if last is not None:
                    (rows, values), unique = last, True
            if unique:
                written = self.write_distinct(x, rows, values, in_place)
                if written is not None:
                    return written
        if self.empty:
            return _nothing_written(backend, x, values, in_place)
        if backend.chunked:  # Dask, imported only once its arrays are seen
            from .chunked import scatter_rows

            return scatter_rows(
                x, self.rows_shape, rows, values, self.combiner, keep, backend.chunks_generic
            )
        if in_place:
            rows, values = read_before_writing(backend, x, rows, values)
        copied = _into_a_copy(backend, x, values, in_place, self.passes and not unique)
        work = backend.copy(x) if copied else x
        table = backend.reshape(work, self.rows_shape)
        source = None if in_place else x  # read only
        written = put_rows(
            backend, table, rows, values, self.combiner, keep, unique, source, self.signed_zeros
        )
        if not in_place:
            result = backend.reshape(written, x.shape)
            return result if result is not x else backend.copy(x)
        return _into_x(backend, x, written, copied)

    def in_one_pass(
        self,
        x: Array,
        rows: Array,
        values: Array,
        in_place: bool,
        *,
        outside: str,
        wrap: bool = False,
    ) -> Array | None:
        """For a writer with a :attr:`one_pass`: the write of ``values`` (``count`` rows, in the
        writer's shapes) at ``rows`` (1-D, the index dtype, not checked: the pass places
        each row, ``wrap`` and ``outside`` as in
        :meth:`~indexops._backends.Backend.apply_rows_in_order`), where the backend's one
        pass (:attr:`one_pass`) takes it and nothing is for autograd to record: into a
        copy, or into ``x`` where its 2-D view is ``x``'s memory (where that view is a
        copy, as of a strided ``x``, a functional call writes the copy). A row that stops
        the pass (``"stop"``, ``"padding"``) raises its :class:`IndexError` before
        anything of ``x`` is written. Else ``None``, nothing written: the caller checks the
        rows and calls the writer. The caller's checks of the rows' range, the masks of
        rows to drop and the search for repeats are all left out: the pass applies the
        rows in order."""
        one_pass = self.one_pass
        if one_pass is None:
            return None
        backend = self.backend
        if backend.records_gradient(x, values):
            return None
        table = backend.reshape(x, self.rows_shape)
        views_x = self.is_table or backend.shares_memory(table, x)  # else: a copy of x
        if in_place and not views_x:
            return None
        written = one_pass(
            table, rows, values, wrap=wrap, outside=outside, copy=views_x and not in_place
        )
        if written is None or in_place:
            return None if written is None else x
        return backend.reshape(written, x.shape)

    def write_few(self, x: Array, index: Array, values: Array, in_place: bool) -> Array | None:
        """The write of ``values`` (``count`` rows, any shape of that size) at the rows
        ``index`` holds (``count`` integers, any shape), where the host reads the rows as
        one list (:attr:`few` writers) and finds them in the table: distinct ones in the
        direct step where nothing is for autograd to record and no zero has a sign for
        min or max to fix, the others by :meth:`__call__`, as the op's executor writes
        rows in range (repeats in order). Else ``None``, with nothing read but that list
        and nothing written: the caller takes its general path. One layer for the ops
        whose rows are their index (``scatter`` of one start dim, ``scatter_update``):
        their commonest small call. ``values`` must have ``x``'s dtype (those ops'
        signatures and validation fix it)."""
        backend = self.backend
        found = backend.few_rows_in_range(index, self.rows_shape[0] - 1)
        if found is None:
            return None
        rows, distinct = found
        values = backend.reshape(values, (self.count, self.rows_shape[1]))
        if distinct:
            written = self.write_distinct(x, rows, values, in_place)
            if written is not None:
                return written
        if self.one_pass is not None:  # (the executor's one pass comes before its other ways)
            return None
        return self(x, rows, values, in_place=in_place, unique=distinct)

    def _last_writes(self, rows: Array, values: Array) -> tuple[Array, Array] | None:
        """The entries of ``rows`` that write their row last, and their ``values``, in
        their order (what replacing the rows one by one leaves), where the rows are few
        and on the host: read as one list; else ``None``, nothing read."""
        backend = self.backend
        listed = backend.few_on_host(rows)
        if listed is None:
            return None
        latest = {row: k for k, row in enumerate(listed)}
        if len(latest) == len(listed):
            return rows, values
        kept = backend.ints(sorted(latest.values()), backend.index_dtype(), rows)
        return backend.take_rows(rows, kept), backend.take_rows(values, kept)

    def write_distinct(self, x: Array, rows: Array, values: Array, in_place: bool) -> Array | None:
        """For a :attr:`direct` writer: the write of ``values`` (of ``x``'s dtype, in the
        writer's shapes) at ``rows``, which the caller proved distinct and in range (or
        promised distinct: ``unique_indices``), in one native step, where nothing is
        for autograd to record and no zero update's sign needs min or max fixed; else
        ``None``, nothing written (:meth:`__call__` writes it)."""
        backend = self.backend
        if backend.records_gradient(x, values) or (
            self.signed_zeros and not _no_zero_on_host(backend, values)
        ):
            return None
        return self._distinct(x, rows, values, in_place)

    def _distinct(self, x: Array, rows: Array, values: Array, in_place: bool) -> Array:
        """The write of rows that do not repeat, where the library writes them in one
        native step (``direct``): what :meth:`__call__` gives without its questions."""
        backend = self.backend
        if not in_place:
            if self.copies:
                return backend.distinct_rows_copied(x, rows, values, self.combiner.named)
            work = backend.copy(x)
            if self.is_table:  # (no view to make and undo)
                return backend.write_distinct_rows(work, rows, values, self.combiner.named)
        else:
            rows, values = read_before_writing(backend, x, rows, values)
            if self.is_table:
                return backend.write_distinct_rows(x, rows, values, self.combiner.named)
            work = x
        table = backend.reshape(work, self.rows_shape)
        backend.write_distinct_rows(table, rows, values, self.combiner.named)
        return _into_x(backend, x, table) if in_place else backend.reshape(table, x.shape)


def few_rows_first(
    op: str,
    backend: Backend,
    writer: RowWriter,
    run: Executor,
    input: Array,
    index: Array,
    values: Array,
    copy: bool | None,
) -> Array:
    """The executor of an op whose rows are its index array (``scatter`` of one start
    dim, ``scatter_update``) for a :attr:`RowWriter.few` writer: the rows written in one
    step where :meth:`RowWriter.write_few` takes them, else ``run``, the signature's
    executor (``run(input, index, values, copy)``)."""
    in_place = writes_in_place(backend, op, input, copy)
    written = writer.write_few(input, index, values, in_place)
    return run(input, index, values, copy) if written is None else written


def _into_x(backend: Backend, x: Array, written: Array, copied: bool = False) -> Array:
    """``x`` holding ``written``, its 2-D view written in place: copied into ``x`` where
    that view was a copy (a reshape of a strided ``x``), or where the write went into a
    ``copied`` table (autograd's new arrays, a function's passes; asked first: while
    torch.compile traces, memory shared is only guessed)."""
    if written is not x and (copied or not backend.shares_memory(written, x)):
        x[...] = backend.reshape(written, x.shape)
    return x


def _no_zero_on_host(backend: Backend, values: Array) -> bool:
    """Whether ``values``, on the host, hold no zero: then no zero result of min or max
    has a sign to fix (a zero result is then the table's own). Nothing is read where
    they are not on the host (a device, tracing)."""
    return backend.values_on_host(values) and not backend.holds_zero(values)


def _nothing_written(backend: Backend, x: Array, values: Array, in_place: bool) -> Array:
    """The result of a write of no element (no updates, or a zero-size ``x``): ``x`` or
    a copy, made from ``values`` for the library's autograd all the same."""
    kept = backend.keeps_graph(x, values)
    if not in_place:
        return kept if kept is not x else backend.copy(x)
    if kept is not x:
        x[...] = kept
    return x


def _into_a_copy(
    backend: Backend, x: Array, values: Array, in_place: bool, passes: bool = False
) -> bool:
    """Whether the rows are written into a copy of ``x``, for a backend that writes into
    the table it gets: where ``x`` must stay as it is (a functional call), and in place
    where autograd records the write. The backend then writes new arrays (each tensor
    autograd keeps stays as it was), the last of which is copied into ``x``; the table
    they start from, which min's, max's and mul's backward read, must not be ``x``. In
    place too where a user's function may run in ``passes`` (rows that may repeat): each
    pass writes, and a later one may raise (the function's own error, or the library's
    check of what it returned), which must leave ``x`` as it was."""
    if not backend.writes_into_table:
        return False
    if in_place and passes:
        return True
    return in_place == backend.records_gradient(x, values)


def read_before_writing(backend: Backend, x: Array, *arrays: Array) -> tuple[Array, ...]:
    """``arrays``, each copied where it may share memory with ``x``, which is about to be
    written in place.

    An in-place op must give what applying the values read before the call gives, even
    when the updates view the array they go into (vLLM copies blocks within one cache
    this way): native scatters read them while they write, in chunks or not at all (torch
    refuses overlapping memory). One copy of the overlapping arrays makes every backend
    exact; arrays that do not overlap cost one bounds comparison.
    """
    return tuple(backend.copy(a) if backend.shares_memory(a, x) else a for a in arrays)
