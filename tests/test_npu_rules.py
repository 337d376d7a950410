"""indexops_npu rules: every violation kind, doc vs PyPTO 0.2.0, and the UB formula."""

from __future__ import annotations

import dataclasses
import pickle

import indexops_npu
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from indexops_npu import ATLAS_A2, ATLAS_A3, KINDS, Hardware, check_scatter_update
from indexops_npu.tiling import divisors

import indexops
from indexops import IndexOpsTypeError, IndexOpsValueError
from indexops._extension import scatter_update_src_shape

UB = 196608
SIZES = {"fp32": 4, "fp16": 2, "bf16": 2, "int32": 4, "int16": 2, "int64": 8}

# PyPTO's ST case ScatterUpdate_test_2: input [15, 8], index [5, 2], src [10, 8], fp32/int64.
ST_2D = dict(
    input_shape=(15, 8), index_shape=(5, 2), src_shape=(10, 8), dtype="fp32",
    index_dtype="int64", view_shape=(4, 8), tile_shape=(2, 8),
)  # fmt: skip
CACHE_4D = dict(
    input_shape=(4, 8, 1, 16), index_shape=(3, 4), src_shape=(3, 4, 1, 16), dtype="fp16",
    index_dtype="int32", view_shape=(2, 4, 1, 16), tile_shape=(1, 2, 1, 16),
)  # fmt: skip


def check(base: dict, rules: str = "doc", **changes):
    return check_scatter_update(**{**base, **changes}, rules=rules)


def test_valid_cases_pass_both_rule_sets():
    for base in (ST_2D, CACHE_4D):
        for rules in ("doc", "pypto-0.2.0"):
            result = check(base, rules)
            assert result.ok and not result.violations and not result.warnings, result


def literal_ub(tile_b, tile_s, d, dtype, index_dtype):
    """The formula of the reference note, written out."""

    def align32(n):
        return (n + 31) // 32 * 32

    return tile_b * tile_s * align32(d * SIZES[dtype]) + tile_b * align32(
        tile_s * SIZES[index_dtype]
    )


def test_ub_of_the_documented_cases():
    assert check(ST_2D).ub_bytes == literal_ub(1, 2, 8, "fp32", "int64") == 96
    assert check(CACHE_4D).ub_bytes == 2 * 32 + 32
    # index [102, 2] int64 was allocated as <102 x 4 x INT64>: index rows padded to 32 bytes
    big = dict(CACHE_4D, input_shape=(64, 8, 1, 8), index_shape=(102, 2),
               src_shape=(102, 2, 1, 8), dtype="fp32", index_dtype="int64",
               view_shape=(102, 2, 1, 8), tile_shape=(102, 2, 1, 8))  # fmt: skip
    assert check(big).ub_bytes == 204 * 32 + 102 * 4 * 8


def _tile_case(tile_b, tile_s, d, dtype, index_dtype, s=None):
    s = s or tile_s + 1
    input_shape, index_shape = (8, 16, 1, d), (tile_b, s)
    return dict(
        input_shape=input_shape, index_shape=index_shape,
        src_shape=scatter_update_src_shape(input_shape, index_shape),
        dtype=dtype, index_dtype=index_dtype, view_shape=(tile_b, s, 1, d),
        tile_shape=(tile_b, tile_s, 1, d),
    )  # fmt: skip


def test_rows_are_padded_to_whole_ub_blocks():
    assert [ATLAS_A2.align(n) for n in (0, 1, 31, 32, 33, 64, 65)] == [0, 32, 32, 32, 64, 64, 96]


def test_ub_exactly_at_the_limit_is_accepted():
    # 1024 tokens of fp32 d=40 (160 B rows) + 1024 index rows of one int64 padded to 32 B
    at = check(_tile_case(1024, 1, 40, "fp32", "int64"))
    assert at.ub_bytes == UB and at.ok
    above = check(_tile_case(1024, 1, 41, "fp32", "int64"))  # 164 B rows pad to 192
    assert above.ub_bytes == 1024 * 192 + 1024 * 32 and above.kinds == ("ub_overflow",)


def test_alignment_matters():
    # fp16 d=17 is 34 bytes a row, padded to 64: unpadded it would fit, padded it does not
    case = _tile_case(1, 3000, 17, "fp16", "int16")
    assert UB > 3000 * 34 + 3000 * 2
    result = check(case)
    assert result.ub_bytes == 3000 * 64 + 6016 and result.kinds == ("ub_overflow",)


