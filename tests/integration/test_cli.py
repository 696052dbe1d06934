"""The `memsql` console command, as a user runs it (a real subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from memsql_assets.defs.jobs import MAIN_JOB
from memsql_assets.defs.resources import BENCHMARK_SESSIONS_ENV
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.vocabulary import PROMPT_TRAJECTORY_CONDITION
from tests.conftest import copy_built_home
from tests.integration.memsql_cli import SMALL_BENCHMARK_SESSIONS, small_env

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def _memsql(*args, env=None, check=True):
    proc = subprocess.run(
        [sys.executable, "-m", "memsql_assets.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if check:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory):
    """A cold home: nothing built, and the default sources."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSQL_SOURCE_") and k != BENCHMARK_SESSIONS_ENV}
    env["MEMSQL_HOME"] = str(tmp_path_factory.mktemp("cli_home"))
    return env


@pytest.fixture(scope="module")
def built_env(tmp_path_factory, main_job_home):
    """A copy of the shared main job's home (its benchmark built at a size: tests/integration/memsql_cli.py)."""
    home = copy_built_home(main_job_home, tmp_path_factory.mktemp("cli_built") / "home")
    return small_env(home)


def _turns(env) -> int:
    return len(read_turns(benchmark_dir(Path(env["MEMSQL_HOME"]))))


def test_command_1_prints_its_stages_then_one_screen_of_summary(main_job_console, main_job_home):
    """Command 1's console as it ran on the cold home that main_job_home is (the CLI, a subprocess)."""
    _assert_stages_then_summary_with_dagster_logs_in_a_file(main_job_console, main_job_home)


def test_sources_list_before_and_after_the_run_then_export(cli_env, built_env, tmp_path):
    before = json.loads(_memsql("sources", "list", "--json", env=cli_env).stdout)
    assert [r["name"] for r in before] == ["bird_financial", "sec_edgar", "northwind"]
    assert all(r["built"] is False and r["row_counts"] is None for r in before)

    summary = json.loads(_memsql("run", "--skip-eval", "--json", env=built_env).stdout)  # up to date: no run
    assert summary["success"] and summary["main_job_skipped"] and all(summary["checks"].values())
    assert {
        "sessions_suite",
        "turns_suite",
        "ground_truth_executes",
        "answers_unambiguous",
        "final_sql_executes",
    } <= set(summary["checks"])
    turns = _turns(built_env)
    assert summary["benchmark"]["sessions"] == SMALL_BENCHMARK_SESSIONS and summary["benchmark"]["turns"] == turns
    assert os.path.exists(os.path.join(built_env["MEMSQL_HOME"], "dagster_home", "dagster.yaml"))

    listed = {r["name"]: r for r in json.loads(_memsql("sources", "list", "--json", env=built_env).stdout)}
    assert listed["northwind"]["kind"] == "embedded" and listed["northwind"]["row_counts"]["Customers"] == 93
    assert listed["bird_financial"]["row_counts"]["loan"] > 600
    assert listed["sec_edgar"]["path"].endswith("sec_edgar.sqlite")

    target = tmp_path / "bench.jsonl"
    _memsql("export-benchmark", str(target), env=built_env)
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(rows) == turns
    assert set(rows[0]) == {
        "session_id",
        "source",
        "tier",
        "turn_index",
        "question",
        "gt_sql",
        "fallback_sql",
        "requires_prior_context",
        "referenced_context_keys",
        "state_updates",
        "memory_critical",
        "output_requirements",
        "guess_rate",
    }
    assert all(isinstance(r["output_requirements"], str) and r["output_requirements"].strip() for r in rows)


