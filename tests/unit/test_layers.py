"""Who may import whom (docs/architecture.md, "Rooms"): lib/ never imports the Dagster wiring or the
CLI, defs/ and orchestration/ never import the CLI, and the vocabulary imports no room that derives from it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "memsql_assets"


def imports(path: Path) -> set[str]:
    """The memsql_assets modules one file imports (absolute imports: the project uses no relative ones)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m.startswith("memsql_assets")}


def offenders(folder: str, forbidden: tuple[str, ...], root: Path = PACKAGE) -> list[str]:
    return [
        f"{path.relative_to(root)} imports {module}"
        for path in sorted((root / folder).rglob("*.py"))
        for module in sorted(imports(path))
        if module.startswith(forbidden)
    ]


def test_lib_imports_neither_dagster_wiring_nor_the_cli():
    assert offenders("lib", ("memsql_assets.defs", "memsql_assets.cli", "memsql_assets.definitions")) == []


def test_defs_never_import_the_cli():
    assert offenders("defs", ("memsql_assets.cli",)) == []


def test_the_orchestration_never_imports_the_cli_and_the_run_workers_never_preload_it():
    from memsql_assets.defs.evaluation.concurrent_runs import PRELOAD

    assert offenders("orchestration", ("memsql_assets.cli",)) == []
    assert not [m for m in PRELOAD if m.startswith("memsql_assets.cli")]


def test_the_vocabulary_imports_only_the_condition_table():
    assert imports(PACKAGE / "lib" / "vocabulary.py") == {"memsql_assets.lib.conditions"}


def test_a_forbidden_import_is_found(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "x.py").write_text("from memsql_assets.cli import main\n", encoding="utf-8")
    assert offenders("lib", ("memsql_assets.cli",), root=tmp_path) == ["lib/x.py imports memsql_assets.cli"]



def test_the_agent_uses_the_trajectories_and_the_evaluation_the_benchmark_never_the_reverse():
    assert offenders("lib/trajectories", ("memsql_assets.lib.agent",)) == []
    assert offenders("lib/benchmark", ("memsql_assets.lib.evaluation",)) == []
