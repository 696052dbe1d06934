"""dagster-dbt builds the asset graph from target/manifest.json: an edit under dbt_project/ must reach it."""

from __future__ import annotations

import json
import shutil

from memsql_assets.lib.report.dbt_cli import DBT_DIR, ensure_manifest


def _models(manifest) -> set[str]:
    nodes = json.loads(manifest.read_text())["nodes"].values()
    return {n["name"] for n in nodes if n["resource_type"] == "model"}


def test_a_changed_project_is_parsed_again(tmp_path):
    project = tmp_path / "dbt_project"
    shutil.copytree(DBT_DIR, project, ignore=shutil.ignore_patterns("target", "logs"))
    home = tmp_path / "home"

    manifest = ensure_manifest(home, project_dir=project)
    assert "agg_probe" not in _models(manifest)
    parsed_at = manifest.stat().st_mtime_ns

    assert ensure_manifest(home, project_dir=project).stat().st_mtime_ns == parsed_at  # unchanged: no parse

    (project / "models" / "marts" / "agg_probe.sql").write_text("select 1 as x\n")
    assert "agg_probe" in _models(ensure_manifest(home, project_dir=project))
