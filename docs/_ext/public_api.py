"""One reference page per public name, listed from each package's ``__all__``.

When the configuration is read (before Sphinx looks for source files and autosummary
writes its stubs) this writes
``reference/<module>.rst`` with an ``autosummary`` table of the module's functions,
classes and data, so a name added to ``__all__`` gets its page without editing the docs.
It also warns (an error under ``-W``) for a public function or class whose docstring has
no Examples section: numpydoc's own EX01 check would demand one of every attribute too.
Public data (constants) are left out of numpydoc's validation, which would check their
docstrings against the signature of their value's class, and their docstring is the one
written under the assignment in the submodule that defines them (autodoc would otherwise
show their value's class docstring, since the package only imports them).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from numpydoc.docscrape import NumpyDocString
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging

logger = logging.getLogger(__name__)

SECTIONS = (
    ("Functions", inspect.isfunction),
    ("Exceptions", lambda obj: inspect.isclass(obj) and issubclass(obj, BaseException)),
    ("Classes", inspect.isclass),
    ("Data", lambda obj: True),
)


def sections(module: ModuleType) -> dict[str, list[str]]:
    """The names of ``module.__all__`` under the first section whose test they pass."""
    grouped: dict[str, list[str]] = {title: [] for title, _ in SECTIONS}
    for name in module.__all__:
        obj = getattr(module, name)
        title = next(title for title, test in SECTIONS if test(obj))
        grouped[title].append(name)
    return grouped


def page(module: ModuleType) -> str:
    """The reST source of ``module``'s reference page."""
    name = module.__name__
    lines = [name, "=" * len(name), "", f".. automodule:: {name}", "   :no-members:", ""]
    lines += [f".. currentmodule:: {name}", ""]
    for title, names in sections(module).items():
        if not names:
            continue
        lines += [title, "-" * len(title), "", ".. autosummary::", "   :toctree: generated"]
        lines += ["", *(f"   {entry}" for entry in names), ""]
    return "\n".join(lines)


def missing_examples(obj: Any) -> bool:
    """Whether ``obj``'s docstring lacks a doctest in an Examples section."""
    examples = NumpyDocString(inspect.getdoc(obj) or "")["Examples"]
    return not any(line.lstrip().startswith(">>>") for line in examples)


def attribute_doc(package: ModuleType, name: str) -> list[str] | None:
    """The docstring under ``name = ...`` in the submodule of ``package`` that defines it."""
    value = getattr(package, name)
    prefix = f"{package.__name__}."
    for info in pkgutil.iter_modules(getattr(package, "__path__", []), prefix):
        module = importlib.import_module(info.name)
        if getattr(module, name, None) is not value:
            continue
        docs = ModuleAnalyzer.for_module(info.name).find_attr_docs()
        if ("", name) in docs:
            return list(docs["", name])
    return None


def data_docstring(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    module_name, _, attribute = name.rpartition(".")
    if what != "data" or module_name not in app.config.public_api_modules:
        return
    doc = attribute_doc(importlib.import_module(module_name), attribute)
    if doc is not None:
        lines[:] = doc


def write_pages(app: Sphinx, config: Config) -> None:
    folder = Path(app.srcdir) / "reference"
    for module_name in config.public_api_modules:
        module = importlib.import_module(module_name)
        data = sections(module)["Data"]
        config.numpydoc_validation_exclude = {
            *config.numpydoc_validation_exclude,
            *(rf"^{re.escape(module_name)}\.{name}$" for name in data),
        }
        target = folder / f"{module_name}.rst"
        text = page(module)
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
        for name in module.__all__:
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and missing_examples(obj):
                logger.warning(
                    "%s.%s: a public name needs an Examples section with a doctest",
                    module_name,
                    name,
                )


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("public_api_modules", [], "env")
    # before numpydoc compiles numpydoc_validation_exclude (at the default priority, 500)
    app.connect("config-inited", write_pages, priority=400)
    app.connect("autodoc-process-docstring", data_docstring, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