def test_bad_sources_config_is_a_clear_error(cli_env, tmp_path):
    env = dict(cli_env, MEMSQL_SOURCE_SEC_EDGAR=str(tmp_path / "missing"))
    proc = _memsql("sources", "list", env=env, check=False)
    assert proc.returncode == 2
    assert "sec_edgar.real_path" in proc.stderr and "does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_eval_runs_one_partition_through_dagster(built_env):
    cli_env = built_env
    proc = _memsql("eval", "--model", "gold", "--condition", "A", "--json", env=cli_env)
    assert "Warning" not in proc.stderr, proc.stderr  # Dagster's BetaWarnings go to the command's log file
    # The terminal shows memsql's own progress lines (plain ones: stderr is a pipe here), no Dagster log line.
    progress, turns = proc.stderr.strip().splitlines(), _turns(cli_env)
    assert progress and all(line.startswith("memsql eval: gold/A: ") for line in progress), proc.stderr
    assert progress[-1] == f"memsql eval: gold/A: {turns}/{turns} turns, EX so far 100.0 %, ETA 0 s"
    out = json.loads(proc.stdout)
    assert out["success"] and out["model"] == "gold" and out["condition"] == "A"
    assert out["turns"] == _turns(cli_env) and out["ex_strict"] == 100.0 and out["checks"] == {"harness_integrity": True}
    assert {"error_classes", "calls", "cache_hits"} <= set(out)
    again = json.loads(_memsql("eval", "--model", "gold", "--condition", "A", "--json", env=cli_env).stdout)
    assert again["calls"] == 0 and again["cache_hits"] == _turns(cli_env)


def _stored_prompts(home: Path, result_file: Path) -> list[str]:
    """What each row's stored request showed the model (its messages), from the home's request store."""
    from memsql_assets.lib.models.request_store import RequestStore

    store = RequestStore.at_home(home)
    records = [store.get(r["request_key"]) for r in pq.read_table(result_file).to_pylist()]
    assert all(records), "every row's request is stored"
    return ["\n".join(str(m["content"]) for m in r["request"]["messages"]) for r in records]


def test_eval_history_gold_beside_the_models_own_and_observed_prompts_name_no_annotation_key(built_env):
    from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir
    from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, History

    home = Path(built_env["MEMSQL_HOME"])
    cell = ("--model", "reader-probe", "--condition", "B_wm5", "--benchmark", EXTENDED_BENCHMARK)
    bad = _memsql("eval", *cell, "--history", "teacher", env=built_env, check=False)
    assert bad.returncode == 2 and "'--history': 'teacher' is not one of 'model', 'gold'" in bad.stderr
    own = json.loads(_memsql("eval", *cell, "--json", env=built_env).stdout)
    printed = _memsql("eval", *cell, "--history", "gold", env=built_env).stdout
    files = {h: partition_dir(home, "reader-probe", "B_wm5", EXTENDED_BENCHMARK, h) / RESULT_FILE for h in History}
    assert all(f.exists() for f in files.values()), "both histories side by side"
    gold = json.loads((files[History.GOLD].parent / "summary.json").read_text(encoding="utf-8"))
    assert (own["history"], gold["history"]) == ("model", "gold") and gold["ex_strict"] > own["ex_strict"]
    assert f"cascade reader-probe/B_wm5 ({EXTENDED_BENCHMARK}): +{gold['ex_strict'] - own['ex_strict']:.1f} pp" in printed
    keys = {h: {r["request_key"] for r in pq.read_table(f).to_pylist()} for h, f in files.items()}
    assert not keys[History.MODEL] & keys[History.GOLD], "the two histories are different cells"
    # No annotation key name reaches an observed prompt: the snake_case keys are no column, word or
    # value anywhere else, and the source guidance named customer_id and loan_status before.
    turns = read_turns(benchmark_dir(home, EXTENDED_BENCHMARK))
    named = {k for t in turns for k in t["state_updates"] if "_" in k}
    assert {"customer_id", "loan_status", "older_year", "first_customer"} <= named
    prompts = [p for f in files.values() for p in _stored_prompts(home, f)]
    assert len(prompts) == 2 * len(turns)
    leaks = sorted({k for p in prompts for k in named if k in p})
    assert not leaks, leaks


