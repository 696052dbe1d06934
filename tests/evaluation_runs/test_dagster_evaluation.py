"""turn_results through Dagster: a real partitioned materialization with its blocking check."""

from __future__ import annotations

import dagster as dg

from memsql_assets.definitions import defs
from memsql_assets.defs.evaluation.partitions import partition_key
from memsql_assets.defs.jobs import EVALUATE_JOB


def test_partition_materializes_with_metadata_and_check(small_home, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(small_home))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("model", ["gold", "recall-probe"])
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
