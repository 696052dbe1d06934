"""The extended benchmark through Dagster: extended_sessions and its blocking checks on the embedded
sources, beside (and without) the paper benchmark."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from memsql_assets.defs.benchmark.extended import extended_checks, extended_sessions
from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.lib.paths import benchmark_dir, source_db_path
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, PHENOMENA

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def extended_run(tmp_path_factory, embedded_dbs) -> tuple[Path, dg.ExecuteInProcessResult]:
    """A home with only the embedded sources, after one materialization of extended_sessions and its
    checks (built once: the tests read it, or copy it before writing into it)."""
    home = tmp_path_factory.mktemp("extended") / "home"
    for name, path in embedded_dbs.items():
        target = source_db_path(home, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return home, _materialize(home)


def _materialize(home):
    return dg.materialize(
        [extended_sessions, *extended_checks],
        resources={"memsql": MemsqlSettings(home=str(home))},
        raise_on_error=False,
    )


def test_extended_sessions_and_its_checks(extended_run):
    home, result = extended_run
    assert result.success
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert set(checks) == {c.check_key.name for c in extended_checks}
    assert all(e.passed for e in checks.values()), {n: e.description for n, e in checks.items()}
    out = benchmark_dir(home, EXTENDED_BENCHMARK)
    turns = [json.loads(line) for line in (out / "turns.jsonl").read_text().splitlines()]
    assert {t["tag"] for t in turns} == set(PHENOMENA)
    assert any(t["stale_gt_sql"] for t in turns)
    assert (out / "turns.parquet").exists() and (out / "sessions.parquet").exists()
    assert not (benchmark_dir(home) / "turns.jsonl").exists()  # the paper benchmark is not built


def test_a_failing_stale_ground_truth_fails_the_blocking_check(extended_run, tmp_path):
    built, result = extended_run
    assert result.success
    # The check alone, on a copy of the built benchmark with one stale ground truth spoiled.
    home = tmp_path / "home"
    shutil.copytree(built, home)
    out = benchmark_dir(home, EXTENDED_BENCHMARK) / "turns.jsonl"
    turns = [json.loads(line) for line in out.read_text().splitlines()]
    broken = next(t for t in turns if t["stale_gt_sql"])
    broken["stale_gt_sql"] = "SELECT no_such_column FROM no_such_table"
    out.write_text("".join(json.dumps(t) + "\n" for t in turns))
    check = next(c for c in extended_checks if c.check_key.name == "extended_ground_truth_executes")
    result = dg.materialize(
        [check],
        resources={"memsql": MemsqlSettings(home=str(home))},
        raise_on_error=False,
        selection=dg.AssetSelection.checks(check.check_key),
    )
    evaluation = result.get_asset_check_evaluations()[0]
    assert not evaluation.passed
    assert f"{broken['session_id']}#{broken['turn_index']} stale_gt_sql" in evaluation.description
