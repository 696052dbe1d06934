"""`memsql eval`: one model under one condition, a turn_results partition run through Dagster."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from memsql_assets.cli.options import Epochs, cost_options, json_flag, wave_size_option
from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.history import HISTORIES
from memsql_assets.lib.vocabulary import BENCHMARKS, PAPER_BENCHMARK, History

if TYPE_CHECKING:
    from pathlib import Path

    from memsql_assets.lib.harness.plan import RunPlan
    from memsql_assets.orchestration.outcome import EvaluationRun


@click.command("eval", help="evaluate one model under one condition (a turn_results partition)")
@click.option("--model", required=True, help="a partition key of models.yaml")
@click.option("--condition", required=True, help=f"one of {', '.join(CONDITIONS)} (conditions.yaml)")
@click.option(
    "--benchmark",
    type=click.Choice(BENCHMARKS),
    default=PAPER_BENCHMARK,
    help=f"the benchmark to evaluate on (default: {PAPER_BENCHMARK}, the paper's)",
)
@json_flag()
@click.option(
    "--retry-errors",
    is_flag=True,
    help="ask the model again for every turn whose recorded reply is a failure (default: replay "
    "deterministic failures such as 400 from the request store; transient ones are always re-asked)",
)
@click.option(
    "--only-failed",
    is_flag=True,
    help="ask the model again for every turn of the partition whose answer is not strictly correct "
    "(wrong SQL and deterministic failures included); the other turns replay from the request store. "
    "Each row counts its retries (`retries`): the marts and `memsql view` show them",
)
@click.option(
    "--sessions",
    type=int,
    metavar="N",
    help="a sample run: a deterministic sample of N sessions stratified by source x tier, the same for "
    "every model and condition (at least one per stratum); a later full run reuses its answers",
)
@click.option(
    "--epochs",
    type=Epochs(),
    help="independent samples of every turn (default 1): each epoch asks the model again for every "
    "cell; adding epochs to an evaluated partition asks only for the new ones (default: the "
    "partition's epochs; a sample: 1)",
)
@click.option(
    "--history",
    type=click.Choice(HISTORIES),
    help="whose answers to earlier turns the memory stores: model (the model's own, the paper's protocol) "
    "or gold (each turn's ground truth and its result, as SParC and CoSQL evaluate); published beside "
    "the other, never over it (default: the condition's `history`, else model)",
)
@cost_options
@wave_size_option
def command(
    model: str,
    condition: str,
    benchmark: str,
    as_json: bool,
    retry_errors: bool,
    only_failed: bool,
    sessions: int | None,
    epochs: int | None,
    dry_run: bool,
    max_cost: float | None,
    wave_size: int | None,
    history: str | None,
) -> int:
    import dagster as dg

    from memsql_assets.defs.instance import ensure_dagster_home
    from memsql_assets.lib.paths import memsql_home
    from memsql_assets.lib.vocabulary import history as resolve_history
    from memsql_assets.orchestration.budget import is_builtin, plan_for

    problem = (
        condition_problem(condition, benchmark)
        or sample_problem(sessions, benchmark)
        or (only_failed and only_failed_problem(model, condition, sessions, benchmark, history))
    )
    if problem:
        print(f"memsql eval: {problem}", file=sys.stderr)
        return 2
    told = History(history) if history else None
    whose = resolve_history(condition, told)
    if dry_run or max_cost is not None or not is_builtin(model):  # the count reads the request store
        plan = plan_for(
            model, condition, sessions, epochs, retry_errors, only_failed=only_failed, benchmark=benchmark, history=whose
        )
        if dry_run or plan.exceeds(max_cost):
            return print_plans([plan], max_cost, dry_run)
        print(f"memsql eval: {plan.describe()}", file=sys.stderr)
    # The Dagster definitions, whose import warns (to the command's log file, under the data directory).
    from memsql_assets.lib.console import ProgressLine, captured, progress_to
    from memsql_assets.orchestration.partition import evaluate_partition_run

    ensure_dagster_home(memsql_home())
    log = click.get_current_context().obj  # the command's log file (cli/__init__.py): Dagster's lines go there
    with (
        captured("memsql eval", log) as console,
        progress_to(ProgressLine("memsql eval", console.stream)),
        dg.DagsterInstance.get() as instance,
    ):
        out = evaluate_partition_run(
            instance, model, condition, sessions, epochs, only_failed, benchmark, retry_errors, wave_size,
            max_cost, told,
        )  # fmt: skip
    print_outcome(out, as_json, log, whose)
    return 0 if out.success else 1


def print_outcome(out: EvaluationRun, as_json: bool, log: Path, whose: History) -> None:
    """The run's JSON, its one failure line naming the log, or its row, viewer link and cascade."""
    from memsql_assets.cli.render import print_cascade, print_evaluations
    from memsql_assets.lib.viewer.server import partition_url

    if as_json:
        print(json.dumps(out.as_json(), indent=2))
        for warning in out.summary.warnings if out.summary else []:
            print(f"memsql eval: warning: {warning}", file=sys.stderr)
    elif out.error:
        print(f"memsql eval {out.model}/{out.condition}: FAILED: {out.error}  (Dagster's log: {log})", file=sys.stderr)
    else:
        print_evaluations([out])
        print(f"\nthese turns: memsql view  ({partition_url(out.model, out.condition, out.benchmark, whose.value)})")
        print_cascade(out.model, out.condition, out.benchmark)


