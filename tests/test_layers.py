"""The import direction: pages (web/) and the JSON API call services; services use models and core;
core knows no feature; the worker is the top of the stack. Read from the source with the standard
library (ast), deferred imports inside functions included, so a cycle cannot hide in a function."""

import ast
from collections import defaultdict
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

import redolab

PACKAGE = Path(redolab.__file__).resolve().parent
TOP = {"redolab.main", "redolab.cli"}  # the entry points: they may import anything


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("redolab", *path.relative_to(PACKAGE).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str) -> dict[str, set[str]]:
    """Each redolab module `name` imports, with the names it takes from it."""
    tree = ast.parse(MODULES[name].read_text())
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, set[str]] = defaultdict(set)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("redolab"):
                    found[alias.name].add("*")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            if not base.startswith("redolab"):
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in MODULES:
                    found[submodule].add("*")
                else:
                    found[base].add(alias.name)
    found.pop(name, None)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _edges():
    for name, imported in GRAPH.items():
        for target, names in imported.items():
            yield name, target, names


def _area(name: str) -> str:
    return name.split(".")[1] if name.count(".") else ""


def _is_api(name: str) -> bool:
    return name.endswith(".api")


def _is_model(name: str) -> bool:
    return name.endswith(".models") or name == "redolab.core.db"


def test_the_graph_was_read():
    """The reader sees the modules and their imports (a broken reader would pass every rule below)."""
    assert {"redolab.core.units", "redolab.web.environments", "redolab.jobs.worker"} <= set(MODULES)
    assert "redolab.web.environments" in GRAPH["redolab.main"]
    assert "redolab.core.units" in GRAPH["redolab.charts.runs"]


def test_no_cycles():
    """No module reaches itself through its imports, deferred ones included. The root package
    (only the version) and a package's own __init__ are left out: importing a.b runs a first."""
    graph = {
        name: {t for t in imported if t != "redolab" and not name.startswith(t + ".")}
        for name, imported in GRAPH.items()
    }
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")


def test_core_knows_no_feature():
    wrong = [(a, b) for a, b, _ in _edges() if _area(a) == "core" and b != "redolab" and _area(b) != "core"]
    assert wrong == []


def test_models_import_only_models_and_core():
    wrong = [
        (a, b) for a, b, _ in _edges() if _is_model(a) and b != "redolab" and not (_is_model(b) or _area(b) == "core")
    ]
    assert wrong == []


def test_pages_and_the_api_are_imported_only_by_the_entry_points():
    wrong = [
        (a, b)
        for a, b, _ in _edges()
        if (_area(b) == "web" or _is_api(b)) and a not in TOP and not (_area(a) == "web" and _area(b) == "web")
    ]
    assert wrong == []


def test_the_worker_is_the_top_of_the_stack():
    wrong = [(a, b) for a, b, _ in _edges() if b == "redolab.jobs.worker" and a not in TOP]
    assert wrong == []


def test_charts_serve_pages_only():
    """Charts are presentation: web/ (and the report page) draw them; no service depends on them."""
    wrong = [(a, b) for a, b, _ in _edges() if _area(b) == "charts" and _area(a) not in ("charts", "web")]
    assert wrong == []


def test_no_private_name_crosses_a_module():
    wrong = [
        (a, b, sorted(n for n in names if n.startswith("_") and not n.startswith("__")))
        for a, b, names in _edges()
        if any(n.startswith("_") and not n.startswith("__") for n in names)
    ]
    assert wrong == []


def test_remote_access_knows_no_experiment():
    """remote/ (SSH, this machine, deployment, host settings) serves runs, sweeps and disk tests; it
    reaches only core, the environment's hosts and credentials, and the probe's source."""
    allowed = ("core", "remote", "environments", "redoprobe")
    wrong = [(a, b) for a, b, _ in _edges() if _area(a) == "remote" and b != "redolab" and _area(b) not in allowed]
    assert wrong == []
