"""The main job through Dagster: sources -> profiles -> sessions with their blocking checks."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import dagster as dg
import pytest

from memsql_assets.definitions import defs
from memsql_assets.defs.jobs import MAIN_JOB
from memsql_assets.lib.benchmark.invariants import expected_counts
from memsql_assets.lib.benchmark.pipeline import build_sessions
from memsql_assets.lib.benchmark.sample import sample_sessions
from memsql_assets.lib.benchmark.store import read_profiles, read_turns
from memsql_assets.lib.paths import benchmark_dir
from tests.integration.memsql_cli import SMALL_BENCHMARK_SESSIONS

pytestmark = pytest.mark.integration


@pytest.fixture()
def memsql_home(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path / "home"))
    for name in ("BIRD_FINANCIAL", "SEC_EDGAR", "NORTHWIND"):
        monkeypatch.delenv(f"MEMSQL_SOURCE_{name}", raising=False)
    return tmp_path / "home"


def test_definitions_load_with_lineage():
    repo = defs.get_repository_def()
    keys = {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()}
    assert {
        "bird_financial",
        "sec_edgar",
        "northwind",
        "profiles",
        "sessions",
        "semantic_memory",
        "synthetic_questions",
        "trajectory_store",
        "composite_tools",
        "turn_results",
        "agg_mbs",
        "results_report",
    } <= keys
    sessions_node = repo.asset_graph.get(dg.AssetKey("sessions"))
    assert dg.AssetKey("profiles") in sessions_node.parent_keys
    checks = {c.name for c in repo.asset_graph.asset_check_keys}
    assert {"sessions_suite", "turns_suite", "ground_truth_executes", "answers_unambiguous"} <= checks


def _steps(job: dg.JobDefinition) -> dict[str, set[tuple[str, str, str]]]:
    """Each node's (input, upstream node, upstream output), in no particular order (Dagster's isn't fixed)."""
    snap = job.get_job_snapshot().dep_structure_snapshot
    return {
        node.node_name: {
            (dep.input_name, up.node_name, up.output_name)
            for dep in node.input_dep_snaps
            for up in dep.upstream_output_snaps
        }
        for node in snap.node_invocation_snaps
    }


def test_evaluation_processes_load_the_lineage_without_dbt():
    """`memsql eval` and `memsql run`'s workers take their jobs from defs/without_metrics.py, which
    must not import dagster-dbt (~3 s a process), and the project's definitions are it plus the metrics;
    these load matplotlib only when the report draws a figure."""
    code = (
        "import sys; from memsql_assets.defs.without_metrics import defs; "
        "defs.resolve_job_def('evaluate'); print('dagster_dbt' in sys.modules, 'dbt' in sys.modules); "
        "import memsql_assets.definitions; print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False"]

    from memsql_assets.defs import without_metrics

    lineage = without_metrics.defs.resolve_asset_graph()
    full = defs.resolve_asset_graph()
    assert set(lineage.get_all_asset_keys()) < set(full.get_all_asset_keys())
    extra = {full.get(k).group_name for k in set(full.get_all_asset_keys()) - set(lineage.get_all_asset_keys())}
    assert extra == {"metrics"}
    for job in ("evaluate", "memsql_main", "observe_models", "observe_sources"):
        # The same steps and assets; only the resource list differs (the dbt resource is not there).
        mine, theirs = without_metrics.defs.resolve_job_def(job), defs.resolve_job_def(job)
        assert _steps(mine) == _steps(theirs), job
        assert set(mine.asset_layer.executable_asset_keys) == set(theirs.asset_layer.executable_asset_keys), job


