"""Condition C with a 200 ms model at concurrency 16: sessions in waves of W = 16.

Not a test. The model is the `gold` built-in with `simulated_latency_ms: 200` and
`max_concurrency: 16` in a temporary models.yaml (so W = 16 by default), called in-process by the
gateway; every run starts from a fresh copy of the full 300-session / 1,400-turn home (empty request
store, no results), so every turn waits for the model, in a fresh in-process SQL result cache. The
home's persistent SQL result cache holds the ground truth's results, as it does for a `memsql eval
--condition C` after `memsql run` (the benchmark's checks put them there). `--cold-sql-cache` empties it, so each partition also runs every ground-truth query once. What is timed:

    run_s        the runner's run alone (sessions, waves, commits), partition setup excluded
    partition_s  evaluate_partition end to end (services, embeddings warm-up, run, publish)

against three figures: `ideal` = 1,400 × 0.2 s / 16 (every slot busy all the time),
`schedule` = the runner's schedule if everything but the model calls took no time (each source's
waves one after another, the sources side by side: `scheduled_s`), and `sequential` = 1,400 × 0.2 s
(W = 1, one session at a time: the paper's order).

    .venv/bin/python bench/waves.py [--rounds 3] [--latency-ms 200] [--concurrency 16] [--every 1] [--cold-sql-cache]
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import _common as c

import memsql_assets.lib.harness.runner as runner_mod
from memsql_assets.lib.benchmark.gt_check import check_ground_truth
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.schedule import waves
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.paths import benchmark_dir, source_db_path, sql_cache_path
from memsql_assets.lib.sources.config import SOURCE_NAMES
from memsql_assets.lib.sql.result_cache import RESULTS

MODEL = "gold-slow"


def registry_yaml(latency_ms: int, concurrency: int) -> str:
    return f"""
models:
  {MODEL}:
    litellm_model: memsql/gold
    kind: builtin
    reasoning: {{type: none}}
    provider_params: {{simulated_latency_ms: {latency_ms}}}
    max_concurrency: {concurrency}
    price_per_mtok: {{input: 0, output: 0}}
    enabled: true
"""


def scheduled_s(chains: dict[str, list[list[int]]], slots: int, latency_s: float) -> float:
    """The wall of the runner's schedule if all but the model calls took no time: each source's waves
    (sessions' turn counts) one after another, a freed slot to the chain with the most turns ahead on
    its critical path, within a chain the longest session first."""
    ready: list[tuple[int, int, str, int]] = []  # (-urgency, arrival, source, session's turns)
    pending = {src: list(waves) for src, waves in chains.items()}
    left: dict[str, int] = {}
    arrivals = itertools.count()

    def release(src: str) -> None:
        if pending[src]:
            urgency = sum(max(wave) for wave in pending[src])
            wave = sorted(pending[src].pop(0), reverse=True)
            left[src] = len(wave)
            for n in wave:
                heapq.heappush(ready, (-urgency, next(arrivals), src, n))

    for src in chains:
        release(src)
    running: list[tuple[float, str]] = []  # (ends at, source)
    now = 0.0
    while ready or running:
        while ready and len(running) < slots:
            _, _, src, n = heapq.heappop(ready)
            heapq.heappush(running, (now + n * latency_s, src))
        now, src = heapq.heappop(running)
        left[src] -= 1
        if not left[src]:
            release(src)
    return now


def ideals(turns: list[dict[str, Any]], latency_s: float, size: int) -> dict[str, float]:
    lengths = Counter(t["session_id"] for t in turns)
    source = {t["session_id"]: t["source"] for t in turns}
    chains = waves(sorted(lengths), size, source)
    return {
        "ideal_s": round(len(turns) * latency_s / size, 3),
        "schedule_s": round(
            scheduled_s({src: [[lengths[s] for s in w] for w in ws] for src, ws in chains.items()}, size, latency_s), 3
        ),
        "sequential_s": round(len(turns) * latency_s, 3),
    }


def one_run(base: Path, work: Path, registry: Any, cold_sql_cache: bool) -> dict[str, Any]:
    home = c.fresh_copy(base, work / "home")
    if cold_sql_cache:
        sql_cache_path(home).unlink(missing_ok=True)
    run_wall: list[float] = []
    orig_run = runner_mod.PartitionRunner.run

    async def timed_run(self: Any, ts: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return await orig_run(self, ts)
        finally:
            run_wall.append(time.perf_counter() - t0)

    runner_mod.PartitionRunner.run = timed_run  # type: ignore[method-assign]
    RESULTS.clear()  # a new process's in-memory cache
    t0 = time.perf_counter()
    try:
        outcome = evaluate_partition(home, MODEL, "C", registry=registry)
    finally:
        runner_mod.PartitionRunner.run = orig_run  # type: ignore[method-assign]
    rows = outcome.rows
    return {
        "run_s": round(run_wall[0], 3),
        "partition_s": round(time.perf_counter() - t0, 3),
        "turns": len(rows),
        "model_calls": sum(1 for r in rows if not r["cache_hit"]),
        "ex_strict": outcome.summary["ex_strict"],
        "wave_size": outcome.summary["wave_size"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--latency-ms", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--every", type=int, default=1, help="every k-th session of the 300 (1: all)")
    ap.add_argument("--cold-sql-cache", action="store_true", help="no ground-truth results cached beforehand")
    args = ap.parse_args(argv)

    info = c.machine()
    base = c.bench_home(every=args.every)
    turns = read_turns(benchmark_dir(base))
    # What the benchmark's checks leave in the persistent cache (a no-op once the base holds it).
    check_ground_truth(turns, {s: source_db_path(base, s) for s in SOURCE_NAMES}, sql_cache_path(base))
    target = ideals(turns, args.latency_ms / 1000, args.concurrency)
    runs = []
    with tempfile.TemporaryDirectory(prefix="memsql-bench-waves-") as tmp:
        work = Path(tmp)
        models = work / "models.yaml"
        models.write_text(registry_yaml(args.latency_ms, args.concurrency), encoding="utf-8")
        registry = load_registry(models)
        for i in range(args.rounds):
            r = one_run(base, work, registry, args.cold_sql_cache)
            runs.append(r)
            print(f"round {i + 1}: {r}", file=sys.stderr)
    run_s = c.median(r["run_s"] for r in runs)
    partition_s = c.median(r["partition_s"] for r in runs)
    summary = {
        **target,
        "median_run_s": round(run_s, 3),
        "median_partition_s": round(partition_s, 3),
        "run_over_ideal": round(run_s / target["ideal_s"], 3),
        "partition_over_ideal": round(partition_s / target["ideal_s"], 3),
        "run_over_schedule": round(run_s / target["schedule_s"], 3),
        "target": "partition wall <= 1.5x ideal",
        "met": partition_s <= 1.5 * target["ideal_s"],
    }
    print(
        c.table(
            ["turns", "W", "ideal s", "schedule s", "sequential s", "run s", "partition s", "÷ ideal", "≤ 1.5×"],
            [
                [
                    runs[0]["turns"],
                    runs[0]["wave_size"],
                    target["ideal_s"],
                    target["schedule_s"],
                    target["sequential_s"],
                    summary["median_run_s"],
                    summary["median_partition_s"],
                    f"{summary['partition_over_ideal']}×",
                    "met" if summary["met"] else "missed",
                ]
            ],
        )
    )
    info["loadavg_at_end"] = c.load_now()
    path = c.write_json(
        "waves",
        {"machine": info, "settings": vars(args), "model": MODEL, "summary": summary, "runs": runs},
    )
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
