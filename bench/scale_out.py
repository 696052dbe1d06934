"""Throughput of the embedded default against the scale-out profile on this machine.

Not a test. The work is a batch of six partitions, gold and recall-probe under A, B and C, over 100
sessions (466 turns each, 2,796 in all), in two variants: the built-ins as they are (no latency: the
harness's CPU cost is all there is) and both answering after a simulated latency (default 200 ms,
like an API model). Every round starts from an empty request store and no results.

    embedded   one process, as `memsql run` evaluates: the six partitions one after another through
               Dagster (execute_in_process, SQLite instance, private Redis, local Chroma); timed from
               the process's start to its end.
    scale-out  this machine's PostgreSQL, RabbitMQ and Redis, a `chroma run` server, a Dagster daemon
               and two Celery workers (orchestration/local_deployment.py); `dagster job backfill` of the
               six partitions, timed from the command's start to the end of the last run. A model's
               runs never overlap (deploy/dagster.yaml), so two run at a time: one per model.

Rounds alternate embedded and scale-out; medians are reported, with turns/s and the ratio
(embedded wall / scale-out wall: above 1, scale-out is faster).

    .venv/bin/python bench/scale_out.py [--rounds 3] [--latency-ms 200] [--every 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as c
import yaml

from memsql_assets.defs.jobs import EVALUATE_JOB
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.results import partition_dir
from memsql_assets.lib.harness.summary import SUMMARY_FILE
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.orchestration.local_deployment import (
    BIN,
    CELLS,
    absent_machine_service,
    base_env,
    deployment,
)

MODELS = sorted({m for m, _ in CELLS})
RUN_TIMEOUT_S = 1800.0

EMBEDDED_CHILD = """
import sys
import memsql_assets
from dagster import DagsterInstance
from memsql_assets.defs.instance import ensure_dagster_home
from memsql_assets.definitions import defs
from memsql_assets.defs.evaluation.partitions import partition_key
from memsql_assets.defs.jobs import EVALUATE_JOB
from memsql_assets.lib.paths import memsql_home
cells = [c.split("/") for c in sys.argv[1:]]
ensure_dagster_home(memsql_home())
with DagsterInstance.get() as instance:
    instance.add_dynamic_partitions("model", sorted({m for m, _ in cells}))
    for model, condition in cells:
        result = defs.resolve_job_def(EVALUATE_JOB).execute_in_process(
            instance=instance, partition_key=partition_key(model, condition)
        )
        assert result.success, (model, condition)
