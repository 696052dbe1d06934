"""Metrics fixtures: real result partitions from the real harness, and one real `dbt build` over them.

The data directory is a copy of the shared `small_home` (embedded sources, every 10th session of
the benchmark, semantic memory seeded) without its results, so the evaluation tests that write
into `small_home` and these tests never see each other's partitions. dbt runs as a subprocess with
its own target/log folders, so a test run never touches dbt_project/target (the manifest Dagster
loads).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.report.dbt_cli import dbt_args
from tests.conftest import built_once

REPO = Path(__file__).resolve().parents[2]
DBT_PROJECT = REPO / "dbt_project"
DBT = Path(sys.executable).with_name("dbt")

# gold proves the pipeline scores 100 %; recall-probe gives memory-dependent, non-trivial numbers
# (A < B < B_wm5: Win, MBS and the pair gaps are all non-zero); guess-probe under A is the guess
# floor; H and S are conditions the conditions file adds (their contrasts and the cost of memory).
# Few partitions keep the suite fast.
PARTITIONS = (
    ("gold", "A"),
    ("recall-probe", "A"),
    ("recall-probe", "B"),
    ("recall-probe", "B_wm5"),
    ("recall-probe", "H"),
    ("recall-probe", "S"),
    ("guess-probe", "A"),
    ("gold-agent", "T"),  # through the agent loop: agg_agent_steps
    ("gold-agent", "E"),  # AgentSM against T: agg_agent_steps_saved, the report's "Agents"
    ("gold-agent", "T_schema"),  # the same pair with the schema in the prompt: one step per turn
    ("gold-agent", "E_schema"),
)
TRAJECTORY_BUDGET = 12  # synthetic questions of the metrics home's trajectory store (E reads it)
BUILD_OUTPUT = "dbt_build.out"  # what metrics_home's dbt build printed
BUILD_RC = "dbt_build.rc"  # empty_home's build's exit status


@dataclass(frozen=True)
class DbtRun:
    returncode: int
    output: str
    target: Path

    def results(self) -> list[dict]:
        return json.loads((self.target / "run_results.json").read_text())["results"]


def fresh_home(src: Path, dst: Path, keep_results: bool = False) -> Path:
    ignore = ["requests", "redis", "dbt", "report", "dbt_target", "dbt_logs", BUILD_OUTPUT, BUILD_RC]
    if not keep_results:
        ignore.append("results")
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*ignore))
    (dst / "dbt").mkdir(exist_ok=True)
    return dst


def run_dbt(home: Path, *args: str) -> DbtRun:
    """`dbt <args>` on the project with MEMSQL_HOME=home; target and logs under home."""
    target = home / "dbt_target"
    env = {
        **os.environ,
        "MEMSQL_HOME": str(home),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "False",
        "DBT_TARGET_PATH": str(target),
        "DBT_LOG_PATH": str(home / "dbt_logs"),
    }
    cmd = [str(DBT), *dbt_args(*args), "--project-dir", str(DBT_PROJECT), "--profiles-dir", str(DBT_PROJECT)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    return DbtRun(proc.returncode, proc.stdout + proc.stderr, target)


@pytest.fixture(scope="session")
def metrics_home(tmp_path_factory, small_home) -> Path:
    """small_home's benchmark with PARTITIONS evaluated and a passing `dbt build` over them, built once
    per test session (built_once): copy it with fresh_home before writing into it."""
    return built_once(tmp_path_factory, "metrics_home", lambda home: _evaluate_and_build(small_home, home))


def _evaluate_and_build(small_home: Path, home: Path) -> None:
    import dagster as dg

    from memsql_assets.defs.resources import MemsqlSettings
    from memsql_assets.defs.trajectories.assets import synthetic_questions, trajectory_store
    from memsql_assets.defs.trajectories.resources import TrajectorySettings
    from memsql_assets.lib.trajectories.lookup import trajectory_lookup

    fresh_home(small_home, home)
    with dg.instance_for_test() as instance:
        resources = {"memsql": MemsqlSettings(home=str(home)), "trajectories": TrajectorySettings(budget=TRAJECTORY_BUDGET)}
        assert dg.materialize([synthetic_questions, trajectory_store], instance=instance, resources=resources).success
    for model, condition in PARTITIONS:
        evaluate_partition(home, model, condition, trajectory_factory=trajectory_lookup)
    run = run_dbt(home, "build")
    assert run.returncode == 0, run.output[-6000:]
    (home / BUILD_OUTPUT).write_text(run.output, encoding="utf-8")


@pytest.fixture(scope="session")
def built(metrics_home) -> DbtRun:
    """metrics_home's `dbt build` (it passed, or metrics_home would have failed)."""
    return DbtRun(0, (metrics_home / BUILD_OUTPUT).read_text(encoding="utf-8"), metrics_home / "dbt_target")


@pytest.fixture(scope="session")
def duckdb_path(built, metrics_home) -> Path:
    return metrics_home / "dbt" / "memsql.duckdb"


@pytest.fixture(scope="session")
def empty_home(tmp_path_factory, small_home) -> tuple[Path, DbtRun]:
    """A data directory with the benchmark and no result file yet, after `dbt build`; built once per
    test session (built_once), whatever the build's exit status: the tests assert it."""
    home = built_once(tmp_path_factory, "metrics_empty_home", lambda home: _build_empty(small_home, home))
    rc = int((home / BUILD_RC).read_text(encoding="utf-8"))
    return home, DbtRun(rc, (home / BUILD_OUTPUT).read_text(encoding="utf-8"), home / "dbt_target")


