"""The backends the tests run on: each array library, and variants of some of them.

Every test that takes the ``xp`` fixture runs once per backend. Besides the libraries
themselves there are variants that run the same tests where users run the ops:

- ``numpy_readonly``: NumPy arrays that cannot be written (``copy=False`` must fail);
- ``torch_device``: torch on the CPU, but through the paths taken on a GPU or under
  tracing (no index value read on the host), with every host read caught;
- ``torch_meta``: torch ``meta`` tensors (no values: shapes and dtypes only);
- ``torch_cuda``: torch on a GPU, with CUDA's sync checks turned into errors;
- ``jax_jit``: every op call wrapped in ``jax.jit``, attributes static, arrays traced
  (for ``indexops.at``: each method call, with the index expression's arrays traced);
- ``dask``: Dask arrays split into at least two chunks per axis where the length allows;
  every op call must build its graph without computing anything and return known chunks
  (the operand's, where the op keeps its shape).

Which backends run: ``INDEXOPS_BACKENDS`` (comma separated, e.g. ``numpy,torch``; all of
them when unset) less those that cannot run here (a library not installed, no GPU). Tests
are generated for the backends that run only (tests/conftest.py); the others are named,
with the reason, in pytest's header.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import importlib
import importlib.util
import inspect
import os
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

OPS = (
    "gather",
    "scatter",
    "dynamic_slice",
    "dynamic_update_slice",
    "slice_scatter",
    "scatter_update",
)


class Backend(enum.Enum):
    NUMPY = "numpy"
    NUMPY_READONLY = "numpy_readonly"
    ARRAY_API_STRICT = "array_api_strict"
    TORCH = "torch"
    TORCH_DEVICE = "torch_device"
    TORCH_META = "torch_meta"
    TORCH_CUDA = "torch_cuda"
    JAX = "jax"
    JAX_JIT = "jax_jit"
    CUPY = "cupy"
    DASK = "dask"

    def __str__(self) -> str:  # test ids
        return self.value

    @property
    def library(self) -> str:
        """The array library: numpy, array_api_strict, torch, jax or cupy."""
        return self.value.split("_")[0] if self.value != "array_api_strict" else self.value

    @property
    def writable(self) -> bool:
        """Whether the arrays the tests make can be written in place."""
        return self not in (Backend.NUMPY_READONLY, Backend.JAX, Backend.JAX_JIT, Backend.DASK)

    @property
    def extension_dtypes(self) -> bool:
        """Whether its arrays hold NumPy's extension dtypes (ml_dtypes' bfloat16, float8):
        NumPy's, Dask's (whose chunks are NumPy arrays) and JAX's."""
        return self.library in ("numpy", "dask", "jax")

    @property
    def byte_orders(self) -> bool:
        """Whether its arrays hold NumPy dtypes in either byte order (big-endian data read
        from a file): NumPy's and Dask's. torch's and JAX's refuse them (``torch.from_numpy``
        and ``jnp.asarray`` raise) and array-api-strict has no such dtype: their users
        convert to the native order first, which is NumPy's business, not indexops'."""
        return self.library in ("numpy", "dask")

    @property
    def has_values(self) -> bool:
        return self is not Backend.TORCH_META

    @property
    def values_on_host(self) -> bool:
        """Whether index values are read on the host, so value errors raise before writing."""
        return self in (Backend.NUMPY, Backend.NUMPY_READONLY, Backend.TORCH)

    @property
    def traced(self) -> bool:
        return self is Backend.JAX_JIT

    @property
    def reads_boolean_indices(self) -> bool:
        """Whether boolean index arrays are read when ``at`` is called (their values set
        the result's shape): not where values are unknown, nor on Dask (lazy values)."""
        return self.has_values and not self.traced and self is not Backend.DASK

    def matches(self, condition: Backend | str | Callable[[Backend], bool]) -> bool:
        """Whether this backend is ``condition`` (a Backend or its name), of the library it
        names, or passes it (a predicate)."""
        if isinstance(condition, Backend):
            return condition is self
        if isinstance(condition, str):
            return condition in (self.value, self.library)
        return condition(self)

    def namespace(self) -> ModuleType:
        """The namespace tests make arrays with."""
        if self is Backend.NUMPY:
            return np
        if self is Backend.NUMPY_READONLY:
            return ReadOnly(np)
        if self is Backend.ARRAY_API_STRICT:
            strict = importlib.import_module("array_api_strict")
            from array_api_strict._flags import supported_versions

            strict.set_array_api_strict_flags(api_version=max(supported_versions))
            return strict
        if self.library == "torch":
            xp = importlib.import_module("array_api_compat.torch")
            if self is Backend.TORCH_CUDA:
                return OnDevice(xp, "cuda")
            return OnDevice(xp, "meta") if self is Backend.TORCH_META else xp
        if self is Backend.DASK:
            importlib.import_module("dask.array")
            # Tests read results in the test's own thread: Dask's thread pool cost a
            # third of their time on tiny graphs. test_dask.py computes every op with the
            # default threaded scheduler and on a cluster.
            importlib.import_module("dask").config.set(scheduler="sync")
            return Chunked(importlib.import_module("array_api_compat.dask.array"))
        if self.library == "jax":
            jax = importlib.import_module("jax")
            jax.config.update("jax_enable_x64", True)
            return importlib.import_module("jax.numpy")
        return importlib.import_module("cupy")

    def wrap(self, op: Callable[..., Any]) -> Callable[..., Any] | None:
        """How this backend calls an indexops op, or None to call it as it is."""
        if self is Backend.JAX_JIT:
            return jitted(op)
        if self is Backend.TORCH_DEVICE:
            return functools.partial(_without_host_reads, op, _host_read_guard)
        if self is Backend.TORCH_CUDA:
            return functools.partial(_without_host_reads, op, _cuda_sync_errors)
        if self is Backend.DASK:
            return functools.partial(lazily, op)
        return None

    def wrap_at(self, at: Callable[..., Any]) -> Callable[..., Any] | None:
        """``indexops.at`` whose method calls go through :meth:`wrap`, or None."""
        call = self.wrap(at_calls(at))
        return None if call is None else functools.partial(WrappedAt, at, call)


