"""Dtype names as PyPTO spells them, and their sizes.

Users may name a dtype as in PyPTO (``DT_FP32``), as in the seed (``fp32``), as NumPy
(``float32``), or pass a dtype of any array library: all become one canonical
short name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from indexops._extension import type_error

SIZES = {
    "fp32": 4, "fp16": 2, "bf16": 2, "fp64": 8,
    "int64": 8, "int32": 4, "int16": 2, "int8": 1,
    "uint64": 8, "uint32": 4, "uint16": 2, "uint8": 1, "bool": 1,
}  # fmt: skip
"""Bytes per element of every dtype the emulator can name."""

VALUE_DTYPES = ("fp32", "fp16", "bf16", "int32", "int16")
"""Dtypes PyPTO's ``scatter_update`` documents for ``input`` and ``src``."""

LOOSE_VALUE_DTYPES = ("int8",)
"""Dtypes PyPTO 0.2.0 compiles for ``input`` and ``src`` although the docs do not list them."""

INDEX_DTYPES = ("int64", "int32", "int16")
"""Dtypes PyPTO's ``scatter_update`` accepts for ``index``."""

_ALIASES = {
    "float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16",
    "bfloat16": "bf16", "float64": "fp64", "double": "fp64", "long": "int64",
    "int": "int32", "short": "int16",
}  # fmt: skip


def dtype_name(dtype: Any, arg: str = "dtype") -> str:
    """The canonical short name of ``dtype`` (a name or a dtype object of any library).

    Examples
    --------
    >>> import numpy as np
    >>> from indexops_npu.dtypes import dtype_name
    >>> dtype_name("DT_BF16"), dtype_name(np.float32), dtype_name("int64")
    ('bf16', 'fp32', 'int64')

    A NumPy dtype in either byte order names its type (the host array's layout):

    >>> dtype_name(np.dtype(">f4")), dtype_name(np.dtype("<i2"))
    ('fp32', 'int16')
    """
    text = getattr(dtype, "__name__", None) if isinstance(dtype, type) else None
    if isinstance(dtype, type) and issubclass(dtype, np.generic):
        dtype = np.dtype(dtype)  # NumPy's scalar types: np.longlong is int64, np.single fp32
    if isinstance(dtype, np.dtype):  # str() of a non-native one is its code (">f4")
        text = dtype.name
    text = (text or str(dtype)).lower().removeprefix("<class '").rstrip("'>")
    text = text.rsplit(".", 1)[-1].removeprefix("dt_")  # torch.float32, numpy.int64, ...
    name = _ALIASES.get(text, text)
    if name not in SIZES:
        raise type_error(
            "indexops_npu",
            arg,
            dtype,
            f"a dtype the emulator names: one of {sorted(SIZES)} (or an alias); "
            f"scatter_update takes {', '.join(VALUE_DTYPES)} for values (and "
            f"{', '.join(LOOSE_VALUE_DTYPES)} under rules='pypto-0.2.0'), "
            f"{', '.join(INDEX_DTYPES)} for the index",
        )
    return name


def itemsize(name: str) -> int:
    """Bytes per element of the canonical dtype ``name``."""
    return SIZES[name]


def numpy_dtype(name: str) -> Any:
    """The NumPy dtype of a canonical name; ``bf16`` needs ml_dtypes.

    Examples
    --------
    >>> from indexops_npu.dtypes import numpy_dtype
    >>> numpy_dtype("fp16")
    dtype('float16')
    """
    if name == "bf16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    numpy_names = {"fp32": "float32", "fp16": "float16", "fp64": "float64"}
    return np.dtype(numpy_names.get(name, name))
