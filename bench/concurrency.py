"""Throughput of a partition with a slow model: 200 ms per call, at concurrency 1, 4, 16 and 64.

Not a test. The model is a litellm custom provider registered in `litellm.custom_provider_map`
(`benchlat/…`): its `acompletion` sleeps asynchronously for the latency and answers with the
ground-truth SQL of a turn whose question is the one it finds in the prompt. Follow-ups whose text
recurs across sessions ("And for 2019?") get one of those turns' SQL, so most answers under A are
someone else's query: they are executed and scored (and the fallback run for contamination) as a
real model's wrong answers would be.
Its registry entry lives in a temporary models.yaml (kind api, max_concurrency N, a dummy key in
MEMSQL_BENCH_LATENCY_KEY), so the whole real path runs: evaluate_partition, the runner's session
scheduling, the gateway's semaphore, the request store (fresh per run), litellm, the scorer,
Redis working memory for condition B.

Sessions are sequential inside (turn t+1 needs turn t's memory), so with S sessions and N slots the
best possible wall time is the makespan of the sessions, in session order, on N slots, each turn
costing the latency when it calls the model and 0 when the request store answers (identical
prompts, e.g. the same follow-up under condition A, are answered from the store): `ideal`.
Efficiency = ideal ÷ achieved (run time of the runner, partition setup excluded). The naive ideal
min(N, S) ÷ latency (turns/s) is reported too; it ignores the tail of long sessions.

Capacity: each condition also runs once at concurrency 16 with a 0 ms model. Its turns/s is what
the process can do at all on this machine (CPU-bound: SQL, litellm, stores, the GIL); capacity ÷
ideal is the CPU-bound ceiling of the efficiency at a level — no scheduling can beat it.

    .venv/bin/python bench/concurrency.py [--latency 0.2] [--levels 1 4 16 64] [--conditions A B]
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import _common as c
import litellm
from litellm import CustomLLM

import memsql_assets.lib.harness.runner as runner_mod
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.sql.result_cache import RESULTS

PROVIDER = "benchlat"
KEY_ENV = "MEMSQL_BENCH_LATENCY_KEY"
QUESTION_PREFIX = "Question: "


class LatencyLLM(CustomLLM):
    """Sleeps `latency` seconds (asyncio), then answers with the GT SQL of the prompt's question."""

    def __init__(self, latency: float, answers: dict[str, str]):
        super().__init__()
        self.latency = latency
        self.answers = answers
        self.in_flight = 0
        self.max_in_flight = 0

    async def acompletion(self, *args: Any, **kwargs: Any) -> litellm.ModelResponse:  # type: ignore[override]
        messages = kwargs.get("messages") or (args[1] if len(args) > 1 else [])
        text = str(messages[-1]["content"])
        question = text.rsplit(QUESTION_PREFIX, 1)[-1].strip()
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
        finally:
            self.in_flight -= 1
        sql = self.answers.get(question, "SELECT 1")
        return litellm.ModelResponse(
            model=f"{PROVIDER}/sleep",
            choices=[{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": sql}}],
            usage={
                "prompt_tokens": len(text.split()),
                "completion_tokens": len(sql.split()),
                "total_tokens": 0,
            },
        )

    def completion(self, *args: Any, **kwargs: Any) -> litellm.ModelResponse:
        raise RuntimeError("async only")


def registry_yaml(levels: list[int], latency: float) -> str:
    entries = "".join(
        f"""  lat-c{n}:
    description: {latency * 1000:.0f} ms async sleep, concurrency {n} (benchmark registry)
    litellm_model: {PROVIDER}/sleep-{latency * 1000:.0f}ms
    kind: api
    reasoning: {{type: none}}
    api_key_env: {KEY_ENV}
    max_concurrency: {n}
    price_per_mtok: {{input: 0, output: 0}}
    enabled: true
"""
        for n in levels
    )
    return "models:\n" + entries


def ideal_makespan(
    turns: list[dict[str, Any]], rows: list[dict[str, Any]], slots: int, latency: float
) -> float:
    """Sessions in id order on `slots` workers (list scheduling, as the runner's semaphore does)."""
    hit = {(r["session_id"], r["turn_index"]): bool(r["cache_hit"]) for r in rows}
    cost: dict[str, float] = defaultdict(float)
    for t in turns:
        if not hit.get((t["session_id"], t["turn_index"]), False):
            cost[t["session_id"]] += latency
    free = [0.0] * slots
    heapq.heapify(free)
    end = 0.0
    for sid in sorted({t["session_id"] for t in turns}):
        start = heapq.heappop(free)
        finish = start + cost[sid]
        end = max(end, finish)
        heapq.heappush(free, finish)
    return end


def run_level(
    base: Path, work: Path, cond: str, n: int, registry: Any, handler: LatencyLLM
) -> dict[str, Any]:
    home = c.fresh_copy(base, work / f"home-{cond}-{n}")
    turns = read_turns(benchmark_dir(home))
    run_wall: list[float] = []
    run_cpu: list[float] = []
    orig_run = runner_mod.PartitionRunner.run

    async def timed_run(self: Any, ts: Any) -> Any:
        cpu0, t0 = time.process_time(), time.perf_counter()
        try:
            return await orig_run(self, ts)
        finally:
            run_wall.append(time.perf_counter() - t0)
            run_cpu.append(time.process_time() - cpu0)

    runner_mod.PartitionRunner.run = timed_run  # type: ignore[method-assign,assignment]
    handler.max_in_flight = 0
    RESULTS.clear()  # a cold partition: each GT query runs once (`memsql run` shares them across partitions)
    t0 = time.perf_counter()
    try:
        outcome = evaluate_partition(home, f"lat-c{n}", cond, registry=registry)
    finally:
        runner_mod.PartitionRunner.run = orig_run  # type: ignore[method-assign]
    wall = time.perf_counter() - t0
    rows = outcome.rows
    sessions = len({t["session_id"] for t in turns})
    ideal = ideal_makespan(turns, rows, n, handler.latency)
    achieved, cpu = run_wall[0], run_cpu[0]  # the runner's run only: partition setup excluded
    calls = sum(1 for r in rows if not r["cache_hit"])
    naive_tps = min(n, sessions) / handler.latency if handler.latency else float("inf")
    return {
        "condition": cond,
        "concurrency": n,
        "sessions": sessions,
        "turns": len(rows),
        "model_calls": calls,
        "store_hits": len(rows) - calls,
        "max_in_flight": handler.max_in_flight,
        "run_s": round(achieved, 3),
        "partition_wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "cpu_ms_per_turn": round(cpu / max(1, len(rows)) * 1000, 2),
        "cores_busy": round(cpu / achieved, 2) if achieved else None,
        "turns_per_s": round(len(rows) / achieved, 2),
        "ideal_s": round(ideal, 3),
        "ideal_turns_per_s": round(len(rows) / ideal, 2) if ideal else None,
        "efficiency": round(ideal / achieved, 3) if achieved and ideal else None,
        "naive_ideal_turns_per_s": round(naive_tps, 2) if handler.latency else None,
        "naive_efficiency": round(len(rows) / achieved / naive_tps, 3) if handler.latency else None,
        "ex_strict": outcome.summary["ex_strict"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--levels", nargs="+", type=int, default=[1, 4, 16, 64])
    ap.add_argument("--conditions", nargs="+", default=["A", "B"])
    ap.add_argument("--every", type=int, default=3, help="every k-th session of the 300 (3 -> 100 sessions)")
    ap.add_argument(
        "--small-levels",
        type=int,
        default=4,
        help="levels up to this run on about 6·N sessions (at least 12) to keep the serial runs short",
    )
    ap.add_argument(
        "--capacity-level",
        type=int,
        default=16,
        help="also run each condition at this concurrency with 0 ms latency (0: skip): the CPU-bound ceiling",
    )
    ap.add_argument("--profile", action="store_true", help="profile the runs with pyinstrument (main thread)")
    ap.add_argument(
        "--answer",
        choices=("gt", "variant"),
        default="gt",
        help="the model answers with the GT SQL text (scored from the GT's cached rows, as for a correct "
        "answer) or with a variant of it (a trailing comment: same rows, other text, so it is executed)",
    )
    ap.add_argument("--out", default=None, help="results/<out>.json (default: concurrency[_variant])")
    args = ap.parse_args(argv)
    args.out = args.out or ("concurrency" if args.answer == "gt" else "concurrency_variant")

    info = c.machine()
    os.environ.setdefault(KEY_ENV, "bench-dummy-key-not-a-secret")
    full = c.bench_home(every=args.every)
    suffix = "" if args.answer == "gt" else "\n-- variant"
    answers = {t["question"]: t["gt_sql"] + suffix for t in read_turns(benchmark_dir(full))}
    handler = LatencyLLM(args.latency, answers)
    others = [p for p in litellm.custom_provider_map if p.get("provider") != PROVIDER]
    litellm.custom_provider_map = [*others, {"provider": PROVIDER, "custom_handler": handler}]
    results = []
    with tempfile.TemporaryDirectory(prefix="memsql-bench-conc-") as tmp:
        work = Path(tmp)
        reg = work / "models.yaml"
        reg.write_text(registry_yaml(args.levels, args.latency))
        registry = load_registry(reg)
        small = c.bench_home(every=25)
        run_level(small, work, "A", args.levels[0], registry, handler)  # warm-up (discarded)
        capacity: dict[str, float] = {}
        for cond in args.conditions:
            if args.capacity_level:
                # the same partition with a zero-latency model: what the process can do at all
                latency, handler.latency = handler.latency, 0.0
                cap = run_level(full, work, cond, args.capacity_level, registry, handler)
                handler.latency = latency
                capacity[cond] = cap["turns_per_s"]
                print(f"{cond}: capacity {cap['turns_per_s']} turns/s at 0 ms", file=sys.stderr)
            for n in args.levels:
                # small levels: about 6·N sessions spread over the whole benchmark (all tiers)
                base = (
                    c.bench_home(every=max(args.every, 300 // max(12, 6 * n)))
                    if n <= args.small_levels
                    else full
                )
                profiler = None
                if args.profile:
                    from pyinstrument import Profiler

                    profiler = Profiler(interval=0.001, async_mode="disabled")
                    profiler.start()
                r = run_level(base, work, cond, n, registry, handler)
                if profiler is not None:
                    profiler.stop()
                    text = profiler.output_text(unicode=False, color=False, show_all=True)
                    (c.RESULTS_DIR / f"{args.out}_profile_{cond}_{n}.txt").write_text(text)
                if cond in capacity and r["ideal_turns_per_s"]:
                    r["capacity_turns_per_s"] = capacity[cond]
                    r["cpu_bound_ceiling"] = round(min(1.0, capacity[cond] / r["ideal_turns_per_s"]), 3)
                results.append(r)
                print(
                    f"{cond} N={n}: {r['turns']} turns in {r['run_s']:.2f} s, efficiency {r['efficiency']}",
                    file=sys.stderr,
                )

    header = [
        "cond",
        "N",
        "sessions",
        "turns",
        "calls",
        "max in flight",
        "run s",
        "turns/s",
        "ideal turns/s",
        "efficiency",
        "naive eff.",
        "CPU ms/turn",
        "cores busy",
        "CPU-bound ceiling",
    ]
    rows = [
        [
            r["condition"],
            r["concurrency"],
            r["sessions"],
            r["turns"],
            r["model_calls"],
            r["max_in_flight"],
            r["run_s"],
            r["turns_per_s"],
            r["ideal_turns_per_s"],
            f"{100 * r['efficiency']:.1f} %" if r["efficiency"] is not None else "-",
            f"{100 * r['naive_efficiency']:.1f} %" if r["naive_efficiency"] is not None else "-",
            r["cpu_ms_per_turn"],
            r["cores_busy"],
            f"{100 * r['cpu_bound_ceiling']:.0f} %" if "cpu_bound_ceiling" in r else "-",
        ]
        for r in results
    ]
    print(
        f"\nPartition throughput with a {args.latency * 1000:.0f} ms async model (target: efficiency >= 90 % at 16)\n"
    )
    print(c.table(header, rows))
    at16 = [r for r in results if r["concurrency"] == 16]
    info["loadavg_at_end"] = c.load_now()
    path = c.write_json(
        args.out,
        {
            "machine": info,
            "answer": args.answer,
            "settings": {"latency_s": args.latency, "levels": args.levels, "every": args.every},
            "results": results,
            "target": "efficiency >= 0.90 at concurrency 16",
            "target_met": bool(at16) and all((r["efficiency"] or 0) >= 0.9 for r in at16),
        },
    )
    print(f"\nwritten {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
