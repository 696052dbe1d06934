"""Does an incremental `fct_turn_evaluations` pay? The plain table against the incremental model of
commit 78103e0 (delete+insert per changed partition), on a full-size grid.

The grid: the full 300-session / 1,400-turn benchmark on the embedded sources, one real `gold × A`
partition copied to 5 models × 6 conditions = 30 partitions = 42,000 result rows (the paper's grid).
Each variant runs in its own copy of dbt_project/ and of the data directory. After a first build of
everything, each round rewrites one partition file (what a re-evaluated partition does) and runs
`dbt run --select fct_turn_evaluations` in each variant, interleaved so both see the same load; the
incremental variant also runs once more with nothing changed.
Figures: dbt's own execution time of the model (run_results.json) and the wall time of the command
(dbt start-up included), medians over the rounds.

    .venv/bin/python bench/dbt_fact_table.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from _common import REPO, bench_home, load_now, machine, median, table, write_json

from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir
from memsql_assets.lib.report.dbt_cli import dbt_args
from memsql_assets.lib.vocabulary import CONDITION_NAMES

INCREMENTAL_COMMIT = "78103e0"  # a commit of main whose model is the incremental one
MODEL_SQL = Path("models/marts/fct_turn_evaluations.sql")
MODELS = [f"m{i}" for i in range(5)]
DBT = Path(sys.executable).with_name("dbt")


def grid(home: Path) -> None:
    """30 partitions, each a copy of the real gold × A result file under its own model/condition."""
    source = partition_dir(home, "gold", "A") / RESULT_FILE
    if not source.exists():
        evaluate_partition(home, "gold", "A")
    rows = pq.read_table(source)
    for model in MODELS:
        for condition in CONDITION_NAMES:
            t = rows.set_column(rows.schema.get_field_index("model"), "model", pa.array([model] * len(rows)))
            t = t.set_column(
                t.schema.get_field_index("condition"), "condition", pa.array([condition] * len(t))
            )
            target = partition_dir(home, model, condition) / RESULT_FILE
            target.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(t, target)
    shutil.rmtree(partition_dir(home, "gold", "A").parent)


def dbt(project: Path, home: Path, *args: str) -> tuple[float, dict[str, float]]:
    env = {
        **os.environ,
        "MEMSQL_HOME": str(home),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "False",
        "DBT_TARGET_PATH": str(home / "dbt_target"),
        "DBT_LOG_PATH": str(home / "dbt_logs"),
    }
    cmd = [str(DBT), *dbt_args(*args), "--project-dir", str(project), "--profiles-dir", str(project)]
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"dbt {' '.join(args)} failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
    results = json.loads((home / "dbt_target" / "run_results.json").read_text())["results"]
    return wall, {r["unique_id"].split(".")[-1]: r["execution_time"] for r in results}


def setup(name: str, model_sql: str, base: Path, work: Path) -> tuple[Path, Path]:
    """A private copy of dbt_project/ with `model_sql` and of the data directory, fully built once."""
    project = work / f"{name}_project"
    shutil.copytree(REPO / "dbt_project", project, ignore=shutil.ignore_patterns("target", "logs"))
    (project / MODEL_SQL).write_text(model_sql)
    home = work / f"{name}_home"
    shutil.copytree(
        base, home, ignore=shutil.ignore_patterns("dbt", "dbt_target", "dbt_logs", "redis", "requests")
    )
    (home / "dbt").mkdir()
    dbt(project, home, "run", "--select", "+fct_turn_evaluations")  # first build: every partition
    return project, home


def one_round(project: Path, home: Path, i: int) -> tuple[float, float]:
    """A re-evaluated partition (same rows, new file), then the model: (model s, wall s)."""
    f = partition_dir(home, MODELS[i % len(MODELS)], CONDITION_NAMES[i % len(CONDITION_NAMES)]) / RESULT_FILE
    pq.write_table(pq.read_table(f), f)
    wall, times = dbt(project, home, "run", "--select", "fct_turn_evaluations")
    return times["fct_turn_evaluations"], wall


def summary(samples: list[tuple[float, float]]) -> dict[str, float]:
    return {"model_s": median(m for m, _ in samples), "wall_s": median(w for _, w in samples)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    info = machine()
    base = bench_home(every=1)
    plain_sql = (REPO / "dbt_project" / MODEL_SQL).read_text()
    incremental_sql = subprocess.run(
        ["git", "show", f"{INCREMENTAL_COMMIT}:dbt_project/{MODEL_SQL}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    with tempfile.TemporaryDirectory(prefix="memsql-bench-dbt-") as tmp:
        work = Path(tmp)
        grid_home = work / "grid"
        shutil.copytree(base, grid_home, ignore=shutil.ignore_patterns("redis", "requests", "results"))
        grid(grid_home)
        table_env = setup("table", plain_sql, grid_home, work)
        incremental_env = setup("incremental", incremental_sql, grid_home, work)
        samples: dict[str, list[tuple[float, float]]] = {"table": [], "incremental": [], "unchanged": []}
        for i in range(args.rounds):  # interleaved, so both variants see the same load
            samples["table"].append(one_round(*table_env, i))
            samples["incremental"].append(one_round(*incremental_env, i))
            wall, times = dbt(*incremental_env, "run", "--select", "fct_turn_evaluations")
            samples["unchanged"].append((times["fct_turn_evaluations"], wall))
    figures = {
        "table": {"one_partition_changed": summary(samples["table"])},
        "incremental": {
            "one_partition_changed": summary(samples["incremental"]),
            "nothing_changed": summary(samples["unchanged"]),
        },
        "samples": samples,
    }
    rows = [
        [name, case, f"{v['model_s']:.2f}", f"{v['wall_s']:.2f}"]
        for name in ("table", "incremental")
        for case, v in figures[name].items()  # type: ignore[union-attr]
    ]
    print(table(["fct_turn_evaluations", "run", "model s (median)", "dbt wall s (median)"], rows))
    info["loadavg_at_end"] = load_now()
    write_json(
        "dbt_fact_table", {"machine": info, "rounds": args.rounds, "rows": 30 * 1400, "figures": figures}
    )


if __name__ == "__main__":
    main()