@given(
    dtype=st.sampled_from(("fp32", "fp16", "bf16", "int32", "int16")),
    index_dtype=st.sampled_from(("int64", "int32", "int16")),
    d=st.sampled_from((1, 7, 8, 16, 17, 64, 100, 128, 576, 1000)),
    tile_b=st.sampled_from((1, 2, 3, 8)),
    rules=st.sampled_from(("doc", "pypto-0.2.0")),
)
def test_ub_just_below_and_just_above_the_limit(dtype, index_dtype, d, tile_b, rules):
    tile_s = 1
    while literal_ub(tile_b, tile_s + 1, d, dtype, index_dtype) <= UB:
        tile_s += 1
    below = check(_tile_case(tile_b, tile_s, d, dtype, index_dtype), rules)
    assert below.ok and below.ub_bytes == literal_ub(tile_b, tile_s, d, dtype, index_dtype) <= UB
    above = check(_tile_case(tile_b, tile_s + 1, d, dtype, index_dtype), rules)
    assert above.kinds == ("ub_overflow",) and above.ub_bytes > UB
    assert "UB" in above.violations[0].message and "at most" in above.violations[0].message
    assert "at most 0 " not in above.violations[0].message


def test_ub_overflow_says_which_smaller_tile_fits():
    """The advice of an overflowing tile is one that fits: a smaller tileS where its tileB
    fits, else a smaller tileB (tileS=1) or tileS (tileB=1), else that no tile fits (it
    said "at most 0 tokens, e.g. a smaller tileS" where tileS was already 1)."""
    too_many_rows = check(_tile_case(200, 1, 576, "bf16", "int64"))
    message = too_many_rows.violations[0].message
    assert message.endswith(
        "no tileS fits 200 index rows: use a smaller tileB, at most 166 with tileS=1, "
        "or tileS at most 169 with tileB=1"
    )
    for tile_b, tile_s in ((166, 1), (1, 169)):
        assert check(_tile_case(tile_b, tile_s, 576, "bf16", "int64")).ok
    for tile_b, tile_s in ((167, 1), (1, 170)):
        assert not check(_tile_case(tile_b, tile_s, 576, "bf16", "int64")).ok
    row_too_wide = check(_tile_case(1, 1, 100_000, "bf16", "int64"))
    assert row_too_wide.violations[0].message.endswith(
        "no tile fits: one token's row of 100000 elements alone takes 200032 bytes "
        "(d is never split)"
    )
    too_long = check(_tile_case(1, 256, 576, "bf16", "int64")).violations[0].message
    assert too_long.endswith("use a tile of at most 169 tokens (tileB*tileS), e.g. a smaller tileS")


def test_2d_ub_and_tile_clipped_to_the_view():
    # view of one index row (s=4), tile of 4: UB for 4 rows
    case = dict(ST_2D, input_shape=(20, 8), index_shape=(3, 4), src_shape=(12, 8),
                view_shape=(4, 8), tile_shape=(4, 8))  # fmt: skip
    assert check(case).ub_bytes == 4 * 32 + 32
    # a 4-D tile larger than its view uses the view's size
    clipped = check(CACHE_4D, tile_shape=(5, 9, 1, 16))
    assert clipped.ok and clipped.ub_bytes == literal_ub(2, 4, 16, "fp16", "int32")


VIOLATIONS = [
    ("dim", ST_2D, dict(dim=-1)),
    ("rank", ST_2D, dict(input_shape=(15, 8, 1), src_shape=(10, 8, 1))),
    ("rank", ST_2D, dict(src_shape=(5, 2, 1, 8))),
    ("rank", ST_2D, dict(index_shape=(10,))),
    ("empty", ST_2D, dict(index_shape=(0, 2), src_shape=(0, 8))),
    ("empty", CACHE_4D, dict(input_shape=(0, 8, 1, 16))),
    ("negative_dim", ST_2D, dict(input_shape=(-15, 8))),
    ("negative_dim", CACHE_4D, dict(index_shape=(3, -4), src_shape=(3, -4, 1, 16))),
    ("size_limit", ST_2D, dict(input_shape=(2**28, 8))),
    ("dtype", ST_2D, dict(dtype="fp64")),
    ("dtype", ST_2D, dict(dtype="int64")),
    ("dtype", ST_2D, dict(src_dtype="fp16")),
    ("index_dtype", ST_2D, dict(index_dtype="int8")),
    ("index_dtype", ST_2D, dict(index_dtype="uint16")),
    ("shape", ST_2D, dict(src_shape=(10, 16))),
    ("shape", ST_2D, dict(src_shape=(9, 8))),
    ("shape", CACHE_4D, dict(src_shape=(3, 4, 1, 8))),
    ("shape", CACHE_4D, dict(input_shape=(4, 8, 2, 16))),
    ("view_invalid", ST_2D, dict(view_shape=(3, 8))),
    ("view_invalid", ST_2D, dict(view_shape=(4, 4))),
    ("view_invalid", CACHE_4D, dict(view_shape=(2, 0, 1, 16))),
    ("view_invalid", CACHE_4D, dict(view_shape=(2, 4, 16))),
    ("tile_invalid", ST_2D, dict(tile_shape=(3, 8))),
    ("tile_invalid", ST_2D, dict(tile_shape=(0, 8))),
    ("tile_invalid", CACHE_4D, dict(tile_shape=(1, 2, 16))),
    ("tile_invalid", CACHE_4D, dict(tile_shape=(1, 2, 2, 16))),
    ("tile_d_mismatch", ST_2D, dict(tile_shape=(2, 4))),
    ("tile_d_mismatch", CACHE_4D, dict(tile_shape=(1, 2, 1, 8))),
    ("ub_overflow", CACHE_4D, dict(hardware=dataclasses.replace(ATLAS_A2, ub_bytes=64))),
]