# The packages each library's backends need (array_api_compat wraps torch and Dask).
PACKAGES = {"torch": ("torch", "array_api_compat"), "dask": ("dask", "array_api_compat")}


@functools.cache
def unusable(backend: Backend) -> str | None:
    """Why ``backend`` cannot run here, or None. Imports a library only to ask it for a GPU."""
    missing = [
        name
        for name in PACKAGES.get(backend.library, (backend.library,))
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        return f"{', '.join(missing)} not installed; pip install it to test {backend}"
    try:
        if (
            backend is Backend.TORCH_CUDA
            and not importlib.import_module("torch").cuda.is_available()
        ):
            return "torch sees no CUDA device: run on a machine with an NVIDIA GPU"
        if (
            backend is Backend.CUPY
            and importlib.import_module("cupy").cuda.runtime.getDeviceCount() < 1
        ):
            return "cupy sees no GPU: run on a machine with an NVIDIA GPU"
    except Exception as exc:  # a CUDA runtime without a device raises its own errors
        return f"no GPU ({type(exc).__name__}: {exc})"
    return None


@functools.cache
def selected() -> tuple[Backend, ...]:
    """The backends ``INDEXOPS_BACKENDS`` names (all when it is unset or blank)."""
    names = [n.strip() for n in os.environ.get("INDEXOPS_BACKENDS", "").split(",") if n.strip()]
    unknown = sorted(set(names) - {b.value for b in Backend})
    if unknown:
        raise pytest.UsageError(
            f"INDEXOPS_BACKENDS names unknown backends {unknown}; "
            f"known: {', '.join(b.value for b in Backend)}"
        )
    return tuple(Backend(name) for name in names) if names else tuple(Backend)


def running() -> tuple[Backend, ...]:
    """The selected backends that can run here: the ones tests are generated for."""
    return tuple(b for b in selected() if unusable(b) is None)


def runs(condition: Backend | str | Callable[[Backend], bool]) -> bool:
    """Whether some running backend matches ``condition`` (see :meth:`Backend.matches`)."""
    return any(b.matches(condition) for b in running())


# Tests that compare values: not on torch meta tensors, which have none.
WITH_VALUES = pytest.mark.backends(lambda backend: backend.has_values)

# Drawn (Hypothesis) tests of the ops' values run JAX under jit only: eager JAX takes the
# same backend code (it never reads JAX values on the host, except boolean masks and
# slice_scatter's bounds, which fixed tests cover) and compiles every primitive again for
# each new shape, which made it half the suite's time.
DRAWN = pytest.mark.backends(lambda backend: backend is not Backend.JAX)


def at_calls(at: Callable[..., Any]) -> Callable[..., Any]:
    """The method calls of ``at`` as one function of their arguments (what wrappers wrap):
    under ``jax.jit`` the arrays in ``x``, ``idx`` and the arguments are traced and the
    rest of the index expression (ints, slices, None, ...) is static."""

    def at_call(x: Any, idx: Any, method: str, args: tuple, options: dict) -> Any:
        return getattr(at(x, idx), method)(*args, **options)

    return at_call


class WrappedAt:
    """``at(x)[idx]`` / ``at(x, idx)`` whose method calls run through ``call``."""

    def __init__(self, at: Callable[..., Any], call: Callable[..., Any], x: Any, *idx: Any):
        self._at, self._call, self._x, self._idx = at, call, x, idx

    def __getitem__(self, idx: Any) -> WrappedAt:
        if self._idx:  # at's own error for a second index
            return self._at(self._x, *self._idx)[idx]  # type: ignore[no-any-return]
        return WrappedAt(self._at, self._call, self._x, idx)

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if not self._idx:  # at's own error for a missing index
            return getattr(self._at(self._x), method)  # type: ignore[no-any-return]
        return lambda *args, **options: self._call(self._x, *self._idx, method, args, options)


class OnDevice(ModuleType):
    """Namespace ``xp`` whose creation functions put arrays on ``device`` unless told otherwise."""

    CREATION = ("asarray", "zeros", "ones", "empty", "full", "arange", "linspace", "eye")

    def __init__(self, xp: ModuleType, device: str) -> None:
        super().__init__(f"{xp.__name__}[{device}]")
        self._xp, self._device = xp, device

    def __getattr__(self, name: str) -> object:
        attr = getattr(self._xp, name)
        if name in self.CREATION:
            return functools.partial(attr, device=self._device)
        return attr


class ReadOnly(ModuleType):
    """NumPy whose creation functions return arrays that cannot be written."""

    def __init__(self, xp: ModuleType) -> None:
        super().__init__(f"{xp.__name__}[read-only]")
        self._xp = xp

    def __getattr__(self, name: str) -> object:
        attr = getattr(self._xp, name)
        if name not in OnDevice.CREATION:
            return attr

        def create(*args: Any, **kwargs: Any) -> np.ndarray:
            array = np.array(attr(*args, **kwargs))
            array.flags.writeable = False
            return array

        return create


# -- dask -----------------------------------------------------------------------------------


def halves(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Chunk sizes that split every axis of length 2 or more into at least two chunks."""
    return tuple(max(1, n // 2) for n in shape)


class Chunked(ModuleType):
    """The Dask namespace whose creation functions split arrays into at least two chunks
    per axis (Dask's defaults would make one chunk of every small test array)."""

    def __init__(self, xp: ModuleType) -> None:
        super().__init__(f"{xp.__name__}[chunked]")
        self._xp = xp

    def __getattr__(self, name: str) -> object:
        attr = getattr(self._xp, name)
        if name not in OnDevice.CREATION:
            return attr

        def create(*args: Any, **kwargs: Any) -> Any:
            array = attr(*args, **kwargs)
            return array.rechunk(halves(tuple(array.shape)))

        return create


# Arguments that set the result's shape: a Dask user passes them as Python or NumPy values.
HOST_ARGUMENTS = {"slice_scatter": ("start", "stop", "step", "axes")}
SHAPE_KEEPING = ("scatter", "dynamic_update_slice", "slice_scatter", "scatter_update")


def _no_compute(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("an indexops op computed a Dask graph while building it")


def lazily(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``op`` with every Dask computation made an error, then check that the result is
    a Dask array with known chunks, the operand's where the op keeps its shape."""
    import dask
    import dask.array as da

    arguments = inspect.signature(op).bind(*args, **kwargs).arguments
    for name in HOST_ARGUMENTS.get(op.__name__, ()):
        if isinstance(arguments.get(name), da.Array):
            arguments[name] = np.asarray(arguments[name])
    with dask.config.set(scheduler=_no_compute):
        result = op(**arguments)
    assert isinstance(result, da.Array), f"{op.__name__} returned {type(result).__name__}"
    assert not any(np.isnan(n) for c in result.chunks for n in c), f"chunks {result.chunks}"
    operand = next(iter(arguments.values()))
    if op.__name__ in SHAPE_KEEPING and isinstance(operand, da.Array):
        assert result.chunks == operand.chunks, f"chunks {result.chunks} != {operand.chunks}"
    return result


# -- jax_jit ------------------------------------------------------------------------------

# Arguments that set the result's shape: a JAX user passes them as static values.
STATIC_ARGUMENTS = {"slice_scatter": ("start", "stop", "step", "axes")}


class _Static:
    """A static argument of a jitted call, hashable, and equal to another only where the
    two compile the same: NumPy arrays and scalars by their dtype and bytes, floats by
    their bits (``-0.0`` is not ``0.0``)."""

    def __init__(self, value: Any) -> None:
        self.value = value
        if isinstance(value, (np.ndarray, np.generic)):
            self.key: Any = (type(value), value.dtype.str, np.shape(value), value.tobytes())
        elif isinstance(value, float):
            self.key = (float, value.hex())
        elif isinstance(value, complex):
            self.key = (complex, value.real.hex(), value.imag.hex())
        elif isinstance(value, slice):  # not hashable before Python 3.12
            self.key = (slice, *(_Static(v) for v in (value.start, value.stop, value.step)))
        else:
            self.key = (type(value), value)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Static) and self.key == other.key


def jitted(op: Callable[..., Any]) -> Callable[..., Any]:
    """``op`` called under ``jax.jit``: JAX arrays traced, everything else static.

    Calls with the same static arguments and test path (``indexops._testing``) share one
    jitted function, which JAX compiles once per shape and dtype of the arrays. Within
    ``generic_only()`` the op runs eagerly: the generic backend, the oracle of the native
    paths, combines pass by pass with counts read on the host, which no trace can do.
    """
    import jax

    from indexops._testing import active_variant

    signature = inspect.signature(op)
    compiled: dict[Any, Callable[..., Any]] = {}

    @functools.wraps(op)
    def call(*args: Any, **kwargs: Any) -> Any:
        variant = active_variant()
        if variant == "generic":
            return op(*args, **kwargs)
        arguments = dict(signature.bind(*args, **kwargs).arguments)
        for name in STATIC_ARGUMENTS.get(op.__name__, ()):
            value = arguments.get(name)
            if isinstance(value, jax.Array) and value.ndim == 1 and "int" in str(value.dtype):
                arguments[name] = tuple(np.asarray(value).tolist())
        leaves, tree = jax.tree_util.tree_flatten(arguments)
        traced = [isinstance(leaf, jax.Array) for leaf in leaves]
        key = (tree, variant, *(None if t else _Static(leaf) for t, leaf in zip(traced, leaves)))
        if key not in compiled:
            compiled[key] = jax.jit(functools.partial(_rebuilt, op, tree, traced, leaves))
        return compiled[key](*[leaf for t, leaf in zip(traced, leaves) if t])

    return call


def _rebuilt(
    op: Callable[..., Any], tree: Any, traced: list[bool], leaves: list[Any], *arrays: Any
) -> Any:
    import jax

    given = iter(arrays)
    filled = [next(given) if t else leaf for t, leaf in zip(traced, leaves)]
    return op(**jax.tree_util.tree_unflatten(tree, filled))


# -- torch_device and torch_cuda --------------------------------------------------------------

# aten ops that read values on the host (a sync on a GPU, a graph break when compiling)
HOST_READS = ("_local_scalar_dense", "nonzero", "masked_select", "is_nonzero", "equal", "unique")


@contextlib.contextmanager
def _host_read_guard() -> Iterator[list[str]]:
    """Record the host reads of torch ops run within, on the device paths."""
    from torch.utils._python_dispatch import TorchDispatchMode

    from indexops._testing import device_paths

    reads: list[str] = []

    class Guard(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            if any(name in str(func) for name in HOST_READS):
                reads.append(str(func))
            return func(*args, **(kwargs or {}))

    with device_paths(), Guard():
        yield reads


@contextlib.contextmanager
def _cuda_sync_errors() -> Iterator[list[str]]:
    """Turn CUDA host syncs within into errors (``torch.cuda.set_sync_debug_mode``)."""
    import torch

    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        yield []
    finally:
        torch.cuda.set_sync_debug_mode(previous)


# at's methods that scatter with a callable combiner (counted pass by pass on the host)
AT_CALLABLE_COMBINERS = ("divide", "power", "apply")


def _sets_shape_from_values(op: Callable[..., Any], args: tuple, kwargs: dict) -> bool:
    """slice_scatter's start/stop/step/axes given as arrays, and at's boolean indices:
    values that set the result's shape, read on the host as documented."""
    if op.__name__ == "slice_scatter":
        parameters = [*args[2:6], *(kwargs.get(k) for k in ("start", "stop", "step", "axes"))]
        return any(hasattr(value, "shape") for value in parameters)
    if op.__name__ == "at_call":
        items = args[1] if isinstance(args[1], tuple) else (args[1],)
        return any(_is_boolean(item) for item in items)
    return False


def _is_boolean(item: Any) -> bool:
    if isinstance(item, (list, tuple)):
        return any(_is_boolean(entry) for entry in item)
    return isinstance(item, bool) or "bool" in str(getattr(item, "dtype", ""))


def _without_host_reads(
    op: Callable[..., Any], guard: Callable[[], Any], *args: Any, **kwargs: Any
) -> Any:
    """Call ``op`` and fail if it read a value on the host.

    Let through, as documented: a callable ``update_computation`` (its passes are counted on
    the host), the generic backend of ``generic_only()`` (its combiners go pass by pass),
    and slice_scatter's start/stop/step/axes given as arrays (they set the result's shape).
    """
    from indexops import _testing

    if (
        callable(kwargs.get("update_computation"))
        or _testing.active_variant() == "generic"
        or _sets_shape_from_values(op, args, kwargs)
        or (op.__name__ == "at_call" and args[2] in AT_CALLABLE_COMBINERS)
    ):
        return op(*args, **kwargs)
    with guard() as reads:
        result = op(*args, **kwargs)
    assert not reads, f"{op.__name__} read values on the host: {reads}"
    return result