def test_main_job_materializes_everything_and_checks_pass(memsql_home):
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def(MAIN_JOB).execute_in_process(instance=instance)
        assert result.success
        evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
        assert set(evaluations) == {
            "sessions_suite",
            "turns_suite",
            "ground_truth_executes",
            "answers_unambiguous",
            "final_sql_executes",
            # The extended benchmark's, beside them (the group `benchmark` builds both).
            "extended_sessions_suite",
            "extended_turns_suite",
            "extended_ground_truth_executes",
            "extended_answers_unambiguous",
        }
        assert all(e.passed for e in evaluations.values()), {k: e.description for k, e in evaluations.items()}
        gt = evaluations["ground_truth_executes"].metadata
        assert gt["queries_executed"].value == 1400 + 1100  # every GT and every fallback
        answers = evaluations["answers_unambiguous"].metadata
        assert answers["turns_checked"].value == 1400 and answers["failures"].value == 0
        assert answers["limit_one_queries"].value > 0

        mats = {m.asset_key.to_user_string(): m for m in result.get_asset_materialization_events()}
        assert set(mats) == {
            "bird_financial",
            "sec_edgar",
            "northwind",
            "profiles",
            "sessions",
            "extended_sessions",
            "semantic_memory",
            "synthetic_questions",
            "trajectory_store",
            "composite_tools",
            "trajectory_coverage",
        }
        sec_meta = mats["sec_edgar"].materialization.metadata
        assert sec_meta["kind"].value == "embedded" and sec_meta["synthetic"].value is True
        assert len(sec_meta["content_hash"].value) == 64
        sessions_meta = mats["sessions"].materialization.metadata
        assert sessions_meta["sessions"].value == 300 and sessions_meta["turns"].value == 1400
        assert sessions_meta["memory_critical_turns"].value == 1100

        # The run is recorded in the instance: what the UI reads afterwards.
        latest = instance.get_latest_materialization_event(dg.AssetKey("sessions"))
        assert latest is not None and latest.run_id == result.run_id

    rows = [
        json.loads(line) for line in (benchmark_dir(memsql_home) / "turns.jsonl").read_text().splitlines()
    ]
    assert len(rows) == 1400 and rows[0]["session_id"] == "BIRD-1-001"


def test_corrupt_real_source_stops_the_lineage(memsql_home, tmp_path, monkeypatch):
    bad = tmp_path / "financial.sqlite"
    bad.write_bytes(b"garbage, not sqlite" * 64)
    monkeypatch.setenv("MEMSQL_SOURCE_BIRD_FINANCIAL", str(bad))
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def(MAIN_JOB).execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
        error = failures[0].event_specific_data.error.to_string()
        assert "financial.sqlite: is not a SQLite database" in error
        materialized = {m.asset_key.to_user_string() for m in result.get_asset_materialization_events()}
        assert "bird_financial" not in materialized
        assert not {"profiles", "sessions"} & materialized


def test_a_sized_main_job_builds_the_sample_eval_takes_and_its_checks_say_what_they_left_out(main_job_home):
    """main_job_home's benchmark, built at SMALL_BENCHMARK_SESSIONS through `memsql run`: the sessions
    `memsql eval --sessions N` takes from the whole benchmark, every turn of them, its checks passed."""
    whole = build_sessions(read_profiles(benchmark_dir(main_job_home) / "profiles.json"))
    rows = [{"session_id": s.session_id, "source": s.source, "tier": s.tier} for s in whole]
    turns = read_turns(benchmark_dir(main_job_home))
    chosen = sample_sessions(rows, SMALL_BENCHMARK_SESSIONS)
    assert sorted({t["session_id"] for t in turns}) == chosen
    assert len(turns) == sum(s.n_turns for s in whole if s.session_id in set(chosen)) < 1400
    counts = expected_counts(SMALL_BENCHMARK_SESSIONS)
    by_tier = Counter(t["tier"] for t in turns if t["turn_index"] == 1)
    assert dict(by_tier) == {tier: counts[f"tier_{tier}_sessions"] for tier in (1, 2, 3)}

    with dg.DagsterInstance.from_config(str(main_job_home / "dagster_home")) as instance:
        keys = [dg.AssetCheckKey(dg.AssetKey("sessions"), name) for name in ("sessions_suite", "turns_suite")]
        latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
        evaluations = {k.name: latest[k].event.dagster_event.event_specific_data for k in keys}
    assert all(e.passed for e in evaluations.values())
    said = evaluations["sessions_suite"].description
    assert f"built at {SMALL_BENCHMARK_SESSIONS} sessions" in said and "left out: 7 ten-turn NW sessions" in said
    assert "left out: 1,400 turns, 1,100 memory-critical turns" in evaluations["turns_suite"].description