@pytest.mark.parametrize(("kind", "base", "changes"), VIOLATIONS)
def test_each_violation_kind(kind, base, changes):
    result = check(base, **changes)
    assert not result.ok
    assert kind in result.kinds, result
    assert all(v.kind in KINDS for v in result.violations)
    message = next(v.message for v in result.violations if v.kind == kind)
    assert any(
        word in message for word in ("use", "cast", "pass", "split", "skip", "expected", "must")
    )


def test_negative_dims_are_not_called_empty():
    result = check(CACHE_4D, index_shape=(3, -4), src_shape=(3, -4, 1, 16))
    assert result.kinds == ("negative_dim", "negative_dim")
    assert "index_shape=(3, -4) has a negative dimension" in str(result)
    assert "empty" not in str(result)


def test_a_call_over_the_size_limit_is_not_tiled():
    # its s may be too large to list the divisors of (the CLI tests time a huge one)
    huge = dict(ST_2D, index_shape=(4, 2**27), src_shape=(2**29, 8), tile_shape=(3, 8))
    result = check(huge)
    assert result.kinds == ("size_limit",) and result.ub_bytes is None


def test_a_2d_tile_lists_the_divisors_of_s():
    s = 2**4 * 3 * 7**2
    big = dict(ST_2D, input_shape=(s, 1), index_shape=(1, s), src_shape=(s, 1),
               view_shape=(s, 1), tile_shape=(5, 1))  # fmt: skip
    (violation,) = check(big).violations
    assert violation.kind == "tile_invalid"
    expected = [n for n in range(1, s + 1) if s % n == 0]
    assert violation.message.endswith(f"tileS must be a divisor of s={s}: one of {expected}")


def test_divisors_from_prime_factors():
    for n in range(1, 1500):
        assert divisors(n) == [k for k in range(1, n + 1) if n % k == 0]
    assert divisors(2**31 - 1) == [1, 2**31 - 1]  # a prime: trial division up to its root
    assert divisors(2**30 * 2) == [2**k for k in range(32)]


def test_every_kind_is_tested():
    assert {kind for kind, _, _ in VIOLATIONS} == set(KINDS)


LOOSER_IN_0_2_0 = [
    ("tile_invalid", ST_2D, dict(tile_shape=(4, 8))),  # a multiple of s
    ("dtype", ST_2D, dict(src_dtype="fp16")),
    # src's d differs from input's: 0.2.0 cuts src, so view and tile take src's d (section 7)
    ("shape", ST_2D, dict(src_shape=(10, 16), view_shape=(4, 16), tile_shape=(2, 16))),
    ("shape", ST_2D, dict(src_shape=(9, 8))),
    ("tile_d_mismatch", CACHE_4D, dict(tile_shape=(1, 2, 1, 8))),  # d split in 4-D
    ("tile_invalid", CACHE_4D, dict(tile_shape=(1, 2, 2, 16))),
]


@pytest.mark.parametrize(("kind", "base", "changes"), LOOSER_IN_0_2_0)
def test_pypto_0_2_0_accepts_with_a_warning(kind, base, changes):
    assert kind in check(base, "doc", **changes).kinds
    loose = check(base, "pypto-0.2.0", **changes)
    assert loose.ok and kind in [w.kind for w in loose.warnings]
    assert "PyPTO 0.2.0 compiles this" in str(loose)