def _build_empty(small_home: Path, home: Path) -> None:
    run = run_dbt(fresh_home(small_home, home), "build")
    (home / BUILD_OUTPUT).write_text(run.output, encoding="utf-8")
    (home / BUILD_RC).write_text(str(run.returncode), encoding="utf-8")


# Registry entries of the paper's models, stood in for by reference-model results (an offline run
# cannot call Claude): (source partition) -> (paper-model partition). Sonnet 4.6 gets a reasoning and
# a standard-mode result at B, so the reasoning comparison and every claim kind have values.
PAPER_STAND_INS = (
    (("recall-probe", "A"), ("claude-sonnet-4.6", "A")),
    (("recall-probe", "B"), ("claude-sonnet-4.6", "B")),
    (("recall-probe", "A"), ("claude-sonnet-4.6-standard", "B")),
    (("recall-probe", "B_wm5"), ("claude-sonnet-4.5", "B")),
)


def relabel_partition(home: Path, source: tuple[str, str], target: tuple[str, str]) -> None:
    """Copy a result partition under another model × condition, its rows saying so too."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir

    table = pq.read_table(partition_dir(home, *source) / RESULT_FILE)
    for name, value in zip(("model", "condition"), target, strict=True):
        i = table.schema.get_field_index(name)
        table = table.set_column(i, name, pa.array([value] * len(table), pa.string()))
    out = partition_dir(home, *target)
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out / RESULT_FILE)


@pytest.fixture(scope="session")
def paper_home(tmp_path_factory, metrics_home) -> Path:
    """metrics_home's partitions plus PAPER_STAND_INS, after `dbt build`, with its report written
    where the results_report asset writes it ($MEMSQL_HOME/report); built once per test session."""
    return built_once(tmp_path_factory, "paper_home", lambda home: _with_paper_stand_ins(metrics_home, home))


def _with_paper_stand_ins(metrics_home: Path, home: Path) -> None:
    from memsql_assets.lib.report import build_report

    fresh_home(metrics_home, home, keep_results=True)
    for source, target in PAPER_STAND_INS:
        relabel_partition(home, source, target)
    run = run_dbt(home, "build")
    assert run.returncode == 0, run.output[-6000:]
    build_report(home / "dbt" / "memsql.duckdb", home / "report")


# Partitions beside metrics_home's, read by two files from one `dbt build` (variants_home):
# test_metrics_epochs' model with two epochs and its result file of schema 2, and
# test_episodic_hit_rate's recall-probe under C at W = 1 and under D at W = sessions, the latter
# kept beside it as one wave of C under another key.
EPOCHS = ("two-epochs", "A")
OLD = ("old-schema", "A")
ONE_WAVE = ("recall-probe-one-wave", "C")


@pytest.fixture(scope="session")
def variants_home(tmp_path_factory, metrics_home) -> Path:
    """metrics_home's partitions plus EPOCHS, OLD, recall-probe C and D and ONE_WAVE, after a passing
    `dbt build`; built once per test session (built_once): copy it with fresh_home before writing."""
    return built_once(tmp_path_factory, "metrics_variants_home", lambda home: _with_variants(metrics_home, home))


def _relabel(table, model: str, condition: str):
    import pyarrow as pa

    for name, value in (("model", model), ("condition", condition)):
        i = table.schema.get_field_index(name)
        table = table.set_column(i, name, pa.array([value] * len(table), pa.string()))
    return table


def _with_epoch(table, epoch: int):
    import pyarrow as pa

    i = table.schema.get_field_index("epoch")
    return table.set_column(i, "epoch", pa.array([epoch] * len(table), pa.int32()))


def _with_variants(metrics_home: Path, home: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from memsql_assets.lib.harness.results import ADDED_COLUMNS, RESULT_FILE, partition_dir
    from memsql_assets.lib.harness.settings import EvalSettings

    fresh_home(metrics_home, home, keep_results=True)
    # Two epochs that differ (gold's and recall-probe's answers under A, relabelled as one model's
    # epochs 1 and 2), and recall-probe's answers written as schema 2 wrote them (before epochs).
    gold = pq.read_table(partition_dir(home, "gold", "A") / RESULT_FILE)
    probe = pq.read_table(partition_dir(home, "recall-probe", "A") / RESULT_FILE)
    both = pa.concat_tables([_with_epoch(_relabel(gold, *EPOCHS), 1), _with_epoch(_relabel(probe, *EPOCHS), 2)])
    old = _relabel(probe, *OLD).drop_columns(  # what schema 2 lacked
        [name for name, (since, _) in ADDED_COLUMNS.items() if since > 2]
    )
    old = old.set_column(
        old.schema.get_field_index("schema_version"), "schema_version", pa.array([2] * len(old), pa.int32())
    )
    for (model, condition), table in ((EPOCHS, both), (OLD, old)):
        out = partition_dir(home, model, condition)
        out.mkdir(parents=True)
        pq.write_table(table, out / RESULT_FILE)
    # recall-probe under C in the paper's order (W = 1), and the same model in one wave, kept beside
    # it under another key (its summary says W = sessions).
    evaluate_partition(home, "recall-probe", "C", EvalSettings(wave_size=1))
    sessions = json.loads((partition_dir(home, "recall-probe", "C") / "summary.json").read_text())["sessions"]
    evaluate_partition(home, "recall-probe", "D", EvalSettings(wave_size=sessions))
    relabel_partition(home, ("recall-probe", "D"), ONE_WAVE)
    summary = json.loads((partition_dir(home, "recall-probe", "D") / "summary.json").read_text())
    (partition_dir(home, *ONE_WAVE) / "summary.json").write_text(json.dumps({**summary, "condition": "C"}))
    run = run_dbt(home, "build")
    assert run.returncode == 0, run.output[-6000:]
