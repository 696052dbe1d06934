"""Dagster-native automation: runnable models are partitions, their configurations are observed data
versions, and turn_results' automation condition requests what is missing or out of date."""

from __future__ import annotations

import shutil
import textwrap

import dagster as dg
import pytest
from dagster._core.definitions.dynamic_partitions_request import (
    AddDynamicPartitionsRequest,
    DeleteDynamicPartitionsRequest,
)

from memsql_assets.defs.evaluation.automation import model_registry_sensor
from memsql_assets.defs.evaluation.partitions import evaluation_partitions
from memsql_assets.defs.planning import stale_status, why_out_of_date
from memsql_assets.lib.code_versions import HARNESS_CODE, PACKAGE_ROOT, code_version
from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.memory.plugins import applies
from memsql_assets.lib.sources.config import SOURCE_NAMES
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK

TURN_RESULTS = dg.AssetKey("turn_results")
REGISTRY = """
models:
  gold:
    litellm_model: memsql/gold
    kind: builtin
    reasoning: {type: none}
    price_per_mtok: {input: 0, output: 0}
    provider_params: {max_tokens: GOLD_MAX_TOKENS}
    max_concurrency: 4
    enabled: true
  keyed:
    litellm_model: openai/some-model
    kind: api
    reasoning: {type: default}
    api_key_env: MEMSQL_TEST_AUTOMATION_KEY
    max_concurrency: 2
    price_per_mtok: {input: 1.0, output: 2.0}
    enabled: true
  retired:
    litellm_model: memsql/recall-probe
    kind: builtin
    reasoning: {type: none}
    price_per_mtok: {input: 0, output: 0}
    max_concurrency: 4
    enabled: ENABLED
"""

# The conditions the automation evaluates on the paper benchmark: not those scoped to the analyst.
PAPER_CELLS = {name for name, c in CONDITIONS.items() if applies(c, PAPER_BENCHMARK)}


@pytest.fixture
def registry_file(tmp_path, monkeypatch):
    path = tmp_path / "models.yaml"

    def write(retired_enabled: bool, gold_max_tokens: int = 512) -> None:
        text = textwrap.dedent(REGISTRY).replace("ENABLED", str(retired_enabled).lower())
        path.write_text(text.replace("GOLD_MAX_TOKENS", str(gold_max_tokens)))

    write(False)
    monkeypatch.setenv("MEMSQL_MODELS_FILE", str(path))
    monkeypatch.delenv("MEMSQL_TEST_AUTOMATION_KEY", raising=False)
    return write


def _tick_sensor(instance: dg.DagsterInstance, cursor: str | None = None) -> str | None:
    """One sensor evaluation, with its partition requests and observation applied as the daemon would."""
    result = model_registry_sensor(dg.build_sensor_context(instance=instance, cursor=cursor))
    if isinstance(result, dg.SkipReason):
        assert "invalid" not in (result.skip_message or ""), result.skip_message
        return cursor
    for request in result.dynamic_partitions_requests or []:
        if isinstance(request, AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        elif isinstance(request, DeleteDynamicPartitionsRequest):
            for key in request.partition_keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)
    if result.run_requests:
        from memsql_assets.definitions import defs
        from memsql_assets.defs.jobs import OBSERVE_MODELS_JOB

        assert defs.resolve_job_def(OBSERVE_MODELS_JOB).execute_in_process(instance=instance).success
    return result.cursor


def _inputs_materialized(instance: dg.DagsterInstance) -> None:
    for key in [*SOURCE_NAMES, "sessions", "semantic_memory", "trajectory_store", "composite_tools"]:
        instance.report_runless_asset_event(
            dg.AssetMaterialization(key, tags={"dagster/data_version": "v1"})
        )
    from memsql_assets.definitions import defs
    from memsql_assets.defs.jobs import OBSERVE_CONDITIONS_JOB

    # The conditions file, as `memsql run` and the conditions sensor observe it.
    assert defs.resolve_job_def(OBSERVE_CONDITIONS_JOB).execute_in_process(instance=instance).success


def _requested_models(result) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for key in result.get_requested_partitions(TURN_RESULTS):
        dims = evaluation_partitions.get_partition_key_from_str(str(key)).keys_by_dimension
        out.setdefault(dims["model"], set()).add(dims["condition"])
    return out


