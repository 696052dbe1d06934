"""The partitions `memsql run` evaluates: why each is out of date, which stay as they are, and the
others as concurrent Dagster runs, one per core, each in a run worker (concurrent_runs)."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Callable

import dagster as dg

from memsql_assets.defs.evaluation.concurrent_runs import in_run_worker, run_concurrently, slots
from memsql_assets.defs.evaluation.partitions import partition_key
from memsql_assets.defs.jobs import TURN_RESULTS
from memsql_assets.defs.planning import stale_status, why_out_of_date
from memsql_assets.defs.without_metrics import defs as evaluation_defs
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.results import full_epochs, partition_dir
from memsql_assets.lib.harness.schedule import history_reach
from memsql_assets.lib.harness.summary import read_summary
from memsql_assets.lib.memory.redis_service import redis_connection
from memsql_assets.lib.paths import benchmark_dir, memsql_home, turns_file
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK, History
from memsql_assets.orchestration.budget import over_budget
from memsql_assets.orchestration.outcome import UP_TO_DATE, EvaluationRun
from memsql_assets.orchestration.partition import evaluate_here, wave_size_now
from memsql_assets.orchestration.selection import Cell

Why = dict[Cell, str | None]  # why each partition must be evaluated (None: Dagster reports it current)
Say = Callable[[str], None]


def to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def partitions_out_of_date(
    instance: dg.DagsterInstance, cells: list[Cell], force: bool, benchmark: str = PAPER_BENCHMARK
) -> Why:
    """Why each (model, condition) partition of `benchmark` must be evaluated."""
    if force:
        return dict.fromkeys(cells, "forced")
    resolver = stale_status(instance, evaluation_defs)  # partitions do not depend on one another: one resolver
    key = dg.AssetKey(TURN_RESULTS[benchmark])
    return {(m, c): why_out_of_date(resolver, key, partition_key(m, c)) for m, c in cells}


def gold_histories_out_of_date(cells: list[Cell], why: Why, force: bool, benchmark: str) -> Why:
    """Why each gold-history partition must be evaluated. It is no materialization of its own (a Dagster
    observation, as a sample): it follows its own-history sibling's `why`, or runs when it has none yet."""
    home = memsql_home()
    out: Why = {}
    for cell in cells:
        if force:
            out[cell] = "forced"
        elif why.get(cell) is not None:
            out[cell] = f"its own-history partition re-runs ({why[cell]})"
        elif read_summary(partition_dir(home, *cell, benchmark, History.GOLD)) is None:
            out[cell] = "it has no gold-history evaluation"
        else:
            out[cell] = None
    return out


def evaluate_in_run_worker(
    model: str,
    condition: str,
    epochs: int | None = None,
    benchmark: str = PAPER_BENCHMARK,
    wave_size: int | None = None,
    max_cost_usd: float | None = None,
    history: History = History.MODEL,
) -> EvaluationRun:
    """One partition in a run worker of its own (concurrent_runs)."""
    return in_run_worker(evaluate_here, model, condition, epochs, benchmark, wave_size, max_cost_usd, history)