def test_eval_paraphrase_scores_100_under_episodic_memory(built_env):
    cli_env = built_env
    out = json.loads(
        _memsql("eval", "--model", "paraphrase", "--condition", "C", "--json", env=cli_env).stdout
    )
    assert out["success"] and out["model"] == "paraphrase" and out["turns"] == _turns(cli_env)
    assert out["ex_strict"] == 100.0 and out["checks"] == {"harness_integrity": True}


def test_eval_sample_run_prints_its_size_and_interval(built_env):
    cli_env = built_env
    args = ("eval", "--model", "recall-probe", "--condition", "B", "--json")
    out = json.loads(_memsql(*args, "--sessions", "30", env=cli_env).stdout)
    assert out["success"] and out["sessions"] == 30 and out["complete"] is False
    assert len(out["sample_sessions"]) == 30 and 30 <= out["n_turns"] == out["turns"] < _turns(cli_env)
    lo, hi = out["ex_strict_ci95"]
    assert lo <= out["ex_strict"] <= hi and lo < hi
    assert out["share_identical_prompts"] is False
    text = _memsql(*args[:-1], "--sessions", "30", env=cli_env).stdout
    assert f"{lo:.1f}–{hi:.1f}" in text and "sample of 30 sessions" in text


def test_eval_sample_run_with_two_epochs(built_env):
    """a sample of 30 sessions, two epochs, through the CLI."""
    cli_env = built_env
    args = ("eval", "--model", "recall-probe", "--condition", "B", "--sessions", "30", "--epochs", "2", "--json")
    out = json.loads(_memsql(*args, env=cli_env).stdout)
    assert out["success"] and out["epochs"] == 2 and out["sessions"] == 30 and out["complete"] is False
    assert 30 <= out["turns"] < _turns(cli_env) and out["n_turns"] == 2 * out["turns"]
    lo, hi = out["ex_strict_ci95"]
    assert isinstance(lo, float) and isinstance(hi, float) and lo <= out["ex_strict"] <= hi
    home = Path(cli_env["MEMSQL_HOME"])
    rows = pq.read_table(
        home / "samples" / "model=recall-probe" / "condition=B" / "sessions=30" / "turn_results.parquet"
    ).to_pylist()
    assert len(rows) == out["n_turns"] and sorted({r["epoch"] for r in rows}) == [1, 2]