def test_a_model_whose_key_is_set_later_is_evaluated_then(registry_file, monkeypatch):
    from memsql_assets.definitions import defs

    with dg.instance_for_test() as instance:
        _inputs_materialized(instance)
        before = dg.evaluate_automation_conditions(defs=defs, instance=instance)  # the daemon runs already
        cursor = _tick_sensor(instance)
        assert set(instance.get_dynamic_partitions("model")) == {"gold"}, "no key, no partition"
        first = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
        assert _requested_models(first) == {"gold": PAPER_CELLS}

        monkeypatch.setenv("MEMSQL_TEST_AUTOMATION_KEY", "sk-test-0123456789")
        cursor = _tick_sensor(instance, cursor)
        assert set(instance.get_dynamic_partitions("model")) == {"gold", "keyed"}
        second = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
        assert _requested_models(second) == {"keyed": PAPER_CELLS}, "gold was requested already"


def test_a_disabled_model_is_never_requested(registry_file):
    from memsql_assets.definitions import defs

    with dg.instance_for_test() as instance:
        _inputs_materialized(instance)
        instance.add_dynamic_partitions("model", ["retired"])  # a partition from when it was enabled
        before = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        _tick_sensor(instance)
        assert "retired" not in instance.get_dynamic_partitions("model")
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
        assert "retired" not in _requested_models(result)
        assert "gold" in _requested_models(result)


def test_a_changed_model_configuration_marks_only_its_partitions_stale(registry_file, small_home, monkeypatch):
    from memsql_assets.definitions import defs
    from memsql_assets.defs.evaluation.partitions import partition_key
    from memsql_assets.defs.jobs import EVALUATE_JOB

    monkeypatch.setenv("MEMSQL_HOME", str(small_home))
    registry_file(True)  # gold and retired (recall-probe underneath) are runnable
    with dg.instance_for_test() as instance:
        _inputs_materialized(instance)
        _tick_sensor(instance)
        job = defs.resolve_job_def(EVALUATE_JOB)
        for model in ("gold", "retired"):
            assert job.execute_in_process(instance=instance, partition_key=partition_key(model, "A")).success
        resolver = stale_status(instance, defs)
        assert why_out_of_date(resolver, TURN_RESULTS, partition_key("gold", "A")) is None
        assert why_out_of_date(resolver, TURN_RESULTS, partition_key("gold", "B")) == "missing"

        registry_file(True, gold_max_tokens=1024)
        _tick_sensor(instance, cursor="before")
        resolver = stale_status(instance, defs)
        why = why_out_of_date(resolver, TURN_RESULTS, partition_key("gold", "A"))
        assert why == "has a new dependency data version: model_registry", why
        assert why_out_of_date(resolver, TURN_RESULTS, partition_key("retired", "A")) is None


def test_a_changed_condition_marks_only_its_partitions_stale(registry_file, small_home, monkeypatch):
    from memsql_assets.definitions import defs
    from memsql_assets.defs.evaluation import automation
    from memsql_assets.defs.evaluation.partitions import partition_key
    from memsql_assets.defs.jobs import EVALUATE_JOB

    monkeypatch.setenv("MEMSQL_HOME", str(small_home))
    with dg.instance_for_test() as instance:
        _inputs_materialized(instance)
        _tick_sensor(instance)
        job = defs.resolve_job_def(EVALUATE_JOB)
        for condition in ("A", "H"):
            assert job.execute_in_process(instance=instance, partition_key=partition_key("gold", condition)).success
        assert why_out_of_date(stale_status(instance, defs), TURN_RESULTS, partition_key("gold", "H")) is None

        # H's entry edited (another window, say): what `memsql run` observes first, without a run
        versions = automation.condition_versions()
        monkeypatch.setattr(automation, "condition_versions", lambda: {**versions, "H": "edited"})
        automation.observe_conditions(instance)
        resolver = stale_status(instance, defs)
        why = why_out_of_date(resolver, TURN_RESULTS, partition_key("gold", "H"))
        assert why == "has a new dependency data version: condition_registry", why
        assert why_out_of_date(resolver, TURN_RESULTS, partition_key("gold", "A")) is None


