"""The ``xp`` fixture: every test that takes it runs once per test backend.

``INDEXOPS_BACKENDS`` (comma separated, e.g. ``numpy,torch``) narrows the set; each nox
session tests one library and its variants this way (see backends.py). A backend that is
not installed, or has no device, is skipped with the reason, never dropped silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import ModuleType

import helpers
import pytest
from backends import OPS, Backend
from hypothesis import HealthCheck, settings

import indexops

settings.register_profile(
    "default",
    deadline=None,
    max_examples=60,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,  # xp's per-test setup is the same for every example
    ],
)
settings.register_profile(
    "ci", parent=settings.get_profile("default"), max_examples=40, derandomize=True
)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=600)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def selected_backends() -> tuple[Backend, ...]:
    chosen = os.environ.get("INDEXOPS_BACKENDS", "")
    if not chosen.strip():
        return tuple(Backend)
    names = [name.strip() for name in chosen.split(",") if name.strip()]
    unknown = sorted(set(names) - {b.value for b in Backend})
    if unknown:
        raise pytest.UsageError(
            f"INDEXOPS_BACKENDS names unknown backends {unknown}; "
            f"known: {', '.join(b.value for b in Backend)}"
        )
    return tuple(Backend(name) for name in names)


@pytest.fixture(params=selected_backends(), ids=str)
def backend(request: pytest.FixtureRequest) -> Backend:
    """The test backend (see backends.py): its properties say what a test may expect."""
    return request.param


@pytest.fixture
def xp(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The namespace tests make arrays with; the ops are called the backend's way."""
    namespace = backend.namespace()
    for name in OPS:
        wrapped = backend.wrap(getattr(indexops, name))
        if wrapped is not None:
            monkeypatch.setattr(indexops, name, wrapped)
    wrapped_at = backend.wrap_at(indexops.at)
    if wrapped_at is not None:
        monkeypatch.setattr(indexops, "at", wrapped_at)
    helpers.active = backend
    try:
        yield namespace
    finally:
        helpers.active = None
