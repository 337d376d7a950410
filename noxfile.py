"""One ``tests`` session per backend, plus lint, typecheck, docs and benchmarks.

``nox -s tests`` runs every backend; ``nox -s "tests(backend='torch')"`` one of them.
torch is pinned to 2.13.0 here only: its CPU build installs from a local wheel on our
machines, while an unpinned torch pulls a multi-GB CUDA build.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]

# session -> (what it installs besides ".[test,plot]", the INDEXOPS_BACKENDS it runs: the
# library and its variants from tests/backends.py; torch_cuda and cupy are left out, named
# in pytest's header, without a GPU). No session installs the fast extra: the numpy one
# runs the suite without numba, on the paths taken where it is not installed.
BACKENDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "numpy": (("onnx", "onnxruntime"), ("numpy", "numpy_readonly")),  # onnxruntime: a peer
    "array_api_strict": ((), ("array_api_strict",)),
    "torch": (("torch==2.13.0",), ("torch", "torch_device", "torch_meta", "torch_cuda")),
    "jax": (("jax",), ("jax", "jax_jit")),
    "cupy": (("cupy-cuda12x",), ("cupy",)),  # left out without a GPU; not run in CI
    "dask": (("dask[array]", "distributed"), ("dask",)),
}


@nox.session
@nox.parametrize("backend", list(BACKENDS))
def tests(session: nox.Session, backend: str) -> None:
    """The test suite on one backend; posargs go to pytest."""
    packages, names = BACKENDS[backend]
    session.install("-e", ".[test,plot]", *packages)
    env = {"INDEXOPS_BACKENDS": ",".join(names)}
    session.run("python", "-m", "pytest", *session.posargs, env=env)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff lint and format check."""
    session.install("ruff>=0.5")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy on the library and the emulator."""
    session.install("-e", ".", "mypy>=1.10", "numpy")
    session.run("mypy")


# Warnings (numpydoc validation, broken references, with -n every unresolved name) are
# errors; -E rereads every page, so an unchanged page's warnings are not skipped.
SPHINX_BUILD = (
    "sphinx-build",
    "-W",
    "--keep-going",
    "-n",
    "-E",
    "-b",
    "html",
    "docs",
    "docs/_build/html",
)


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site in docs/_build/html; posargs go to sphinx-build."""
    session.install("-e", ".[docs]")
    session.run(*SPHINX_BUILD, *session.posargs)


@nox.session
def site(session: nox.Session) -> None:
    """The site built from a copy of the docs into docs/_build, its pages screenshot at a
    laptop's and a phone's width and measured (needs Chromium); posargs go to the script."""
    session.install("-e", ".[docs]")
    session.run("python", "docs/screenshots.py", "--check", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmarks on numpy, torch and jax (pass --quick for a short run)."""
    session.install("-e", ".[plot]", "torch==2.13.0", "jax")
    for backend in ("numpy", "torch"):
        session.run("python", "-m", "benchmarks.run", "--backend", backend, *session.posargs)
