"""Who may import whom (DESIGN decision 22, docs/architecture.md "Rooms"): the package's layers from the
bottom up; a module imports its own layer and the layers below, never one above."""

from __future__ import annotations

import ast
from fnmatch import fnmatch
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "memsql_assets"

# Bottom to top. A pattern ending in "/" is a folder and everything in it; otherwise files at that depth.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__.py", "lib/*.py", "lib/sql/"),  # lib's leaves: paths, errors, vocabulary, config, conditions, sql
    ("lib/sources/", "lib/models/", "lib/memory/"),
    ("lib/benchmark/", "lib/trajectories/"),
    ("lib/agent/", "lib/evaluation/", "lib/quality/"),
    ("lib/reference/",),
    ("lib/harness/",),
    ("lib/viewer/", "lib/report/"),
    ("defs/", "definitions.py"),
    ("orchestration/",),
    ("cli/", "cli_entry.py"),
)


def layer(rel: str) -> int | None:
    """The layer of a file given by its path under the package (a folder's pattern wins over the files')."""
    for folders in (True, False):
        for i, patterns in enumerate(LAYERS):
            for p in patterns:
                if p.endswith("/") is folders and (
                    rel.startswith(p) if folders else fnmatch(rel, p) and rel.count("/") == p.count("/")
                ):
                    return i
    return None


def module_file(module: str, root: Path) -> str:
    """The path under the package of module `module` (`memsql_assets.x.y`): x/y/__init__.py or x/y.py."""
    parts = module.split(".")[1:]
    folder = "/".join(parts)
    return f"{folder}/__init__.py".lstrip("/") if (root / folder).is_dir() else f"{folder}.py"


def imports(path: Path, root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, module) of every memsql_assets module one file imports, at any depth of its code
    (`from package import submodule` counts as the submodule)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            subs = [f"{node.module}.{a.name}" for a in node.names]
            subs = [m for m in subs if (root / module_file(m, root)).is_file()]
            found += [(node.lineno, m) for m in subs or [node.module]]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, m) for line, m in found if m == "memsql_assets" or m.startswith("memsql_assets.")]


def upward_imports(root: Path = PACKAGE) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for line, module in imports(path, root):
            if layer(module_file(module, root)) > layer(rel):
                out.append(f"{rel}:{line} imports {module}, a layer above")
    return out


def test_every_module_has_a_layer():
    assert [p for p in sorted(PACKAGE.rglob("*.py")) if layer(p.relative_to(PACKAGE).as_posix()) is None] == []


def test_nothing_imports_upward():
    assert upward_imports() == []


def test_an_upward_import_is_found(tmp_path):
    for rel, text in (
        ("lib/sql/x.py", "from memsql_assets.lib.harness.settings import EvalSettings\n"),
        ("lib/models/y.py", "def f():\n    import memsql_assets.lib.reference.builtins\n"),
        ("defs/z.py", "from memsql_assets.lib.paths import memsql_home\n"),
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    assert upward_imports(tmp_path) == [
        "lib/models/y.py:2 imports memsql_assets.lib.reference.builtins, a layer above",
        "lib/sql/x.py:1 imports memsql_assets.lib.harness.settings, a layer above",
    ]


def test_the_layers_read_as_the_design_says():
    assert layer("lib/vocabulary.py") == layer("lib/conditions.py") == layer("lib/sql/sandbox.py") == 0
    assert layer("lib/agent/__init__.py") == layer("lib/agent/loop.py") < layer("lib/reference/builtins.py")
    assert layer("lib/reference/builtins.py") < layer("lib/harness/runner.py") < layer("lib/report/build.py")
    assert layer("definitions.py") < layer("orchestration/partition.py") < layer("cli_entry.py")


def test_the_run_workers_never_preload_the_cli():
    from memsql_assets.defs.evaluation.concurrent_runs import PRELOAD

    assert not [m for m in PRELOAD if m.startswith("memsql_assets.cli")]


def private_imports(root: Path = PACKAGE) -> list[str]:
    """`from memsql_assets.x import _name`: a module reaching into another's private names."""
    return [
        f"{path.relative_to(root)}:{node.lineno} imports {alias.name} from {node.module}"
        for path in sorted(root.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memsql_assets")
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]


def test_no_module_imports_another_modules_private_name(tmp_path):
    assert private_imports() == []
    (tmp_path / "x.py").write_text("from memsql_assets.lib.benchmark.generate import _hidden\n", encoding="utf-8")
    assert private_imports(tmp_path) == ["x.py:1 imports _hidden from memsql_assets.lib.benchmark.generate"]
