"""What PyPTO accepts for ``scatter_update``: the documented contract and PyPTO 0.2.0.

:func:`check_scatter_update` runs pure Python on shapes and dtypes and returns every
violation at once, each with a :attr:`Violation.kind` from :data:`KINDS` and a message that
says what to change. ``rules="doc"`` enforces the documented contract;
``rules="pypto-0.2.0"`` reproduces what that compiler accepts, which is looser: what the
contract forbids but 0.2.0 compiles is reported in :attr:`CheckResult.warnings`. Some of
those calls compile but have no defined result (:attr:`Violation.undefined`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from indexops import IndexOpsValueError
from indexops._extension import (
    as_int,
    as_tuple,
    scatter_update_heads,
    scatter_update_src_shape,
    type_error,
    value_error,
)

from .dtypes import INDEX_DTYPES, LOOSE_VALUE_DTYPES, VALUE_DTYPES, dtype_name, itemsize
from .hardware import ATLAS_A2, Hardware
from .tiling import Tiling, divisors, ub_bytes

OP = "check_scatter_update"
RULES = ("doc", "pypto-0.2.0")
"""The rule sets."""
INT32_MAX = 2**31 - 1

KINDS = {
    "dim": "dim is not -2",
    "rank": "input rank not 2 or 4, src rank differs from input, or index not 2-D",
    "negative_dim": "a negative dimension in input, index or src",
    "empty": "a zero-sized dimension in input, index or src",
    "size_limit": "input or src has more than INT32_MAX elements",
    "dtype": "input dtype not FP32/FP16/BF16/INT32/INT16 (0.2.0: or INT8), or src dtype differs",
    "index_dtype": "index dtype not INT64/INT32/INT16",
    "shape": "src shape does not fit input and index (d, b*s rows, [b, s, 1, d])",
    "view_invalid": "ViewShape of the wrong rank, non-positive, not whole index rows or d",
    "tile_invalid": "TileShape of the wrong rank, non-positive, or tileS not a divisor of s",
    "tile_d_mismatch": "TileShape's last dim is not d (d is never split)",
    "ub_overflow": "src tile plus index tile exceed the Unified Buffer",
}
"""Every violation kind and what it means."""


@dataclass(frozen=True)
class Violation:
    """One broken rule: its :data:`KINDS` key and a message that says what to change.

    Attributes
    ----------
    kind : str
        A key of :data:`KINDS`.
    message : str
        What is wrong and what to change.
    undefined : bool
        Whether PyPTO 0.2.0 compiles it although the result is not defined (src shape or
        dtype not matching input): :func:`~indexops_npu.emulate_scatter_update` refuses to
        run it.

    Examples
    --------
    >>> from indexops_npu import check_scatter_update
    >>> result = check_scatter_update([16, 8], [2, 4], [8, 8], dtype="fp32",
    ...                               index_dtype="int64", view_shape=[8, 8], tile_shape=[3, 8])
    >>> [violation.kind for violation in result.violations]
    ['tile_invalid']
    """

    kind: str
    message: str
    undefined: bool = False

    def __str__(self) -> str:
        return f"[{self.kind}] {self.message}"


@dataclass(frozen=True)
class CheckResult:
    """The outcome of :func:`check_scatter_update`.

    Attributes
    ----------
    violations : tuple of Violation
        What the chosen rule set rejects; empty when :attr:`ok`.
    warnings : tuple of Violation
        What the documented contract forbids but the chosen rule set accepts.
    ub_bytes : int or None
        UB bytes of the largest tile (None when shapes are too broken to tell).
    tiling : Tiling or None
        The view and tile in index space, when both are well formed.
    rules : str
        The rule set checked against.
    hardware : Hardware
        The device profile checked against.

    Examples
    --------
    >>> from indexops_npu import check_scatter_update
    >>> result = check_scatter_update([16, 8], [2, 4], [8, 8], dtype="fp32",
    ...                               index_dtype="int64", view_shape=[8, 8], tile_shape=[4, 8])
    >>> result.ok, result.ub_bytes, result.violations
    (True, 160, ())
    """

    violations: tuple[Violation, ...]
    warnings: tuple[Violation, ...]
    ub_bytes: int | None
    tiling: Tiling | None
    rules: str
    hardware: Hardware

    @property
    def ok(self) -> bool:
        """Whether the rule set accepts the call."""
        return not self.violations

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of ``violations``, in order."""
        return tuple(v.kind for v in self.violations)

    def __str__(self) -> str:
        head = f"{'OK' if self.ok else 'REJECTED'} under rules={self.rules!r}"
        if self.ub_bytes is not None:
            head += f", UB {self.ub_bytes} of {self.hardware.ub_bytes} bytes per tile"
        lines = [head, *(f"  error {v}" for v in self.violations)]
        return "\n".join(lines + [f"  warning {w}" for w in self.warnings])


