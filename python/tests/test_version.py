"""One version, one place: pecheck.__version__ and the wheel's metadata are CMakeLists.txt's
project(pecheck VERSION ...). The native module's stub (pecheck/_core.pyi) ships in the package and
names every function pecheck._core exports, each with the module's parameters in its order and its
return type."""
import ast
import importlib.metadata
import importlib.resources
import re
from pathlib import Path

import pytest

import pecheck
from pecheck import _core

ROOT = Path(__file__).resolve().parents[2]  # python/tests/ -> the repository


def repo_text(path):
    if not (ROOT / path).is_file():
        pytest.skip(f"no {path} under {ROOT}: the tests run outside the repository")
    return (ROOT / path).read_text(encoding="utf-8")


def cmake_version():
    # The regex of [tool.scikit-build.metadata.version] in python/pyproject.toml.
    match = re.search(r"(?m)^project\(pecheck VERSION (?P<value>[0-9]+(?:\.[0-9]+)*)", repo_text("CMakeLists.txt"))
    assert match, "CMakeLists.txt: no project(pecheck VERSION ...)"
    return match["value"]


def test_the_version_is_the_cmake_projects():
    assert pecheck.__version__ == cmake_version() == importlib.metadata.version("pecheck")


def test_the_version_is_written_once():
    pyproject = repo_text("python/pyproject.toml")
    assert re.search(r'(?m)^dynamic = \["version"\]', pyproject) and not re.search(r"(?m)^version\s*=", pyproject)
    assert 'input = "../CMakeLists.txt"' in pyproject
    assert not re.search(r"(?m)^__version__\s*=\s*['\"]", repo_text("python/pecheck/__init__.py"))


def defs(source):
    """name -> (parameter names, return annotation) of each top-level def in source."""
    tree = ast.parse(source)
    return {f.name: ([a.arg for a in f.args.args + f.args.kwonlyargs], ast.unparse(f.returns) if f.returns else None)
            for f in tree.body if isinstance(f, ast.FunctionDef)}


def test_the_stub_ships_and_matches_the_native_module():
    stub = importlib.resources.files("pecheck").joinpath("_core.pyi")
    assert stub.is_file(), "pecheck/_core.pyi is not in the installed package"
    stubbed = defs(stub.read_text())
    exported = {n: getattr(_core, n) for n in dir(_core) if not n.startswith("_") and callable(getattr(_core, n))}
    assert set(stubbed) == set(exported) and {"run", "catalogue", "time_rope_calls"} <= set(exported)
    for name, fn in exported.items():
        # nanobind's signature of each function: "def run(invoke: object, name: str, ...) -> str".
        (signature, _doc, _defaults), = fn.__nb_signature__
        native = defs(signature + ": ...")[name]
        assert stubbed[name] == native, f"_core.pyi's {name} {stubbed[name]} is not the module's {native}"