@pytest.mark.parametrize(
    ("kind", "base", "changes"),
    [
        ("tile_invalid", ST_2D, dict(tile_shape=(3, 8))),  # neither divisor nor multiple of s
        ("tile_d_mismatch", ST_2D, dict(tile_shape=(2, 4))),  # 2-D checks tileD
        # ... against src's d, not input's
        ("tile_d_mismatch", ST_2D, dict(src_shape=(10, 16), view_shape=(4, 16))),
        ("view_invalid", ST_2D, dict(src_shape=(10, 16), tile_shape=(2, 16))),
        # a view of src rows that are not whole index rows, unless it is all of src
        ("view_invalid", ST_2D, dict(src_shape=(9, 8), view_shape=(3, 8))),
        ("dtype", ST_2D, dict(dtype="uint8")),  # int8 compiled; nothing else was probed
        ("index_dtype", ST_2D, dict(index_dtype="int8")),
        ("dim", ST_2D, dict(dim=0)),
        ("empty", ST_2D, dict(index_shape=(5, 0), src_shape=(0, 8))),
    ],
)
def test_pypto_0_2_0_still_rejects(kind, base, changes):
    assert kind in check(base, "pypto-0.2.0", **changes).kinds


def test_4d_tile_s_need_not_divide_s_in_either_rule_set():
    for rules in ("doc", "pypto-0.2.0"):
        assert check(CACHE_4D, rules, tile_shape=(2, 3, 1, 16)).ok


def test_dtype_spellings():
    for dtype in ("DT_BF16", "bfloat16", "bf16"):
        assert check(CACHE_4D, dtype=dtype).ok
    assert check(CACHE_4D, dtype=np.float32, index_dtype=np.int16).ok


@pytest.mark.backends("torch")
def test_torch_dtypes():
    import torch

    assert check(CACHE_4D, dtype=torch.bfloat16).ok
    assert check(CACHE_4D, dtype=np.float32, index_dtype=torch.int16).ok


def test_ml_dtypes_bfloat16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert check(CACHE_4D, dtype=ml_dtypes.bfloat16).ok


def test_bad_arguments():
    with pytest.raises(IndexOpsTypeError, match="index_dtype"):
        check(CACHE_4D, index_dtype="nonsense")
    with pytest.raises(IndexOpsValueError, match="rules"):
        check(CACHE_4D, rules="latest")


def test_profiles_and_user_hardware():
    for hw in (ATLAS_A2, ATLAS_A3):
        assert (hw.vector_cores, hw.ub_bytes, hw.ub_block_bytes) == (48, 196608, 32)
        assert hw.clock_hz == 1.85e9 and hw.hbm_bytes_per_s == 1.6e12
    assert ATLAS_A3.dies_per_package == 2
    ascend950 = Hardware("Ascend 950 (arch 3510)", vector_cores=56, ub_bytes=253952)
    big = _tile_case(1, 200, 576, "bf16", "int64")
    assert check(big).kinds == ("ub_overflow",)
    assert check_scatter_update(**big, hardware=ascend950).ok


