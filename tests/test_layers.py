"""The folders are the layers. Folder order is import order, lowest first:

    core, redoprobe -> auth, remote -> environments -> jobs -> redo, runs, collect -> disktest, sweeps,
    charts, lab, rehearsals -> hadr -> planning -> watches -> web -> the top (worker, main, cli, models: the
    entry points). Rehearsals sit beside sweeps: they queue runs together over node pairs.

A module imports only what sits at or below its folder; folders of one level may import each other
only without a cycle between packages. Pages (web/) and the JSON API call services; services use
models and core. Read from the source with the standard library (ast), deferred imports inside
functions included, so an upward arrow cannot hide in a function; and outside the CLI (which keeps
its start-up fast) every import of redolab sits at the top of its file."""

import ast
import functools
from collections import defaultdict
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

import redolab

PACKAGE = Path(redolab.__file__).resolve().parent
TOP = {"redolab.main", "redolab.cli", "redolab.worker", "redolab.handlers", "redolab.models"}  # entry points, cli.*
LEVELS = (
    ("core", "redoprobe"),
    ("auth", "remote"),
    ("environments",),
    ("jobs",),
    ("redo", "runs", "collect"),
    ("disktest", "sweeps", "charts", "lab", "rehearsals", "preflight"),
    ("hadr",),
    ("planning",),
    ("watches",),
    ("web",),
)
LEVEL = {folder: rank for rank, folders in enumerate(LEVELS) for folder in folders}


def _is_top(name: str) -> bool:
    """An entry point: a root module of TOP, or a module of the cli package."""
    return name in TOP or name.startswith("redolab.cli.")


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


@functools.cache
def graph() -> dict[str, dict[str, set[str]]]:
    """Every module's imports, read when a test first asks (not at collection, in every xdist worker)."""
    return {name: _imports(name) for name in MODULES}


def _edges():
    for name, imported in graph().items():
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
    assert {"redolab.core.units", "redolab.web.environments", "redolab.worker"} <= set(MODULES)
    assert "redolab.web.environments" in graph()["redolab.main"]
    assert "redolab.core.units" in graph()["redolab.charts.runs"]


def _level(name: str) -> int:
    """The module's floor: its folder's level; the root modules (worker, main, cli, models) are the top."""
    area = _area(name)
    if area in LEVEL:
        return LEVEL[area]
    assert _is_top(name) or name == "redolab", f"{name}: a folder or root module missing from LEVELS"
    return len(LEVELS)


def test_every_module_has_a_level():
    assert {_area(name) for name in MODULES if name.count(".") > 1 and not _is_top(name)} <= set(LEVEL)
    for name in MODULES:
        _level(name)


def test_no_upward_import():
    """Folder order is import order: nothing imports a folder above its own, deferred imports included."""
    wrong = [(a, b) for a, b, _ in _edges() if b != "redolab" and _level(b) > _level(a)]
    assert wrong == []


def test_no_cycle_between_packages():
    """Folders of one level (redo and runs; disktest, sweeps, charts and lab) may use each other one way only."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b, _ in _edges():
        if b != "redolab" and _area(a) != _area(b):
            graph[_area(a)].add(_area(b))
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        pytest.fail(f"package cycle: {' -> '.join(error.args[1])}")


def _deferred(name: str) -> list[tuple[int, str]]:
    tree = ast.parse(MODULES[name].read_text())
    found = []
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("redolab")):
                    found.append((node.lineno, node.module or "."))
                elif isinstance(node, ast.Import) and any(a.name.startswith("redolab") for a in node.names):
                    found.append((node.lineno, node.names[0].name))
    return found


def test_imports_sit_at_the_top_of_the_file():
    """An import inside a function hides an arrow from a reader; only the CLI keeps them (start-up time)."""
    wrong = {name: _deferred(name) for name in MODULES if not name.startswith("redolab.cli") and _deferred(name)}
    assert wrong == {}


def test_the_rules_can_fail():
    """The level rule and the deferred-import reader see an arrow when there is one."""
    assert _level("redolab.web.redo") > _level("redolab.planning.plan") > _level("redolab.redo.analysis")
    assert _level("redolab.jobs.models") < _level("redolab.redo.imports")
    assert any(_deferred(name) for name in MODULES if name.startswith("redolab.cli."))  # its lazy imports


def test_no_cycles():
    """No module reaches itself through its imports, deferred ones included. The root package
    (only the version) and a package's own __init__ are left out: importing a.b runs a first."""
    edges = {
        name: {t for t in imported if t != "redolab" and not name.startswith(t + ".")}
        for name, imported in graph().items()
    }
    try:
        tuple(TopologicalSorter(edges).static_order())
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
        if (_area(b) == "web" or _is_api(b)) and not _is_top(a) and not (_area(a) == "web" and _area(b) == "web")
    ]
    assert wrong == []


def test_the_worker_is_the_top_of_the_stack():
    wrong = [(a, b) for a, b, _ in _edges() if b == "redolab.worker" and not _is_top(a)]
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


MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 60


def test_files_and_functions_a_reader_can_hold():
    """No module over 500 lines, no function over 60 (the probe's C is checked by its own review)."""
    long_files, long_functions = [], []
    for name, path in MODULES.items():
        source = path.read_text()
        if len(source.splitlines()) > MAX_FILE_LINES:
            long_files.append(name)
        for node in ast.walk(ast.parse(source)):
            function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if function and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long_functions.append(f"{name}.{node.name}")
    assert long_files == [] and long_functions == []