def require_settings(op: str, rules: Any, hardware: Any) -> None:
    """Raise, naming ``op``, for a rule set that is not one of :data:`RULES` or a
    ``hardware`` that is not a :class:`Hardware`."""
    if rules not in RULES:
        raise value_error(op, "rules", rules, f"one of {RULES}")
    if not isinstance(hardware, Hardware):
        raise type_error(
            op, "hardware", hardware, "a Hardware: ATLAS_A2, ATLAS_A3 or one of your own"
        )


class _Collector:
    """Sorts each finding into violations or warnings according to the rule set."""

    def __init__(self, rules: str) -> None:
        self.rules = rules
        self.violations: list[Violation] = []
        self.warnings: list[Violation] = []

    @property
    def loose(self) -> bool:
        """Whether the rule set is PyPTO 0.2.0's."""
        return self.rules == "pypto-0.2.0"

    def add(self, kind: str, message: str, loose: bool = False, undefined: bool = False) -> None:
        if loose and self.loose:
            text = f"{message} (PyPTO 0.2.0 compiles this)"
            self.warnings.append(Violation(kind, text, undefined))
        else:
            self.violations.append(Violation(kind, message))


_Shapes = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def check_scatter_update(
    input_shape: Sequence[int],
    index_shape: Sequence[int],
    src_shape: Sequence[int],
    *,
    dtype: Any,
    index_dtype: Any,
    view_shape: Sequence[int],
    tile_shape: Sequence[int],
    hardware: Hardware = ATLAS_A2,
    rules: str = "doc",
    src_dtype: Any = None,
    dim: int = -2,
) -> CheckResult:
    """Check one ``pypto.scatter_update`` call and its tiling against a rule set.

    Parameters
    ----------
    input_shape, index_shape, src_shape : sequence of int
        ``[rows, d]``, ``[b, s]``, ``[b*s, d]`` (2-D) or ``[blockNum, blockSize, 1, d]``,
        ``[b, s]``, ``[b, s, 1, d]`` (4-D).
    dtype, index_dtype : str or dtype
        Of input (and src) and of index: ``"fp32"``, ``"bf16"``, ``"DT_INT64"``,
        ``numpy.float16``, ``torch.bfloat16``, ...
    view_shape : sequence of int
        ``[viewB*s, d]`` (2-D) or ``[viewB, viewS, 1, d]`` (4-D), cutting src.
    tile_shape : sequence of int
        ``[tileS, d]`` (2-D) or ``[tileB, tileS, 1, d]`` (4-D), cutting each view.
    hardware : Hardware
        The device profile (its UB size and block).
    rules : {"doc", "pypto-0.2.0"}
        The documented contract, or what PyPTO 0.2.0's compiler accepts.
    src_dtype : str or dtype, optional
        Of src, when it differs from ``dtype``.
    dim : int
        Must be -2.

    Returns
    -------
    CheckResult
        Every violation and warning, and the UB bytes of the largest tile.

    Examples
    --------
    >>> from indexops_npu import check_scatter_update
    >>> r = check_scatter_update([15, 8], [5, 2], [10, 8], dtype="fp32", index_dtype="int64",
    ...                          view_shape=[4, 8], tile_shape=[2, 8])
    >>> r.ok, r.ub_bytes
    (True, 96)
    >>> r = check_scatter_update([15, 8], [5, 2], [10, 8], dtype="fp32", index_dtype="int64",
    ...                          view_shape=[4, 8], tile_shape=[4, 8])
    >>> r.kinds
    ('tile_invalid',)
    """
    require_settings(OP, rules, hardware)
    out = _Collector(rules)
    shapes = _as_shapes(input_shape, index_shape, src_shape)
    dtypes = _problem(shapes, dtype, src_dtype, index_dtype, dim, out)
    if dtypes is None:
        return _result(out, None, None, hardware)
    tiling = _tiling(*shapes, view_shape, tile_shape, out)
    if tiling is None:
        return _result(out, None, None, hardware)
    b, s = shapes[1]
    t = tiling.clipped(b, s, _cut_d(*shapes, out))
    value, index = dtypes
    ub = int(ub_bytes(t.tile_b, t.tile_s, t.tile_d, itemsize(value), itemsize(index), hardware))
    if ub > hardware.ub_bytes:
        out.add("ub_overflow", _ub_message(ub, t, value, index, hardware))
    return _result(out, ub, tiling, hardware)


