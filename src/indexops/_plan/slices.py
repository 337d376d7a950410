"""Slices with in-range bounds, which every library's own slicing reads the same way.

A slice names its elements by ``first`` (the first element taken), ``count`` and ``step``.
NumPy reads any Python slice exactly, but torch and JAX compute a view's stride
(``step * stride``) and length (``(stop - start + step - 1) // step``) in fixed-width
integers: a step or bound near ``2**63`` overflows there (torch returns nothing, or raises
for a negative stride; JAX refuses an int32 overflow). So the slices the ops hand to a
library are made here, on the host, with bounds inside ``[0, dim]`` and a step no larger
than the dim: one element (or none) is a step of 1, and two or more are at most ``dim - 1``
apart.
"""

from __future__ import annotations


def positive_slice(first: int, count: int, step: int) -> slice:
    """The elements ``first, first + step, ...`` (``count`` of them), in increasing order:
    a negative ``step`` takes the same elements backwards, which the caller flips.

    Examples
    --------
    >>> from indexops._plan.slices import positive_slice
    >>> positive_slice(0, 1, 2**63 - 1)  # one element: step 1
    slice(0, 1, 1)
    >>> positive_slice(4, 3, -2)  # 4, 2, 0 in increasing order
    slice(0, 5, 2)
    """
    if count <= 1:
        return _one_or_none(first, count)
    low = first if step > 0 else first + (count - 1) * step
    stride = abs(step)
    return slice(low, low + (count - 1) * stride + 1, stride)


def directed_slice(first: int, count: int, step: int) -> slice:
    """The elements ``first, first + step, ...`` (``count`` of them) in that order, for a
    library that takes negative steps (NumPy).

    Examples
    --------
    >>> from indexops._plan.slices import directed_slice
    >>> directed_slice(3, 1, -(2**61))
    slice(3, 4, 1)
    >>> directed_slice(4, 3, -2)  # 4, 2, 0: the stop before 0 is None
    slice(4, None, -2)
    """
    if count <= 1 or step > 0:
        return positive_slice(first, count, step)
    stop = first + count * step
    return slice(first, stop if stop >= 0 else None, step)


def _one_or_none(first: int, count: int) -> slice:
    return slice(first, first + 1, 1) if count else slice(0, 0, 1)