def test_a_sandbox_change_is_a_new_harness_code_version(tmp_path):
    for part in HARNESS_CODE:
        src = PACKAGE_ROOT / part
        dst = tmp_path / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copyfile(src, dst)
    before = code_version(*HARNESS_CODE, root=tmp_path)
    assert before == code_version(*HARNESS_CODE)
    sandbox = tmp_path / "lib/sql/sandbox.py"
    sandbox.write_text(sandbox.read_text() + "\n# a change to the SQL sandbox\n")
    assert code_version(*HARNESS_CODE, root=tmp_path) != before


def test_a_new_harness_code_version_makes_every_partition_stale(registry_file, small_home, monkeypatch):
    from memsql_assets.definitions import defs
    from memsql_assets.defs.evaluation.assets import turn_results
    from memsql_assets.defs.evaluation.partitions import partition_key
    from memsql_assets.defs.jobs import EVALUATE_JOB

    monkeypatch.setenv("MEMSQL_HOME", str(small_home))
    with dg.instance_for_test() as instance:
        _inputs_materialized(instance)
        _tick_sensor(instance)
        before = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        job = defs.resolve_job_def(EVALUATE_JOB)
        done = [partition_key("gold", c) for c in ("A", "B")]
        for key in done:
            assert job.execute_in_process(instance=instance, partition_key=key).success
        assert all(why_out_of_date(stale_status(instance, defs), TURN_RESULTS, k) is None for k in done)
        before = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
        assert not _requested_models(before), "materialized and current: nothing to do"

        changed = turn_results.map_asset_specs(lambda spec: spec.replace_attributes(code_version="sandbox-changed"))
        new_code = dg.Definitions(
            assets=[changed if a is turn_results else a for a in defs.assets or []],
            asset_checks=defs.asset_checks,
            jobs=defs.jobs,
            resources=defs.resources,
        )
        resolver = stale_status(instance, new_code)
        assert [why_out_of_date(resolver, TURN_RESULTS, k) for k in done] == [
            "has a new code version"
        ] * 2
        result = dg.evaluate_automation_conditions(defs=new_code, instance=instance, cursor=before.cursor)
        assert _requested_models(result) == {"gold": PAPER_CELLS}


def test_the_automation_skips_a_partition_whose_cost_bound_exceeds_max_cost_usd(
    registry_file, tmp_path, monkeypatch, caplog
):
    """`keyed` costs $1/$2 per Mtok with max_tokens 1,000: a partition of 1,400 new calls is bounded
    far above its $0.01 cap, so the automation requests every gold partition and none of keyed's."""
    from memsql_assets.definitions import defs
    from memsql_assets.lib.harness.plan import plan_unbuilt
    from memsql_assets.lib.models.registry import load_registry

    path = tmp_path / "models.yaml"
    text = path.read_text().replace(
        "    max_concurrency: 2\n", "    max_concurrency: 2\n    provider_params: {max_tokens: 1000}\n    max_cost_usd: 0.01\n"
    )
    path.write_text(text)
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path / "home"))  # no benchmark yet: every turn is a call
    monkeypatch.setenv("MEMSQL_TEST_AUTOMATION_KEY", "sk-test-0123456789")
    bound = plan_unbuilt(load_registry().get("keyed"), "A", 1).cost_bound_usd
    assert bound is not None and bound > 0.01
    with dg.instance_for_test() as instance:
        _inputs_materialized(instance)
        before = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        _tick_sensor(instance)
        assert set(instance.get_dynamic_partitions("model")) == {"gold", "keyed"}
        with caplog.at_level("INFO"):
            result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
        assert _requested_models(result) == {"gold": PAPER_CELLS}, "keyed is over its cap"
        skipped = [r.getMessage() for r in caplog.records if "not launched" in r.getMessage()]
        assert len(skipped) == len(PAPER_CELLS), skipped
        assert all("keyed/" in m and "max_cost_usd $0.01" in m and "1,400 model calls" in m for m in skipped)

        path.write_text(text.replace("max_cost_usd: 0.01", f"max_cost_usd: {bound}"))
        again = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
        assert _requested_models(again) == {"gold": PAPER_CELLS, "keyed": PAPER_CELLS}, "at the cap: run"