def check_problem(
    input_shape: Sequence[int],
    index_shape: Sequence[int],
    src_shape: Sequence[int],
    *,
    dtype: Any,
    index_dtype: Any,
    hardware: Hardware = ATLAS_A2,
    rules: str = "doc",
    src_dtype: Any = None,
    dim: int = -2,
) -> CheckResult:
    """Check a ``pypto.scatter_update`` call without a tiling: what no tiling can mend.

    The parameters are those of :func:`check_scatter_update`, less the tiling; the result
    holds the violations of every kind but ``view_invalid``, ``tile_invalid``,
    ``tile_d_mismatch`` and ``ub_overflow``, and no UB bytes.

    Returns
    -------
    CheckResult
        Every violation and warning of the call itself.

    Examples
    --------
    >>> from indexops_npu.rules import check_problem
    >>> check_problem([15, 8], [5, 2], [10, 8], dtype="fp32", index_dtype="int64").ok
    True
    >>> check_problem([15, 8], [5, 2**40], [5 * 2**40, 8], dtype="fp32",
    ...               index_dtype="int64").kinds
    ('size_limit',)
    """
    require_settings(OP, rules, hardware)
    out = _Collector(rules)
    shapes = _as_shapes(input_shape, index_shape, src_shape)
    _problem(shapes, dtype, src_dtype, index_dtype, dim, out)
    return _result(out, None, None, hardware)


def _problem(
    shapes: _Shapes, dtype: Any, src_dtype: Any, index_dtype: Any, dim: int, out: _Collector
) -> tuple[str, str] | None:
    """Dtypes, dim and shapes; the value and index dtypes, or None when the tiling cannot
    be checked."""
    value, _, index = _dtypes(dtype, src_dtype, index_dtype, out)
    if as_int(OP, "dim", dim) != -2:
        out.add("dim", f"dim={dim}: pass dim=-2, the only value PyPTO defines")
    if not _structure(*shapes, out):
        return None
    _shapes(*shapes, out)
    return value, index


def _result(
    out: _Collector, ub: int | None, tiling: Tiling | None, hardware: Hardware
) -> CheckResult:
    return CheckResult(tuple(out.violations), tuple(out.warnings), ub, tiling, out.rules, hardware)


