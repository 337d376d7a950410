"""The host fast paths (NumPy, torch on the CPU) against the StableHLO transcription.

Each path is chosen by dtype, layout or size; these tests put data on both sides of each
choice and compare with the sequential reference: exactly, bit for bit where the path
promises it (integer add, float add in column pairs, gathers).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ROW_SCATTER, assert_same, from_numpy
from reference import scatter as reference

import indexops
from indexops._backends import _numpy

INTEGER_DTYPES = ("int8", "uint8", "int16", "int32", "int64")  # every backend adds these
NUMPY_INTEGER_DTYPES = (*INTEGER_DTYPES, "uint16", "uint32", "uint64")
FLOAT_SPECIALS = (-0.0, 0.0, np.nan, np.inf, -np.inf, 3e38, -3e38, 1.5, -2.25, 1e-45)


def values_of(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Integers over the dtype's whole range (sums wrap); floats with signed zeros, NaN,
    infinities, huge values (sums overflow) and subnormals among ordinary ones."""
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    values = rng.standard_normal(shape).astype(dtype)
    special = rng.random(shape) < 0.3
    values[special] = rng.choice(np.array(FLOAT_SPECIALS, dtype=dtype), size=int(special.sum()))
    return values


def sequential_add(operand, rows, updates, mode="drop"):
    with np.errstate(over="ignore", invalid="ignore"):  # wrapping and inf - inf are the point
        return reference.scatter(
            operand, rows, updates, update_computation="add", mode=mode, **ROW_SCATTER
        )


def assert_bits_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal dtype and values, signed zeros told apart, NaNs where the reference has them
    (a NaN's sign and payload are not compared: IEEE 754 leaves them open)."""
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(actual, expected)
    if actual.dtype.kind == "f":
        numbers = ~np.isnan(expected)
        np.testing.assert_array_equal(np.signbit(actual[numbers]), np.signbit(expected[numbers]))


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
@pytest.mark.parametrize("width", [1, 3, 8])
def test_integer_add_with_duplicates_is_exact(xp, dtype, width):
    rng = np.random.default_rng(width)
    operand = values_of(rng, (9, width), dtype)
    rows = rng.integers(-2, 11, size=(300, 1))  # duplicates, and some outside: dropped
    updates = values_of(rng, (300, width), dtype)
    result = indexops.scatter(
        from_numpy(xp, operand),
        from_numpy(xp, rows),
        from_numpy(xp, updates),
        update_computation="add",
        **ROW_SCATTER,
    )
    assert_same(result, sequential_add(operand, rows, updates))


@pytest.mark.parametrize("dtype", ["int32", "uint16", "float32", "float64"])
def test_numpy_add_over_more_than_65536_rows_is_exact(dtype):
    """Row numbers above 16 bits: the integer path sorts them by two 16-bit digits."""
    rng = np.random.default_rng(3)
    operand = values_of(rng, (70_000, 2), dtype)
    rows = rng.choice([0, 131, 65_535, 65_536, 65_537, 69_999], size=(400, 1))
    updates = values_of(rng, (400, 2), dtype)
    result = indexops.scatter(operand, rows, updates, update_computation="add", **ROW_SCATTER)
    assert_bits_equal(result, sequential_add(operand, rows, updates))


@pytest.mark.parametrize("dtype", ["float32", "float64", *NUMPY_INTEGER_DTYPES])
@pytest.mark.parametrize("width", [1, 2, 5, 6])
@pytest.mark.parametrize("layout", ["contiguous", "strided updates", "strided operand"])
def test_numpy_add_with_duplicates_equals_the_sequence_bit_for_bit(
    monkeypatch, dtype, width, layout
):
    """Floats added in column pairs (as complex numbers) and integers summed per row give
    exactly the sequential sums, signed zeros and NaNs included, across chunk and block
    boundaries (made small here) and for any memory layout."""
    monkeypatch.setattr(_numpy, "_AT_CHUNK_ELEMENTS", 16)
    monkeypatch.setattr(_numpy, "_SUM_BLOCK_ELEMENTS", 16)
    rng = np.random.default_rng(width)
    operand = values_of(rng, (6, width), dtype)
    operand[0] = -0.0 if operand.dtype.kind == "f" else 0  # row 0 gets only signed zeros
    rows = rng.integers(0, 6, size=(250, 1))
    updates = values_of(rng, (250, 2 * width), dtype)
    updates[rows[:, 0] == 0] = -0.0 if operand.dtype.kind == "f" else 0
    if layout == "strided updates":
        updates = updates[:, ::2]
    else:
        updates = np.ascontiguousarray(updates[:, :width])
    if layout == "strided operand":
        operand = np.asfortranarray(operand)
    expected = sequential_add(operand, rows, updates)
    result = indexops.scatter(operand, rows, updates, update_computation="add", **ROW_SCATTER)
    assert_bits_equal(result, expected)
    if operand.dtype.kind == "f":
        assert np.signbit(result[0]).all()  # -0.0 + -0.0 + ... stays -0.0
