"""Memories from outside the repository: the example package under examples/ installed offline into a
folder of its own becomes a condition (a `condition` partition of turn_results, a column of the UI's
grid) and a partition of it materializes through Dagster; a plug-in that raises during turns gives
those turns a memory_error and the partition goes on; a bad conditions file is one line and runs
nothing. The `memsql` command as a user runs it: real subprocesses, real Dagster runs, a private Redis."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.results import partition_dir
from memsql_assets.lib.paths import benchmark_dir
from tests.integration.memsql_cli import home_env

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "memsql-keyword-memory"
PLUGINS = Path(__file__).with_name("plugins")
EXAMPLE_CONDITION = "KW"  # examples/memsql-keyword-memory/conditions.yaml
RAISING_CONDITION = "BOOM"  # plugins/conditions.yaml


def memsql(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """The `memsql` console script's entry point (it reports a malformed conditions file in one line)."""
    return subprocess.run(
        [sys.executable, "-m", "memsql_assets.cli_entry", *args], capture_output=True, text=True, env=env, timeout=600
    )


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    """The example package installed offline (no index, the environment's setuptools) into a folder."""
    tmp = tmp_path_factory.mktemp("plugin")
    source = tmp / "source"
    shutil.copytree(EXAMPLE, source)  # the build writes beside its sources: never into the repository
    site = tmp / "site"
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index"]
    proc = subprocess.run([*cmd, "--target", str(site), str(source)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (site / "memsql_keyword_memory").is_dir()
    return site


@pytest.fixture(scope="module")
def plugin_home(small_home, tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("plugin_home") / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "redis", "dbt", "report", "requests"))
    return home


def _env(home: Path, pythonpath: Path | None, conditions: Path) -> dict[str, str]:
    env = home_env(home)
    env["MEMSQL_CONDITIONS_FILE"] = str(conditions)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def test_the_installed_example_is_a_column_of_the_grid_and_materializes_through_dagster(plugin_site, plugin_home):
    env = _env(plugin_home, plugin_site, EXAMPLE / "conditions.yaml")
    grid = subprocess.run(
        [
            sys.executable,
            "-c",
            "from memsql_assets.definitions import defs\n"
            "parts = defs.resolve_assets_def('turn_results').partitions_def\n"
            "print(' '.join(parts.get_partitions_def_for_dimension('condition').get_partition_keys()))",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert grid.returncode == 0, grid.stderr[-3000:]
    columns = grid.stdout.split()
    assert columns[-1] == EXAMPLE_CONDITION and "A" in columns, columns

    proc = memsql(env, "eval", "--model", "reader-probe", "--condition", EXAMPLE_CONDITION, "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    turns = read_turns(benchmark_dir(plugin_home))
    assert out["success"] and out["n_turns"] == len(turns) and out["memory_implementation"] == "keyword-overlap"
    assert out["memory_store_entries"] == len(turns)  # every session kept each of its turns until it ended
    # The latest turn restates what the paper benchmark's next turn needs: the careful reader gets it all.
    assert out["ex_strict"] == 100.0
    rows = pq.read_table(partition_dir(plugin_home, "reader-probe", EXAMPLE_CONDITION) / "turn_results.parquet")
    assert set(rows.column("condition").to_pylist()) == {EXAMPLE_CONDITION}

    with dg.DagsterInstance.from_config(str(plugin_home / "dagster_home")) as instance:
        events = instance.fetch_materializations(dg.AssetKey("turn_results"), limit=10).records
        keys = {e.asset_materialization.partition for e in events}
    assert dg.MultiPartitionKey({"model": "reader-probe", "condition": EXAMPLE_CONDITION}) in keys

    # Without the package, its entry point is gone: one line naming the file and field, nothing run.
    missing = memsql(_env(plugin_home, None, EXAMPLE / "conditions.yaml"), "run")
    assert missing.returncode == 2
    assert missing.stderr.strip().count("\n") == 0
    assert "conditions.KW.memory.implementation" in missing.stderr and "keyword-overlap" in missing.stderr


def test_a_plugin_that_raises_gives_memory_errors_on_those_turns_and_the_partition_goes_on(plugin_home):
    env = _env(plugin_home, PLUGINS, PLUGINS / "conditions.yaml")
    proc = memsql(env, "eval", "--model", "reader-probe", "--condition", RAISING_CONDITION, "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    turns = read_turns(benchmark_dir(plugin_home))
    failing = {(t["session_id"], t["turn_index"]) for t in turns if t["turn_index"] in (3, 5)}
    assert failing and out["n_turns"] == len(turns), "every turn has its row"
    assert out["error_classes"]["memory_error"] == len(failing)
    rows = pq.read_table(partition_dir(plugin_home, "reader-probe", RAISING_CONDITION) / "turn_results.parquet")
    by_turn = {(r["session_id"], r["turn_index"]): r for r in rows.to_pylist()}
    for key, row in by_turn.items():
        if key[1] == 3:  # the model was not asked
            assert row["error_class"] == "memory_error" and not row["ex_strict"] and row["raw_output"] == ""
            assert "memory error during retrieve: RuntimeError: retrieve broke" in row["error_message"]
        elif key[1] == 5:  # answered and scored, then the memory failed to keep it
            assert row["error_class"] == "memory_error" and row["extracted_sql"] and not row["ex_strict"]
            assert "memory error during persist: ValueError: persist broke on turn 5" in row["error_message"]
        else:
            assert row["error_class"] != "memory_error"
    assert out["calls"] == len(turns) - sum(1 for k in failing if k[1] == 3)


BAD_FILES = {
    "unknown": ("X1", "{implementation: no-such-memory}", "conditions.X1.memory.implementation", "unknown memory"),
    "import": ("X2", "{implementation: 'no_such_pkg.mod:Memory'}", "conditions.X2.memory.implementation", "cannot import"),
    "clash": ("B", "{implementation: window, params: {turns: 3}}", "conditions.B", "clashes with the built-in"),
    "params": ("X3", "{implementation: summary, params: {max_turns: 0}}", "conditions.X3.memory.params.max_turns", "greater than or equal to 1"),
    "mode": ("X4", "{implementation: none}\n    context_mode: sometimes", "conditions.X4.context_mode", "expected one of annotated|observed"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_conditions_file_is_one_line_naming_file_and_field_and_nothing_runs(case, tmp_path):
    name, memory, field, cause = BAD_FILES[case]
    conditions = tmp_path / "conditions.yaml"
    conditions.write_text(f"conditions:\n  {name}:\n    memory: {memory}\n", encoding="utf-8")
    home = tmp_path / "home"
    proc = memsql(_env(home, None, conditions), "run")
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "\n" not in line and str(conditions) in line and f"field '{field}'" in line and cause in line, line
    assert not home.exists(), "nothing was built or evaluated"


def test_a_summary_written_by_a_registry_model_rolls_forward_through_its_endpoint(plugin_home, tmp_path):
    from tests.models.http_endpoint import Answer as Reply
    from tests.models.http_endpoint import completion, openai_endpoint

    conditions = tmp_path / "conditions.yaml"
    conditions.write_text(
        "conditions:\n  SM:\n    memory: {implementation: summary, params: {model: summarizer, max_words: 40}}\n",
        encoding="utf-8",
    )
    with openai_endpoint() as server:
        server.answer = lambda n: Reply(body=completion(f"SUMMARY {n}: the user asked about revenue."))
        models = tmp_path / "models.yaml"
        models.write_text(
            "models:\n"
            "  reader-probe:\n    litellm_model: memsql/reader-probe\n    kind: builtin\n    reasoning: {type: none}\n"
            "    max_concurrency: 4\n    price_per_mtok: {input: 0, output: 0}\n    enabled: true\n"
            "  summarizer:\n    litellm_model: openai/tiny-summary\n    kind: api\n"
            f"    api_base: {server.url}\n    reasoning: {{type: none}}\n"
            "    max_concurrency: 1\n    price_per_mtok: {input: 0, output: 0}\n    enabled: true\n",
            encoding="utf-8",
        )
        env = {**_env(plugin_home, None, conditions), "MEMSQL_MODELS_FILE": str(models)}
        proc = memsql(env, "eval", "--model", "reader-probe", "--condition", "SM", "--sessions", "9", "--json")
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = json.loads(proc.stdout)
        sessions = set(out["sample_sessions"])
        turns = [t for t in read_turns(benchmark_dir(plugin_home)) if t["session_id"] in sessions]
        later = sum(1 for t in turns if t["turn_index"] > 1)
        assert server.calls == later, "one summary before every turn that follows another"
        first, *rest = [r["body"]["messages"] for r in server.requests]
        assert "running summary" in first[0]["content"] and "Summary so far:\n(nothing yet)" in first[1]["content"]
        assert any("SUMMARY" in m[1]["content"].split("New turns:")[0] for m in rest), "the summary rolls forward"
    assert out["error_classes"]["memory_error"] == 0 and out["n_turns"] == len(turns)
    # The model's summary is prose: it resolves nothing, and the probe finds no filled SQL in it.
    assert out["ex_memory_critical"] == 0.0