def _as_shapes(input: Sequence[int], index: Sequence[int], src: Sequence[int]) -> _Shapes:
    return (
        as_tuple(OP, "input_shape", input),
        as_tuple(OP, "index_shape", index),
        as_tuple(OP, "src_shape", src),
    )


def _dtypes(dtype: Any, src_dtype: Any, index_dtype: Any, out: _Collector) -> tuple[str, str, str]:
    value = dtype_name(dtype)
    src_value = value if src_dtype is None else dtype_name(src_dtype, "src_dtype")
    index = dtype_name(index_dtype, "index_dtype")
    if value not in VALUE_DTYPES:
        out.add(
            "dtype",
            f"dtype={value}: use one of {', '.join(VALUE_DTYPES)} for input and src",
            loose=value in LOOSE_VALUE_DTYPES,
        )
    if src_value != value:
        out.add(
            "dtype",
            f"src dtype {src_value} differs from input dtype {value}: cast src "
            "to the input's dtype",
            loose=True,
            undefined=True,
        )
    if index not in INDEX_DTYPES:
        out.add(
            "index_dtype", f"index_dtype={index}: cast index to one of {', '.join(INDEX_DTYPES)}"
        )
    return value, src_value, index


def _structure(
    input_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    src_shape: tuple[int, ...],
    out: _Collector,
) -> bool:
    """Ranks, negative and empty dims, size limits; False when the tiling cannot be checked.

    Nor is it checked for a call over the size limit: its ``s`` may be too large to list
    the divisors of.
    """
    fine = True
    if len(input_shape) not in (2, 4):
        out.add(
            "rank",
            f"input_shape={input_shape}: input must be 2-D [rows, d] or 4-D "
            "[blockNum, blockSize, 1, d]",
        )
        fine = False
    elif len(src_shape) != len(input_shape):
        out.add(
            "rank", f"src_shape={src_shape}: src must have the rank of input ({len(input_shape)})"
        )
        fine = False
    if len(index_shape) != 2:
        out.add("rank", f"index_shape={index_shape}: index must be 2-D [b, s]")
        fine = False
    for name, shape in (("input", input_shape), ("index", index_shape), ("src", src_shape)):
        if any(n < 0 for n in shape):
            out.add(
                "negative_dim",
                f"{name}_shape={shape} has a negative dimension: sizes must be positive",
            )
            fine = False
        elif 0 in shape:
            out.add(
                "empty",
                f"{name}_shape={shape}: PyPTO does not support empty tensors; "
                "skip the call when there is nothing to write",
            )
            fine = False
    for name, shape in (("input", input_shape), ("src", src_shape)):
        if min(shape, default=0) >= 0 and math.prod(shape) > INT32_MAX:
            out.add(
                "size_limit",
                f"{name}_shape={shape} has {math.prod(shape)} elements, "
                f"more than INT32_MAX={INT32_MAX}: split the call",
            )
            fine = False
    return fine


def _shapes(
    input_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    src_shape: tuple[int, ...],
    out: _Collector,
) -> None:
    """src against input and index: d, b*s rows, [b, s, 1, d] (no broadcasting)."""
    if len(input_shape) == 4 and input_shape[2] != 1:
        out.add(
            "shape",
            f"input_shape={input_shape}: a 4-D cache is [blockNum, blockSize, 1, d]; "
            + scatter_update_heads,
            loose=True,
            undefined=True,
        )
    expected = scatter_update_src_shape(input_shape, index_shape)
    if src_shape != expected:
        out.add(
            "shape",
            f"src_shape={src_shape}: expected {expected} for input "
            f"{input_shape} and index {index_shape} (no broadcasting)",
            loose=True,
            undefined=True,
        )


def _cut_d(
    input_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    src_shape: tuple[int, ...],
    out: _Collector,
) -> int:
    """The ``d`` that views and tiles must match: input's (doc), src's (PyPTO 0.2.0 cuts src)."""
    return src_shape[-1] if out.loose else input_shape[-1]