# Section 7 of the reference notes: three calls PyPTO 0.2.0 compiles and ran in SIM.
SECTION_7 = {
    "tile d against src's d": (
        dict(input_shape=(16, 32), index_shape=(2, 2), src_shape=(4, 16), dtype="fp32",
             index_dtype="int64", view_shape=(4, 16), tile_shape=(2, 16)),
        ("shape", "view_invalid", "tile_d_mismatch"), ("shape",), 2 * 64 + 32,
    ),
    "src not b*s rows, a matching view": (
        dict(input_shape=(16, 32), index_shape=(2, 2), src_shape=(3, 32), dtype="fp32",
             index_dtype="int64", view_shape=(3, 32), tile_shape=(2, 32)),
        ("shape", "view_invalid"), ("shape", "view_invalid"), 2 * 128 + 32,
    ),
    "int8 data": (
        dict(input_shape=(16, 32), index_shape=(2, 2), src_shape=(4, 32), dtype="int8",
             index_dtype="int32", view_shape=(4, 32), tile_shape=(2, 32)),
        ("dtype",), ("dtype",), 2 * 32 + 32,
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", SECTION_7)
def test_pypto_0_2_0_accepts_what_section_7_compiled(case):
    call, doc_kinds, warned, ub = SECTION_7[case]
    assert check(call, "doc").kinds == doc_kinds  # the documented contract is unchanged
    loose = check(call, "pypto-0.2.0")
    assert loose.ok and loose.ub_bytes == ub, loose
    assert tuple(w.kind for w in loose.warnings) == warned
    assert all("PyPTO 0.2.0 compiles this" in w.message for w in loose.warnings)
    # what makes the result undefined is marked so: only int8 data has a defined result
    assert any(w.undefined for w in loose.warnings) == (case != "int8 data")


def test_rule_violation_error_prints_its_public_name():
    import traceback

    from indexops_npu import RuleViolationError, emulate_scatter_update

    with pytest.raises(RuleViolationError) as error:
        emulate_scatter_update(
            np.zeros((8, 4), np.float32), -2, np.array([[0, 1]]), np.ones((2, 4), np.float32),
            view_shape=(2, 4), tile_shape=(3, 4),
        )  # fmt: skip
    line = traceback.format_exception_only(error.type, error.value)[-1]
    assert line.startswith("indexops_npu.RuleViolationError: emulate_scatter_update:"), line


def public_errors(module) -> set[type]:
    """The exception classes among the public names of ``module``."""
    names = (getattr(module, name) for name in module.__all__)
    return {cls for cls in names if isinstance(cls, type) and issubclass(cls, BaseException)}


def test_every_public_error_survives_pickle():
    # multiprocessing and Dask workers send an exception back pickled
    rejected = indexops_npu.RuleViolationError(
        "emulate_scatter_update", check(ST_2D, tile_shape=(3, 8))
    )
    errors = [
        indexops.IndexOpsError("gather: a message"),
        IndexOpsValueError("gather: a message"),
        IndexOpsTypeError("gather: a message"),
        rejected,
    ]
    assert {type(error) for error in errors} == public_errors(indexops) | public_errors(
        indexops_npu
    )
    for error in errors:
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error)
    again = pickle.loads(pickle.dumps(rejected))
    assert again.result == rejected.result and again.op == "emulate_scatter_update"


def test_settings_are_named_errors_of_the_function_called():
    """A rule set or hardware that is not one: the error of the function called, naming
    the argument (plan_scatter_update's named check_scatter_update's; a string hardware
    gave an AttributeError)."""
    problem = dict(dtype="fp32", index_dtype="int64")
    with pytest.raises(IndexOpsValueError, match=r"^plan_scatter_update: rules='x'"):
        indexops_npu.plan_scatter_update([16, 8], [2, 4], rules="x", **problem)
    for call in (indexops_npu.plan_scatter_update, check_problem_of):
        with pytest.raises(IndexOpsTypeError, match=r"hardware='a2' is not allowed: a Hardware"):
            call([16, 8], [2, 4], hardware="a2", **problem)
    with pytest.raises(IndexOpsTypeError, match=r"^check_scatter_update: hardware='a2'"):
        check(ST_2D, hardware="a2")


def check_problem_of(input_shape, index_shape, **kwargs):
    return indexops_npu.rules.check_problem(input_shape, index_shape, (8, 8), **kwargs)


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("vector_cores", 0, IndexOpsValueError),
        ("vector_cores", 2.0, IndexOpsTypeError),
        ("ub_bytes", True, IndexOpsTypeError),
        ("ub_block_bytes", 0, IndexOpsValueError),
        ("clock_hz", 0.0, IndexOpsValueError),
        ("hbm_bytes_per_s", float("inf"), IndexOpsValueError),
        ("tile_overhead_cycles", -1.0, IndexOpsValueError),
        ("die_link_bytes_per_s", 0.0, IndexOpsValueError),
    ],
)
def test_hardware_of_impossible_numbers_is_refused(field, value, error):
    """A profile the rules would divide by zero with (or the cost model scale by nothing):
    refused when made, naming the field (a raw ZeroDivisionError or IndexError came later,
    and a UB block of 0 bytes planned NaN sizes)."""
    with pytest.raises(error, match=rf"^Hardware: {field}="):
        dataclasses.replace(ATLAS_A2, **{field: value})
    assert dataclasses.replace(ATLAS_A2, vector_cores=np.int64(4)).vector_cores == 4
    assert dataclasses.replace(ATLAS_A2, tile_overhead_cycles=0).tile_overhead_cycles == 0


def test_numpy_scalar_types_name_their_dtype():
    """NumPy's scalar types by any of their names: np.longlong is int64, np.single fp32."""
    ok = check(ST_2D, dtype=np.single, index_dtype=np.longlong)
    assert ok.ok and check(ST_2D, index_dtype=np.intc).ok