def evaluate_out_of_date(
    instance: dg.DagsterInstance | None,
    cells: list[Cell],
    why: Why,
    max_cost: float | None = None,
    benchmark: str = PAPER_BENCHMARK,
    say: Say = to_stderr,
    wave_size: int | None = None,
    run: Callable[..., EvaluationRun] = evaluate_in_run_worker,
    history: History = History.MODEL,
) -> list[EvaluationRun]:
    """Evaluate the partitions Dagster reports out of date (and samples) with `run`, as concurrent
    runs, one per core; the others report their current summary. A partition keeps its epochs: the
    re-run of one evaluated with several asks the model only for what changed. `say`: one progress
    line per stage and condition; `wave_size`: the W of C and D (None: each model's max_concurrency).
    `max_cost`: per partition, as `memsql eval --max-cost`: a partition whose estimate exceeds it is
    left out, and each partition run stops, resumable, once its own recorded spend reaches it. `history`:
    whose answers the memories store (the gold one: `gold_histories_out_of_date`'s `why`)."""
    out, epochs = current_partitions(cells, why, benchmark, wave_size, history)
    # Largest first (the conditions grow in cost), so that no run is left alone at the end.
    conditions = list(dict.fromkeys(c for _, c in cells))
    todo = sorted((c for c in cells if c not in out), key=lambda cell: conditions.index(cell[1]), reverse=True)
    out.update(over_budget(todo, epochs, max_cost, benchmark, say, history))
    todo = [cell for cell in todo if cell not in out]
    threads = slots(len(todo))
    told = "" if history == History.MODEL else f", {history} history"
    say(
        f"evaluations ({benchmark} benchmark{told}): {len(todo)} partitions to run, {threads} at a time, "
        f"{len(out)} up to date or left out"
    )

    def one(model: str, condition: str) -> EvaluationRun:
        e = epochs[(model, condition)]
        return run(
            model, condition, epochs=e, benchmark=benchmark, wave_size=wave_size, max_cost_usd=max_cost, history=history
        )

    def failed(cell: Cell, exc: Exception) -> EvaluationRun:
        return EvaluationRun(model=cell[0], condition=cell[1], benchmark=benchmark, success=False, error=str(exc))

    # One Redis for all the runs: a private server stops when its first user's block ends.
    with redis_connection(memsql_home()) if len(todo) > 1 else contextlib.nullcontext():
        done = run_concurrently(todo, one, threads, failed, on_result=condition_progress(todo, say))
    out.update({cell: result.model_copy(update={"benchmark": benchmark, "why": why[cell]}) for cell, result in done.items()})
    return [out[cell] for cell in cells]


def current_partitions(
    cells: list[Cell],
    why: Why,
    benchmark: str = PAPER_BENCHMARK,
    wave_size: int | None = None,
    history: History = History.MODEL,
) -> tuple[dict[Cell, EvaluationRun], dict[Cell, int | None]]:
    """The partitions that stay as they are, and every partition's epochs. A partition Dagster reports
    current is still re-run when it is a sample, ran in other waves or has no summary (`why` says so)."""
    home = memsql_home()
    reach = history_reach(read_turns(benchmark_dir(home, benchmark))) if turns_file(home, benchmark).exists() else None
    out: dict[Cell, EvaluationRun] = {}
    epochs: dict[Cell, int | None] = {}
    for m, c in cells:
        summary = read_summary(partition_dir(home, m, c, benchmark, history))
        had = full_epochs(home, m, c, benchmark, history)  # a sample's epochs never become the partition's
        epochs[(m, c)] = had if had > 1 else None
        if why[(m, c)] is not None:
            continue
        w_now = wave_size_now(m, wave_size, reach) if summary is not None and summary.wave_size is not None else None
        if summary is None:
            why[(m, c)] = "it has no summary.json"
        elif not summary.complete:  # current, but a sample (`eval --sessions`)
            why[(m, c)] = f"a sample of {summary.sessions} sessions: the full run reuses its answers"
        elif w_now != summary.wave_size:  # rows are a function of W, which is not an input
            why[(m, c)] = f"ran in waves of {summary.wave_size}, now {w_now}"
        else:
            out[(m, c)] = EvaluationRun(
                model=m, condition=c, benchmark=benchmark, success=True, skipped=UP_TO_DATE, summary=summary
            )
    return out, epochs


def ex_or_failure(result: EvaluationRun) -> str:
    """"EX 93.5 %", or why the partition failed, in a few words."""
    if result.success and result.summary is not None and result.summary.ex_strict is not None:
        return f"EX {result.summary.ex_strict:.1f} %"
    return "FAILED: " + (result.error or "see the Dagster run")


def condition_progress(todo: list[Cell], say: Say) -> Callable[[Cell, EvaluationRun], None]:
    """`run_concurrently`'s on_result: one line per condition once all its partitions have ended
    (every model's EX, or why it failed), so the console stays short however many models run."""
    pending = Counter(c for _, c in todo)
    ended: dict[str, list[str]] = defaultdict(list)
    lock = threading.Lock()  # results arrive from the feeder threads too

    def on_result(cell: Cell, result: EvaluationRun) -> None:
        model, condition = cell
        with lock:
            ended[condition].append(f"{model} {ex_or_failure(result)}")
            pending[condition] -= 1
            if pending[condition]:
                return
            done = sum(len(v) for v in ended.values())
            say(f"  {done}/{len(todo)} condition {condition}: " + ", ".join(sorted(ended[condition])))

    return on_result