def _tiling(
    input_shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    src_shape: tuple[int, ...],
    view_shape: Sequence[int],
    tile_shape: Sequence[int],
    out: _Collector,
) -> Tiling | None:
    """The view and tile in index space, or None when either is malformed."""
    view = as_tuple(OP, "view_shape", view_shape)
    tile = as_tuple(OP, "tile_shape", tile_shape)
    rank, d = len(input_shape), _cut_d(input_shape, index_shape, src_shape, out)
    b, s = index_shape
    view_bs = _view(rank, (b, s), src_shape[0], d, view, out)
    tile_bsd = _tile_2d(s, d, tile, out) if rank == 2 else _tile_4d(d, tile, out)
    if view_bs is None or tile_bsd is None:
        return None
    return Tiling(*view_bs, *tile_bsd)


def _view(
    rank: int, index: tuple[int, int], src_rows: int, d: int, view: tuple[int, ...], out: _Collector
) -> tuple[int, int] | None:
    form = "[viewB*s, d]" if rank == 2 else "[viewB, viewS, 1, d]"
    if len(view) != rank or any(n <= 0 for n in view):
        out.add("view_invalid", f"view_shape={view}: use {form} with positive sizes")
        return None
    if view[-1] != d or (rank == 4 and view[2] != 1):
        out.add("view_invalid", f"view_shape={view}: d is never split, use {form} with d={d}")
        return None
    b, s = index
    if rank == 2 and view[0] % s:
        # PyPTO 0.2.0 compiles a view of all the rows of a src that is not b*s rows long
        whole_src = out.loose and src_rows != b * s and view[0] == src_rows
        out.add(
            "view_invalid",
            f"view_shape={view}: view rows must be whole index rows, a "
            f"multiple of s={s} (e.g. {s * max(1, view[0] // s)})",
            loose=whole_src,
        )
        return (b, s) if whole_src else None
    return (view[0] // s, s) if rank == 2 else (view[0], view[1])


def _tile_2d(s: int, d: int, tile: tuple[int, ...], out: _Collector) -> tuple[int, int, int] | None:
    if len(tile) != 2 or any(n <= 0 for n in tile):
        out.add("tile_invalid", f"tile_shape={tile}: use [tileS, d] with positive sizes")
        return None
    tile_bs, tile_d = tile
    if tile_d != d:
        out.add("tile_d_mismatch", f"tile_shape={tile}: d is never split, use [{tile_bs}, {d}]")
    if tile_bs <= s and s % tile_bs == 0:
        return 1, tile_bs, d
    if tile_bs > s and tile_bs % s == 0:
        out.add(
            "tile_invalid",
            f"tile_shape={tile}: tileS must divide s={s}; PyPTO 0.2.0 also "
            f"takes multiples of s, the contract only {divisors(s)}",
            loose=True,
        )
        return tile_bs // s, s, d
    out.add(
        "tile_invalid", f"tile_shape={tile}: tileS must be a divisor of s={s}: one of {divisors(s)}"
    )
    return None


def _tile_4d(d: int, tile: tuple[int, ...], out: _Collector) -> tuple[int, int, int] | None:
    if len(tile) != 4 or any(n <= 0 for n in tile):
        out.add("tile_invalid", f"tile_shape={tile}: use [tileB, tileS, 1, d] with positive sizes")
        return None
    tile_b, tile_s, tile_n, tile_d = tile
    if tile_n != 1:
        out.add(
            "tile_invalid",
            f"tile_shape={tile}: dim 2 of a 4-D tile must be 1, use "
            f"[{tile_b}, {tile_s}, 1, {tile_d}]",
            loose=True,
        )
    if tile_d != d:
        out.add(
            "tile_d_mismatch",
            f"tile_shape={tile}: d is never split, use [{tile_b}, {tile_s}, 1, {d}]",
            loose=True,
        )
    return tile_b, tile_s, tile_d


def _ub_message(ub: int, t: Tiling, value: str, index: str, hardware: Hardware) -> str:
    rows = t.tile_b * t.tile_s
    return (
        f"UB use {ub} bytes per tile = {rows} rows x align({t.tile_d}*{itemsize(value)}) + "
        f"{t.tile_b} x align({t.tile_s}*{itemsize(index)}) exceeds the {hardware.ub_bytes}-byte "
        f"UB of {hardware.name}: {_smaller_tile(t, value, index, hardware)}"
    )


def _smaller_tile(t: Tiling, value: str, index: str, hardware: Hardware) -> str:
    """What to change in a tile that overflows the UB: its tileS where its tileB fits,
    else its tileB, else nothing fits (one token's row alone overflows)."""
    fits = max_rows_fitting(t.tile_d, value, index, hardware, t.tile_b)
    if fits:
        return f"use a tile of at most {fits} tokens (tileB*tileS), e.g. a smaller tileS"
    tile_b = 0
    while ub_bytes(tile_b + 1, 1, t.tile_d, itemsize(value), itemsize(index), hardware) <= (
        hardware.ub_bytes
    ):
        tile_b += 1
    if tile_b:
        longest = max_rows_fitting(t.tile_d, value, index, hardware)
        return (
            f"no tileS fits {t.tile_b} index rows: use a smaller tileB, at most {tile_b} with "
            f"tileS=1, or tileS at most {longest} with tileB=1"
        )
    one = ub_bytes(1, 1, t.tile_d, itemsize(value), itemsize(index), hardware)
    return (
        f"no tile fits: one token's row of {t.tile_d} elements alone takes {one} bytes "
        "(d is never split)"
    )


def max_rows_fitting(d: int, value: str, index: str, hardware: Hardware, tile_b: int = 1) -> int:
    """The most tokens a tile of ``tile_b`` index rows can hold in UB (0 if none fit).

    Examples
    --------
    >>> from indexops_npu import ATLAS_A2
    >>> from indexops_npu.rules import max_rows_fitting
    >>> max_rows_fitting(576, "bf16", "int64", ATLAS_A2)
    169
    """
    best, tile_s = 0, 1
    while True:
        ub = ub_bytes(tile_b, tile_s, d, itemsize(value), itemsize(index), hardware)
        if ub > hardware.ub_bytes:
            return best
        best, tile_s = tile_b * tile_s, tile_s + 1


class RuleViolationError(IndexOpsValueError):
    """A call that the chosen rule set rejects; ``result`` holds every violation.

    Parameters
    ----------
    op : str
        The function that refused the call, named in the message.
    result : CheckResult
        The check that failed.

    Attributes
    ----------
    op : str
        The function that refused the call.
    result : CheckResult
        The check that failed, every violation in it.

    Examples
    --------
    >>> import numpy as np
    >>> from indexops_npu import RuleViolationError, emulate_scatter_update
    >>> try:
    ...     emulate_scatter_update(np.zeros((8, 4), np.float32), -2, np.array([[0, 1]]),
    ...                            np.ones((2, 4), np.float32), view_shape=(2, 4),
    ...                            tile_shape=(3, 4))
    ... except RuleViolationError as error:
    ...     print(error.result.kinds)
    ('tile_invalid',)
    """

    __module__ = "indexops_npu"  # its public name, as a traceback prints it

    def __init__(self, op: str, result: CheckResult) -> None:
        self.op, self.result = op, result
        problems = "; ".join(str(v) for v in result.violations or result.warnings)
        super().__init__(f"{op}: rejected under rules={result.rules!r}: {problems}")

    def __reduce__(self) -> tuple[type[RuleViolationError], tuple[str, CheckResult]]:
        # pickle (multiprocessing, Dask workers) rebuilds it from what __init__ takes, not
        # from the message alone
        return type(self), (self.op, self.result)
