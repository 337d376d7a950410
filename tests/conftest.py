"""The ``xp`` fixture: every test that takes it runs once per installed backend.

``INDEXOPS_BACKENDS`` (comma separated, e.g. ``numpy,torch``) narrows the set; each nox
session tests one backend this way. A backend that is not installed, or has no device,
is skipped with the reason, never dropped silently.

``torch_cuda`` is ``torch`` with every array the tests create on the GPU (``cuda``); on a
GPU machine benchmarks/gpu.sh runs ``INDEXOPS_BACKENDS=cupy,torch_cuda``.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

ALL_BACKENDS = ("numpy", "array_api_strict", "torch", "jax", "cupy", "torch_cuda")

settings.register_profile(
    "default",
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "ci", parent=settings.get_profile("default"), max_examples=40, derandomize=True
)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=600)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def selected_backends() -> tuple[str, ...]:
    chosen = os.environ.get("INDEXOPS_BACKENDS", "")
    if not chosen.strip():
        return ALL_BACKENDS
    names = tuple(name.strip() for name in chosen.split(",") if name.strip())
    unknown = set(names) - set(ALL_BACKENDS)
    if unknown:
        raise pytest.UsageError(f"INDEXOPS_BACKENDS names unknown backends {sorted(unknown)}")
    return names


class OnDevice(ModuleType):
    """Namespace ``xp`` whose creation functions put arrays on ``device`` unless told otherwise.

    Everything else (dtypes, functions on existing arrays) is ``xp``'s own. The name keeps
    ``xp.__name__`` (so ``helpers.backend_name`` still finds the library) plus the device.
    """

    CREATION = ("asarray", "zeros", "ones", "empty", "full", "arange", "linspace", "eye")

    def __init__(self, xp: ModuleType, device: str) -> None:
        super().__init__(f"{xp.__name__}[{device}]")
        self._xp, self._device = xp, device

    def __getattr__(self, name: str) -> object:
        attr = getattr(self._xp, name)
        return functools.partial(attr, device=self._device) if name in self.CREATION else attr


def load_backend(name: str) -> ModuleType:
    """The Array API namespace of backend ``name``, or skip the test with a reason."""
    try:
        if name == "numpy":
            return importlib.import_module("numpy")
        if name == "array_api_strict":
            strict = importlib.import_module("array_api_strict")
            from array_api_strict._flags import supported_versions

            strict.set_array_api_strict_flags(api_version=max(supported_versions))
            return strict
        if name == "torch":
            importlib.import_module("torch")
            return importlib.import_module("array_api_compat.torch")
        if name == "torch_cuda":
            if not importlib.import_module("torch").cuda.is_available():
                pytest.skip("torch is installed but CUDA is not available")
            return OnDevice(importlib.import_module("array_api_compat.torch"), "cuda")
        if name == "jax":
            jax = importlib.import_module("jax")
            jax.config.update("jax_enable_x64", True)
            return importlib.import_module("jax.numpy")
        if name == "cupy":
            cupy = importlib.import_module("cupy")
            if cupy.cuda.runtime.getDeviceCount() < 1:
                pytest.skip("cupy is installed but no GPU is present")
            return cupy
    except ImportError as exc:
        pytest.skip(f"backend {name} is not installed ({exc})")
    except Exception as exc:  # a CUDA runtime without a device raises its own errors
        pytest.skip(f"backend {name} is unusable here ({type(exc).__name__}: {exc})")
    raise AssertionError(f"no loader for backend {name}")


@pytest.fixture(scope="session", params=selected_backends())
def xp(request: pytest.FixtureRequest) -> ModuleType:
    """The namespace of one backend; tests build their arrays with ``xp.asarray``."""
    return load_backend(request.param)
