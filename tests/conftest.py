"""The ``backend`` and ``xp`` fixtures: every test that takes them runs once per backend.

Tests are generated for the backends that run (backends.py: those ``INDEXOPS_BACKENDS``
selects, less those this machine cannot run); pytest's header names the ones left out and
why. ``@pytest.mark.backends(*conditions)`` narrows a test to the backends that match one
of the conditions (a Backend, a library name or a predicate; see ``Backend.matches``), and
stacked marks narrow further; a
test without the ``backend`` fixture so marked is deselected unless such a backend runs, so
that ``INDEXOPS_BACKENDS=numpy`` runs no torch, JAX or Dask code.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import backends
import helpers
import pytest
from backends import OPS, Backend
from hypothesis import HealthCheck, settings

import indexops

# The compiled kernels load now, not on a thread from the first large call: every test sees
# the paths it names (tests/test_kernel_loading.py tests the load on a thread itself).
indexops.load_host_kernels()

# The README's test command draws as many examples as CI's gate (the ci profile adds a
# fixed seed); 60 took that command over its 4 minutes on 2 cores where numba compiles the
# kernels on a first run. HYPOTHESIS_PROFILE=thorough draws 600.
settings.register_profile(
    "default",
    deadline=None,
    max_examples=40,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,  # xp's per-test setup is the same for every example
    ],
)
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=600)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# Modules that import a library at the top, collected only where its backends run.
collect_ignore = [
    module
    for module, library in (
        ("test_dask.py", "dask"),
        ("test_sharding.py", "jax"),
        ("test_torch_modes.py", "torch"),
    )
    if not backends.runs(library)
]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "backends(*conditions): run only on backends matching a condition (a Backend, a "
        "library name or a predicate); without the backend fixture, only where one runs",
    )


def pytest_report_header() -> list[str]:
    left_out = [
        f"{b} ({backends.unusable(b)})" for b in backends.selected() if backends.unusable(b)
    ]
    lines = [f"indexops backends: {', '.join(map(str, backends.running())) or 'none'}"]
    if left_out:
        lines.append(f"indexops backends left out: {', '.join(left_out)}")
    return lines


def conditions(node: pytest.Function | pytest.Metafunc) -> list[tuple]:
    """The conditions of each ``backends`` mark: a backend must match one condition of
    every mark (stacked marks narrow)."""
    return [mark.args for mark in node.iter_markers("backends")]


def wanted_by(backend: Backend, marks: list[tuple]) -> bool:
    return all(any(map(backend.matches, conditions)) for conditions in marks)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        marks = conditions(metafunc.definition)
        chosen = [b for b in backends.running() if wanted_by(b, marks)]
        metafunc.parametrize("backend", chosen, ids=str)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect marked tests without the backend fixture whose backends do not run (and
    the empty parametrizations pytest makes of tests with it where none matches)."""
    keep, drop = [], []
    for item in items:
        wanted = conditions(item) if isinstance(item, pytest.Function) else []
        params = getattr(getattr(item, "callspec", None), "params", {})
        with_backend = "backend" in getattr(item, "fixturenames", ())
        if with_backend and not isinstance(params.get("backend"), Backend):
            drop.append(item)  # no backend matches its conditions here
        elif not with_backend and not all(any(map(backends.runs, c)) for c in wanted):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


ARRAY_LIBRARIES = ("torch", "jax", "dask", "cupy")
stray_in_workers: set[str] = set()  # the controller's, under pytest-xdist


def stray_libraries() -> set[str]:
    """The array libraries this process imported none of whose backends were selected."""
    return {name for name in ARRAY_LIBRARIES if name in sys.modules and not backends.runs(name)}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """An xdist worker is done: keep what it imported (see pytest_sessionfinish)."""
    stray_in_workers.update(getattr(node, "workeroutput", {}).get("stray_libraries", ()))


@pytest.hookimpl(trylast=True)  # after the root conftest's, which drops torch's caches
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Report the array libraries imported without their backends; then collect garbage
    once and freeze what survives, so that the final collections of this process are
    quick (see :func:`freeze_survivors`)."""
    report_stray_libraries(session)
    freeze_survivors()


def report_stray_libraries(session: pytest.Session) -> None:
    """Fail a run that imported an array library none of whose backends it selected:
    ``INDEXOPS_BACKENDS=numpy`` must run no torch, JAX or Dask code. Under ``-n`` each
    worker hands its imports to the controller, which reports them."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker
        workeroutput["stray_libraries"] = sorted(stray_libraries())
        return
    stray = sorted(stray_libraries() | stray_in_workers)
    if stray:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = f"imported {', '.join(stray)} without running its backends"
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(f"ERROR: {message} (mark the test: backends(...))", red=True)


def freeze_survivors() -> None:
    """Collect garbage, then move every object left to the collector's permanent
    generation, which later collections do not walk.

    pytest collects garbage again at its very end (to report exceptions raised in
    finalizers), after an xdist worker has told the controller it is done. That walked the
    whole heap the backends leave (jax, torch, Hypothesis: seconds per collection on a busy
    machine), and execnet interrupts a worker still running 5 s after it asks it to stop:
    a SIGINT, whose KeyboardInterrupt surfaced in Hypothesis' gc callback as a traceback.
    Here, before the worker says it is done, the slow collection runs once (the garbage and
    the finalizers' exceptions are the same) and the last ones have only new objects to walk.
    """
    gc.collect()
    gc.freeze()


@pytest.fixture(params=[False, True], ids=["plain", "prefetched"])
def prefetched(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether the compiled row writes ask for the rows of the updates ahead: into every
    table, or (as into small tables) into none."""
    if request.param:
        from indexops._backends import _host

        kernels = _host.load_kernels()
        if kernels is not None:
            monkeypatch.setattr(kernels, "PREFETCH_MIN_BYTES", 0)
    return bool(request.param)


@pytest.fixture
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
