"""Doctests run where the backends they import run.

The docs show torch, jax and other optional backends next to NumPy; a nox session installs
only one backend and names it in ``INDEXOPS_BACKENDS`` (tests/backends.py). A doctest item
(a Markdown file or a docstring) whose examples import the library of a backend that does
not run is deselected, as is every test of such a backend (tests/conftest.py), so that
``INDEXOPS_BACKENDS=numpy`` runs no torch, JAX or Dask code; one that imports another
missing package is skipped with the package named.
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "tests"))
import backends  # tests/backends.py, which tests/conftest.py imports too

# XLA compiles each of the tests' JAX programs to run it once or twice on a few elements,
# and compiling is most of the suite's time on JAX. Unless JAX_DISABLE_MOST_OPTIMIZATIONS is
# given, the tests compile for speed of compiling: JAX's flag turns LLVM's optimisation of
# the machine code off (a fifth of the CPU time of a jitted call), and XLA's CPU backend
# emits its loops as LLVM IR directly instead of through its MLIR fusion emitters (a third
# of the CPU time of the tests on JAX). Neither changes XLA's passes over the program, and
# the emitters' loops give the default's results but one: some float8_e4m3fn results past
# the type's largest value (448 + 46, 2 * 224 + 48: 28 of the 64,516 sums 2a + b of finite
# values) become -0.0, not NaN (under this flag only, tests/helpers.py rejects a drawn case
# that meets it; tests/test_harness.py checks both emitters). Set
# JAX_DISABLE_MOST_OPTIMIZATIONS=0 to test the machine code users run (CI's jax session
# does). (Read when jax is imported, which no module imports before this one.)
FAST_COMPILE_XLA_FLAG = "--xla_cpu_use_fusion_emitters=false"
COMPILES_FOR_SPEED = "JAX_DISABLE_MOST_OPTIMIZATIONS" not in os.environ
if COMPILES_FOR_SPEED:
    os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"] = "1"
    given_flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_use_fusion_emitters" not in given_flags:
        os.environ["XLA_FLAGS"] = f"{given_flags} {FAST_COMPILE_XLA_FLAG}".strip()

# The array libraries of the backends, by the package name a doctest imports.
LIBRARIES = {"torch": "torch", "jax": "jax", "dask": "dask", "cupy": "cupy",
             "array_api_strict": "array_api_strict"}  # fmt: skip


def imported_packages(test: doctest.DocTest) -> list[str]:
    """Top-level names of the packages that the examples of ``test`` import."""
    names: list[str] = []
    for example in test.examples:
        if example.options.get(doctest.SKIP):
            continue
        try:
            tree = ast.parse(example.source)
        except SyntaxError:  # the doctest itself reports it
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module.split(".")[0])
    return names


# The docstrings of these packages are the API pages' examples: each runs in a namespace of
# its own, not its module's, so that one which leans on a name of the module fails here.
PACKAGES = ("indexops.", "indexops_npu.")

# Backend modules import their library: their docstrings are collected where it runs.
collect_ignore = [
    f"src/indexops/{module}.py"
    for library, module in (
        ("torch", "_backends/_torch"),
        ("jax", "_backends/_jax"),
        ("dask", "_backends/_dask"),
        ("dask", "_execute/chunked"),
        ("cupy", "_backends/_cupy"),
    )
    if not backends.runs(library)
]
# The Sphinx configuration, its extensions (which import Sphinx) and the build's outputs are
# not documentation to test; the pages and the figure scripts are.
collect_ignore += ["docs/conf.py", "docs/_ext", "docs/_build", "docs/_generated"]
# The compiled kernels import numba (the fast extra), which the nox sessions leave out.
if importlib.util.find_spec("numba") is None:
    collect_ignore.append("src/indexops/_backends/_kernels.py")


def pytest_configure(config: pytest.Config) -> None:
    """``-n N`` hands tests out by work stealing unless ``--dist`` says otherwise: a few
    tests (torch.compile, jax.jit drawn cases) take seconds, and xdist's default ``load``
    left one worker running them while the other sat idle at the end."""
    given = config.invocation_params.args
    if config.getoption("dist", None) == "load" and not any(
        arg == "--dist" or arg.startswith("--dist=") for arg in given
    ):
        config.option.dist = "worksteal"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, drop = [], []
    for item in items:
        test = getattr(item, "dtest", None)  # set on pytest's doctest items only
        if not isinstance(test, doctest.DocTest):
            keep.append(item)
            continue
        if test.name.startswith(PACKAGES):
            test.globs = {"__name__": "__main__"}  # as pasted into a fresh interpreter
        names = dict.fromkeys(imported_packages(test))
        if any(name in LIBRARIES and not backends.runs(LIBRARIES[name]) for name in names):
            drop.append(item)
            continue
        keep.append(item)
        missing = [name for name in names if importlib.util.find_spec(name) is None]
        if missing:
            verb = "is" if len(missing) == 1 else "are"
            reason = f"needs {', '.join(missing)}, which {verb} not installed"
            item.add_marker(pytest.mark.skip(reason=reason))
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_sessionfinish() -> None:
    """Drop torch.compile's caches while the interpreter still runs: at exit, Dynamo's
    weak-reference callbacks print KeyErrors for globals already gone."""
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "_dynamo"):
        torch._dynamo.reset()
