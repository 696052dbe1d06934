"""turn_results through Dagster: a real partitioned materialization with its blocking check."""

from __future__ import annotations

import dagster as dg
import pytest

from memsql_assets.definitions import defs
from memsql_assets.defs.evaluation.partitions import partition_key
from memsql_assets.defs.jobs import EVALUATE_JOB
from memsql_assets.lib.vocabulary import REFERENCE_MODELS


@pytest.mark.quick  # the quick subset's one partition end to end, through Dagster
def test_partition_materializes_with_metadata_and_check(small_home, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(small_home))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("model", list(REFERENCE_MODELS))
        job = defs.resolve_job_def(EVALUATE_JOB)
        result = job.execute_in_process(instance=instance, partition_key=partition_key("gold", "D"))
        assert result.success
        (check,) = result.get_asset_check_evaluations()
        assert check.check_name == "harness_integrity" and check.passed
        (mat,) = result.get_asset_materialization_events()
        meta = mat.materialization.metadata
        assert mat.materialization.partition == "D|gold"
        assert meta["ex_strict"].value == 100.0
        assert {
            "ex_by_tier",
            "ex_by_source",
            "error_classes",
            "model_calls",
            "cache_hits",
            "cost_usd",
            "wall_s",
            "prompt_tokens",
        } <= set(meta)

        probe = job.execute_in_process(instance=instance, partition_key=partition_key("recall-probe", "A"))
        assert probe.success
        (probe_check,) = probe.get_asset_check_evaluations()
        assert probe_check.passed, "the integrity check demands 100 % only of gold"
        assert probe.get_asset_materialization_events()[0].materialization.metadata["ex_strict"].value < 50


def test_metrics_job_builds_dbt_marts_and_report(small_home, monkeypatch, tmp_path):
    import shutil

    from memsql_assets.defs.jobs import METRICS_JOB
    from memsql_assets.lib.harness.evaluate import evaluate_partition

    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "redis", "dbt", "report"))
    for model, condition in (("gold", "A"), ("recall-probe", "A"), ("recall-probe", "B")):
        evaluate_partition(home, model, condition)
    monkeypatch.setenv("MEMSQL_HOME", str(home))
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def(METRICS_JOB).execute_in_process(instance=instance)
        assert result.success
        checks = result.get_asset_check_evaluations()
        assert len(checks) > 50 and all(c.passed for c in checks), [
            c.check_name for c in checks if not c.passed
        ]
        mats = {
            m.asset_key.to_user_string(): m.materialization.metadata
            for m in result.get_asset_materialization_events()
        }
        assert {"fct_turn_evaluations", "agg_mbs", "agg_ablation", "results_report"} <= set(mats)
        report = mats["results_report"]
        assert (home / "report" / "report.html").exists() and str(report["report"].value).endswith(
            "report.html"
        )
        assert any(k.startswith("figure_") for k in report)

        # The build keeps its target folder in the home: the next one parses nothing (nothing changed).
        # One mart is enough to make dbt parse (dagster-dbt turns the selection into `--select`).
        target = home / "dbt" / "target"
        assert (target / "partial_parse.msgpack").exists()
        for log in target.glob("dbt.log*"):
            log.unlink()
        again = defs.resolve_job_def(METRICS_JOB).execute_in_process(
            instance=instance, asset_selection=[dg.AssetKey("fct_turn_evaluations")]
        )
        assert again.success
        assert {m.asset_key.to_user_string() for m in again.get_asset_materialization_events()} == {
            "fct_turn_evaluations"
        }
        logged = "".join(log.read_text(encoding="utf-8") for log in target.glob("dbt.log*"))
        assert "PartialParsingSkipParsing" in logged and "UnableToPartialParse" not in logged


def test_metrics_job_fails_with_dbts_error_after_the_events_it_read(small_home, monkeypatch, tmp_path):
    """dbt's events are read by a thread (defs/metrics/assets.py read_ahead): a failed build still
    fails the step, with dbt's error, once the nodes that ran are recorded."""
    import shutil

    from memsql_assets.defs.jobs import METRICS_JOB

    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "redis", "dbt", "report"))
    broken = home / "results" / "model=gold" / "condition=A" / "turn_results.parquet"
    broken.parent.mkdir(parents=True)
    broken.write_text("not a Parquet file\n", encoding="utf-8")
    monkeypatch.setenv("MEMSQL_HOME", str(home))
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def(METRICS_JOB).execute_in_process(instance=instance, raise_on_error=False)
        assert not result.success
        (failure,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
        assert failure.step_key == "metrics_dbt" and "dbt" in failure.step_failure_data.error.message
        built = {m.asset_key.to_user_string() for m in result.get_asset_materialization_events()}
        assert "staging/stg_turns" in built and "staging/stg_turn_results" not in built
