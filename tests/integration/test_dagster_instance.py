"""The Dagster instance memsql writes: its dagster.yaml, over Dagster's own SQLite storage."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from memsql_assets.defs.instance import INSTANCE_YAML_HEADER, ensure_dagster_home


@dg.asset
def number() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"value": 7})


@dg.asset_check(asset=number)
def number_is_positive() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=True)


def _materialize(instance: dg.DagsterInstance) -> str:
    result = dg.materialize([number, number_is_positive], instance=instance)
    assert result.success
    return result.run_id


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("MEMSQL_PROFILE", raising=False)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "elsewhere"))  # restored after the test
    return tmp_path


def test_events_written_by_one_instance_are_read_by_a_fresh_instance(home: Path) -> None:
    ensure_dagster_home(home)
    with dg.DagsterInstance.get() as instance:
        assert type(instance.event_log_storage).__name__ == "SqliteEventLogStorage"  # Dagster's own
        run_ids = [_materialize(instance) for _ in range(3)]
    assert sorted(p.stem for p in (home / "dagster_home" / "history" / "runs").glob("*-*.db")) == sorted(run_ids)
    with dg.DagsterInstance.get() as fresh:
        latest = fresh.get_latest_materialization_event(dg.AssetKey("number"))
        assert latest is not None and latest.run_id == run_ids[-1]
        assert latest.asset_materialization.metadata["value"].value == 7
        assert len(fresh.get_run_records()) == len(run_ids)
        first = [e.dagster_event.event_type_value for e in fresh.all_logs(run_ids[0]) if e.dagster_event]
        assert {"ASSET_MATERIALIZATION", "ASSET_CHECK_EVALUATION", "PIPELINE_SUCCESS"} <= set(first)


def test_wipe_releases_the_files_and_the_instance_goes_on(home: Path) -> None:
    ensure_dagster_home(home)
    with dg.DagsterInstance.get() as instance:
        _materialize(instance)
        instance.wipe()  # deletes every run's database, which the storage held open
        assert instance.get_latest_materialization_event(dg.AssetKey("number")) is None
        run_id = _materialize(instance)
        assert instance.get_latest_materialization_event(dg.AssetKey("number")).run_id == run_id


def test_memsql_rewrites_its_own_dagster_yaml_and_keeps_anyone_elses(home: Path) -> None:
    config = home / "dagster_home" / "dagster.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(f"{INSTANCE_YAML_HEADER}: an older version\ntelemetry:\n  enabled: false\n", encoding="utf-8")
    ensure_dagster_home(home)
    written = config.read_text(encoding="utf-8")
    assert "an older version" not in written and "enabled: false" in written
    assert str((home / "dagster_home").resolve()) in written

    yours = "# my instance\ntelemetry:\n  enabled: false\n"
    config.write_text(yours, encoding="utf-8")
    ensure_dagster_home(home)
    assert config.read_text(encoding="utf-8") == yours