"""


def models_file(path: Path, latency_ms: int) -> Path:
    registry = yaml.safe_load((c.REPO / "models.yaml").read_text(encoding="utf-8"))
    for model in MODELS:
        if latency_ms:
            registry["models"][model]["provider_params"] = {"simulated_latency_ms": latency_ms}
    path.write_text(yaml.safe_dump(registry, sort_keys=False), encoding="utf-8")
    return path


def clear_results(home: Path) -> None:
    """No request store, results or checkpoints: every turn asks the model again."""
    for name in ("requests", "results"):
        shutil.rmtree(home / name, ignore_errors=True)


def embedded_round(home: Path, models: Path, marker: str) -> float:
    clear_results(home)
    shutil.rmtree(home / "dagster_home", ignore_errors=True)
    env = {**base_env(marker, models), "MEMSQL_HOME": str(home)}
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", EMBEDDED_CHILD, *(f"{m}/{c_}" for m, c_ in CELLS)],
        cwd=c.REPO,
        env=env,
        check=True,
        capture_output=True,
    )
    return time.monotonic() - start


def scale_out_round(d: Any) -> dict[str, Any]:
    from dagster import DagsterInstance, RunsFilter

    clear_results(d.home)
    with DagsterInstance.from_config(str(d.dagster_home)) as instance:
        before = {r.run_id for r in instance.get_runs(filters=RunsFilter(job_name=EVALUATE_JOB))}
        start = time.time()
        keys = ",".join(f"{cond}|{model}" for model, cond in CELLS)
        done = d.run([str(BIN / "dagster"), "job", "backfill", "-w", "workspace.yaml", "-j", EVALUATE_JOB,
                      "--partitions", keys, "--noprompt"])  # fmt: skip
        if done.returncode:
            raise RuntimeError(done.stdout[-2000:] + done.stderr[-2000:])
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while True:
            records = [
                r
                for r in instance.get_run_records(filters=RunsFilter(job_name=EVALUATE_JOB))
                if r.dagster_run.run_id not in before
            ]
            if len(records) == len(CELLS) and all(r.end_time for r in records):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"runs did not end in {RUN_TIMEOUT_S:.0f} s\n{d.tail('daemon')}")
            time.sleep(0.5)
    failed = [
        r.dagster_run.tags.get("dagster/partition")
        for r in records
        if r.dagster_run.status.value != "SUCCESS"
    ]
    if failed:
        raise RuntimeError(f"runs failed: {failed}")
    steps = {
        (m, c_): json.loads((partition_dir(d.home, m, c_) / SUMMARY_FILE).read_text())["wall_s"]
        for m, c_ in CELLS
    }
    return {
        "wall_s": max(r.end_time for r in records) - start,
        "queued_s": c.median(r.start_time - r.create_timestamp.timestamp() for r in records),
        "run_s": c.median(r.end_time - r.start_time for r in records),
        "partition_s": c.median(steps.values()),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--latency-ms", type=int, default=200)
    ap.add_argument("--every", type=int, default=3, help="every k-th session (3: 100 sessions)")
    args = ap.parse_args()
    absent = absent_machine_service()
    if absent:  # a smoke pass on a machine without them has nothing to run
        print(f"bench/scale_out.py needs the machine's services: {absent}", file=sys.stderr)
        return 0 if c.smoke() else 2
    info = c.machine()
    source = c.bench_home(every=args.every)
    turns = len(read_turns(benchmark_dir(source))) * len(CELLS)
    rows, results = [], {}
    with tempfile.TemporaryDirectory(prefix="memsql-bench-scale-out-") as tmp:
        for latency in (0,) if c.smoke() else (0, args.latency_ms):  # a smoke pass: one variant
            root = Path(tmp) / f"latency{latency}"
            models = models_file(Path(tmp) / f"models-{latency}.yaml", latency)
            shared = c.fresh_copy(source, root / "shared")
            embedded_home = c.fresh_copy(source, root / "embedded")
            with deployment(root, shared, models) as d:
                d.start_cluster(["w1", "w2"])
                embedded, scaled = [], []
                for r in range(args.rounds):
                    embedded.append(embedded_round(embedded_home, models, d.marker))
                    scaled.append(scale_out_round(d))
                    print(f"latency {latency} ms, round {r + 1}: embedded {embedded[-1]:.1f} s, "
                          f"scale-out {scaled[-1]['wall_s']:.1f} s", file=sys.stderr, flush=True)  # fmt: skip
            e, s = c.median(embedded), c.median(x["wall_s"] for x in scaled)
            results[f"latency_{latency}ms"] = {"embedded_s": embedded, "scale_out": scaled}
            rows.append(
                [
                    f"{latency} ms",
                    round(e, 1),
                    round(turns / e, 1),
                    round(s, 1),
                    round(turns / s, 1),
                    round(e / s, 2),
                    round(c.median(x["queued_s"] for x in scaled), 1),
                    round(c.median(x["run_s"] for x in scaled), 1),
                    round(c.median(x["partition_s"] for x in scaled), 1),
                ]
            )
    header = ["model latency", "embedded s", "turns/s", "scale-out s", "turns/s", "ratio",
              "queued s", "run s", "partition s"]  # fmt: skip
    print(f"{len(CELLS)} partitions, {turns:,} turns; medians of {args.rounds} rounds")
    print(c.table(header, rows))
    info["loadavg_at_end"] = c.load_now()
    path = c.write_json(
        "scale_out",
        {
            "machine": info,
            "settings": {
                "rounds": args.rounds,
                "latency_ms": args.latency_ms,
                "every": args.every,
                "turns": turns,
            },
            "table": {"header": header, "rows": rows},
            "rounds": results,
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
