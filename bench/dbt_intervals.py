"""What the intervals cost: `dbt run` of every model, before (main at BEFORE_COMMIT, no intervals)
and after (this tree: Wilson intervals of EX figures through the DuckDB functions of
lib/evaluation/duckdb_plugin.py, paired session bootstraps of differences), on the paper-sized grid
of bench/dbt_fact_table.py (300 sessions, 30 partitions, 42,000 result rows); and the partition
summary with its interval (lib/evaluation/interval.py) over one 1,400-turn partition.
Figures: dbt's wall time (start-up included) and the marts' own execution times (run_results.json),
medians over the rounds, the two variants interleaved so both see the same load.

    .venv/bin/python bench/dbt_intervals.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
from _common import REPO, bench_home, load_now, machine, median, table, write_json
from dbt_fact_table import MODELS, dbt, grid

from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir
from memsql_assets.lib.harness.summary import summarize

BEFORE_COMMIT = "bfbe911"  # main before the intervals
MARTS = ("agg_ex_by_source", "agg_ex_by_turn_depth", "agg_mbs", "agg_ablation", "agg_model_pair_gaps")


def project_at(commit: str | None, dest: Path) -> Path:
    if commit is None:
        shutil.copytree(REPO / "dbt_project", dest, ignore=shutil.ignore_patterns("target", "logs"))
        return dest
    archive = subprocess.run(
        ["git", "archive", commit, "dbt_project"], cwd=REPO, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest.parent / f"{dest.name}_src", filter="data")
    shutil.move(dest.parent / f"{dest.name}_src" / "dbt_project", dest)
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    info = machine()
    base = bench_home(every=1)
    with tempfile.TemporaryDirectory(prefix="memsql-bench-ci-") as tmp:
        work = Path(tmp)
        grid_home = work / "grid"
        shutil.copytree(base, grid_home, ignore=shutil.ignore_patterns("redis", "requests", "results"))
        grid(grid_home)
        rows = pq.read_table(partition_dir(grid_home, MODELS[0], "A") / RESULT_FILE).to_pylist()
        summary_s = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            summarize(rows, MODELS[0], "A", 0.0)
            summary_s.append(time.perf_counter() - started)
        variants = {"before": BEFORE_COMMIT, "after": None}
        envs = {}
        for name, commit in variants.items():
            home = work / f"{name}_home"
            shutil.copytree(grid_home, home, ignore=shutil.ignore_patterns("dbt", "dbt_target", "dbt_logs"))
            (home / "dbt").mkdir()
            envs[name] = (project_at(commit, work / f"{name}_project"), home)
            dbt(*envs[name], "seed")
        samples: dict[str, list[tuple[float, dict[str, float]]]] = {n: [] for n in variants}
        for _ in range(args.rounds):
            for name in variants:
                samples[name].append(dbt(*envs[name], "run"))
    figures = {
        name: {
            "dbt_run_wall_s": median(w for w, _ in s),
            **{f"{m}_s": median(t[m] for _, t in s) for m in MARTS},
        }
        for name, s in samples.items()
    }
    figures["summary_interval_s"] = median(summary_s)  # type: ignore[assignment]
    print(
        table(
            ["", "before s (median)", "after s (median)"],
            [
                [k, f"{figures['before'][k]:.2f}", f"{figures['after'][k]:.2f}"]
                for k in ["dbt_run_wall_s", *(f"{m}_s" for m in MARTS)]
            ],
        )
    )
    print(f"partition summary with its interval (1,400 turns, 300 sessions): {median(summary_s):.2f} s")
    info["loadavg_at_end"] = load_now()
    write_json("dbt_intervals", {"machine": info, "rounds": args.rounds, "rows": 30 * 1400, "figures": figures})


if __name__ == "__main__":
    main()