@pytest.mark.parametrize("n", ["0", "-1"])
def test_eval_epochs_below_1_is_one_line_and_writes_nothing(cli_env, n):
    home = Path(cli_env["MEMSQL_HOME"])
    results = home / "results" / "model=gold" / f"condition={PROMPT_TRAJECTORY_CONDITION}"
    proc = _memsql(
        "eval", "--model", "gold", "--condition", PROMPT_TRAJECTORY_CONDITION, "--epochs", n, env=cli_env, check=False
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"memsql eval: --epochs {n}: expected an integer >= 1 (independent samples of every turn)"
    assert not results.exists()


@pytest.mark.parametrize("condition", ["C_analyst", "M0_analyst"])
def test_eval_scope_analyst_on_the_paper_benchmark_is_one_line_naming_the_condition(cli_env, condition):
    proc = _memsql("eval", "--model", "reader-probe", "--condition", condition, "--dry-run", env=cli_env, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"memsql eval: condition {condition} (") and "scope: analyst" in line, line
    assert not (Path(cli_env["MEMSQL_HOME"]) / "results" / "model=reader-probe" / f"condition={condition}").exists()


@pytest.mark.parametrize("n", ["0", "8", "301"])
def test_eval_sessions_out_of_range_is_one_line_and_writes_nothing(built_env, n):
    cli_env = built_env
    results = Path(cli_env["MEMSQL_HOME"]) / "results" / "model=gold" / "condition=D"
    proc = _memsql("eval", "--model", "gold", "--condition", "D", "--sessions", n, env=cli_env, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    size = SMALL_BENCHMARK_SESSIONS
    assert proc.stderr.strip() == f"memsql eval: --sessions {n}: expected 9 to {size} (at least one session for " \
        f"each of the benchmark's 9 source x tier strata, at most its {size} sessions)"
    assert not results.exists()


def test_eval_rejects_unknown_condition_and_model(cli_env):
    proc = _memsql("eval", "--model", "gold", "--condition", "Z", env=cli_env, check=False)
    assert proc.returncode == 2 and "unknown condition 'Z'" in proc.stderr and "Traceback" not in proc.stderr
    proc = _memsql("eval", "--model", "nope", "--condition", "A", env=cli_env, check=False)
    assert proc.returncode == 2 and "nope" in proc.stderr and "Traceback" not in proc.stderr


def test_run_materializes_only_what_dagster_reports_out_of_date(built_env, tmp_path):
    cli_env = built_env  # a copy of main_job_home, which `memsql run --skip-eval` built
    first = json.loads(_memsql("run", "--skip-eval", "--json", env=cli_env).stdout)
    assert first["main_job_skipped"] and first["run_id"] is None and not first["main_job_why"]
    verbose = _memsql("run", "--skip-eval", "--force", "--json", "--verbose", env=cli_env)
    forced = json.loads(verbose.stdout)
    assert not forced["main_job_skipped"] and forced["run_id"] and forced["success"]
    assert forced["checks"] == first["checks"] and forced["benchmark"] == first["benchmark"]
    assert f" - dagster - INFO - {MAIN_JOB} - {forced['run_id']} - " in verbose.stderr and forced["log"] is None
    assert "up to date, not re-run" in _memsql("run", "--skip-eval", env=cli_env).stdout

    # A changed source setting is a new data version of raw_northwind: Dagster marks northwind stale.
    sources = tmp_path / "sources.yaml"
    sources.write_text((REPO / "sources" / "sources.yaml").read_text().replace("orders: 16282", "orders: 16000"))
    changed = json.loads(
        _memsql("run", "--skip-eval", "--json", env=dict(cli_env, MEMSQL_SOURCES_FILE=str(sources))).stdout
    )
    assert changed["main_job_why"]["northwind"] == "has a new dependency data version: raw_northwind"
    assert changed["main_job_built"]["sources"] == "raw_northwind changed"
    assert "bird_financial" not in changed["main_job_why"] and changed["success"]


def _assert_stages_then_summary_with_dagster_logs_in_a_file(proc: subprocess.CompletedProcess, home: Path) -> None:
    """The console shows one line per stage, then the summary; Dagster's log lines go to the file the
    summary names (--verbose prints them instead: test_run_materializes_only_what_dagster_reports_out_of_date)."""
    progress = proc.stderr.splitlines()
    assert 3 <= len(progress) <= 40 and all(line.startswith("memsql run [") for line in progress), proc.stderr
    assert any("main job: materializing" in line for line in progress)
    summary = proc.stdout.strip().splitlines()
    assert len(summary) <= 50, proc.stdout  # one screen (tests/unit/test_run_console.py: with every evaluation)
    new_home = "memsql main job: built: sources, sessions, semantic memory, trajectory store (new home)"
    assert summary[0].startswith(new_home), summary[0]
    assert summary[1].startswith("sources: bird_financial (") and summary[2] == ""
    turns = len(read_turns(benchmark_dir(home)))
    assert summary[3].startswith(f"paper benchmark: {SMALL_BENCHMARK_SESSIONS} sessions, {turns} turns")
    assert sum(line.startswith("checks: ") for line in summary) == 1
    log = Path(proc.stdout.rsplit("Dagster and dbt logs: ", 1)[1].split()[0])
    assert log.parent == home / "logs"
    text = log.read_text()
    run_id = proc.stdout.split("(run ", 1)[1].split(",")[0]
    assert f" - dagster - INFO - {MAIN_JOB} - {run_id} - " in text, text[-2000:]
    assert "BetaWarning" in text  # Dagster's warnings at import: in the log, not on the terminal
