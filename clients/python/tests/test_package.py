"""The package's promises about itself: Python 3.9 syntax, the standard library only, documented API,
and packaging metadata that ``pip install clients/python`` can use."""

from __future__ import annotations

import ast
import inspect
import re
import sys

import cloudnotes_client
from conftest import CLIENT_ROOT

PACKAGE = CLIENT_ROOT / "cloudnotes_client"
SOURCES = sorted(PACKAGE.glob("*.py")) + [CLIENT_ROOT / "examples" / "import_samples.py"]
# Used when sys.stdlib_module_names (3.10+) is missing.
KNOWN_STDLIB = {"__future__", "argparse", "collections", "dataclasses", "datetime", "io", "itertools", "json", "os",
                "shutil", "subprocess", "sys", "tempfile", "threading", "time", "typing", "unicodedata"}


def test_the_sources_are_python_3_9():
    assert len(SOURCES) >= 7
    for path in SOURCES:
        source = path.read_text(encoding="utf-8")
        ast.parse(source, str(path), feature_version=(3, 9))   # no match statements, no 3.10+ syntax
        # Annotations stay strings, so `X | None` in one can never be evaluated on 3.9.
        assert "from __future__ import annotations" in source, f"{path.name} lacks the __future__ import"


def test_the_package_uses_the_standard_library_only():
    stdlib = set(getattr(sys, "stdlib_module_names", KNOWN_STDLIB))
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in stdlib or top == "cloudnotes_client", f"{path.name} imports {name}"


def _public_members():
    for module_name in ("client", "connection", "errors", "memo_requests", "mirror", "models", "transport", "window"):
        module = getattr(cloudnotes_client, module_name)
        yield module.__name__, module
        for name, member in vars(module).items():
            if name.startswith("_") or getattr(member, "__module__", None) != module.__name__:
                continue
            if inspect.isclass(member):
                yield f"{module.__name__}.{name}", member
                for attribute, value in vars(member).items():
                    if attribute.startswith("_") or not (inspect.isfunction(value) or isinstance(
                            value, (property, classmethod, staticmethod))):
                        continue
                    yield f"{module.__name__}.{name}.{attribute}", getattr(value, "fget", None) or getattr(
                        value, "__func__", value)
            elif inspect.isfunction(member):
                yield f"{module.__name__}.{name}", member


def test_every_public_module_class_and_function_has_a_one_line_summary():
    checked = 0
    for qualified, member in _public_members():
        doc = member.__doc__
        assert doc and doc.strip(), f"{qualified} has no docstring"
        lines = doc.strip().splitlines()
        assert lines[0].strip(), f"{qualified}: the docstring does not start with a summary"
        assert len(lines) == 1 or not lines[1].strip(), f"{qualified}: the summary is not one line"
        checked += 1
    assert checked > 80


def test_the_public_names_are_exported():
    for name in cloudnotes_client.__all__:
        assert hasattr(cloudnotes_client, name), name
    for name in ("CloudNotesClient", "Mirror", "Memo", "MemoRow", "ListPage", "CloudNotesError", "ServerDiedError",
                 "RequestTimeoutError", "VersionConflict"):
        assert name in cloudnotes_client.__all__


def test_the_pyproject_declares_a_dependency_free_package_for_python_3_9():
    text = (CLIENT_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the few lines that matter, by pattern
        assert re.search(r'^requires-python = ">=3\.9"$', text, re.M)
        assert re.search(r'^dependencies = \[\]$', text, re.M)
        assert re.search(r'^version = "' + re.escape(cloudnotes_client.__version__) + '"$', text, re.M)
        return
    data = tomllib.loads(text)
    assert data["build-system"]["build-backend"] == "setuptools.build_meta"
    project = data["project"]
    assert project["name"] == "cloudnotes-client"
    assert project["version"] == cloudnotes_client.__version__
    assert project["requires-python"] == ">=3.9"
    assert project["dependencies"] == []
    assert data["tool"]["setuptools"]["packages"] == ["cloudnotes_client"]
    assert (CLIENT_ROOT / project["readme"]).is_file()