def condition_problem(condition: str, benchmark: str) -> str | None:
    """A condition scoped to the analyst on a benchmark whose sessions name none: one line, before Dagster."""
    from memsql_assets.lib.memory.plugins import NoAnalystsError, check_benchmark

    if condition not in CONDITIONS:
        return None  # the run names the known ones
    try:
        check_benchmark(CONDITIONS[condition], benchmark)
    except NoAnalystsError as exc:
        return str(exc)
    return None


def sample_problem(n: int | None, benchmark: str) -> str | None:
    """`--sessions N` within what the benchmark allows; else what is wrong, naming the flag and range."""
    from memsql_assets.lib.benchmark.sample import SampleSizeError, check_size
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.paths import benchmark_dir, memsql_home, turns_file

    if n is None:
        return None
    if not turns_file(memsql_home(), benchmark).exists():
        return "--sessions needs the benchmark: run `memsql run --skip-eval` first"
    try:
        check_size(read_turns(benchmark_dir(memsql_home(), benchmark)), n, name="--sessions")
    except SampleSizeError as exc:
        return str(exc)
    return None


def only_failed_problem(
    model: str, condition: str, sessions: int | None, benchmark: str, history: str | None = None
) -> str | None:
    """What `--only-failed` (a retry of a published full evaluation) lacks, if anything."""
    from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir
    from memsql_assets.lib.paths import memsql_home
    from memsql_assets.lib.vocabulary import history as resolve_history

    if sessions is not None:
        return "--only-failed retries a full evaluation; it takes no --sessions"
    told = resolve_history(condition, History(history) if history else None)
    if not (partition_dir(memsql_home(), model, condition, benchmark, told) / RESULT_FILE).exists():
        return (
            f"--only-failed: {model}/{condition} has no evaluation yet; run "
            f"`memsql eval --model {model} --condition {condition}` first"
        )
    return None


def print_plans(plans: Sequence[RunPlan], max_cost: float | None, dry_run: bool) -> int:
    """One line per partition; 0 for a dry run, 1 when a run was stopped by --max-cost."""
    for plan in plans:
        over = f"  (above --max-cost ${max_cost:,.2f}: not run)" if plan.exceeds(max_cost) else ""
        print(plan.describe() + over)
    if dry_run:
        print(f"total: {sum(p.calls for p in plans):,} model calls (dry run: nothing was run)")
        return 0
    return 1
