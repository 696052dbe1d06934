"""`memsql`: the command line over the Dagster definitions and the plain libraries."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import json
import math
import os
import sys
import threading
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from memsql_assets.lib.agent.conditions import CONDITIONS
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.evaluation.interval import interval_text
from memsql_assets.lib.paths import (
    REPO_ROOT,
    benchmark_dir,
    embeddings_cache_dir,
    memsql_home,
    source_db_path,
)
from memsql_assets.lib.sources.config import load_benchmarks
from memsql_assets.lib.viewer.server import partition_url, viewer_url
from memsql_assets.lib.vocabulary import (
    BENCHMARKS,
    EXTENDED_BENCHMARK,
    FLOOR_CONDITION,
    GUESS_PROBE,
    PAPER_BENCHMARK,
    REFERENCE_AGENT,
    REFERENCE_MODELS,
    REPORT_SOURCES,
)

# After a run that loaded torch, Chroma, dbt and Dagster, the interpreter's final garbage collections
# took seconds in every process (this one and each worker): the heap is about to be freed anyway.
atexit.register(gc.freeze)

# The reference models `memsql run` evaluates on each benchmark, and under which conditions (None: every
# condition of the conditions file marked for the main run and without tools; those marked
# `main_run: false` are left to `memsql eval`). The probes read the prompt, so each condition has its
# own figure. paraphrase and guess-probe answer the same whatever memory holds: A gives their figures
# (the comparator check, the floor), and `memsql eval` runs them anywhere else. On the paper's benchmark
# gold checks the harness under every condition, and the reference agent the conditions with tools (T
# and E: AgentSM's steps saved, model-free) on its registry entry's sample of sessions; on the extended
# one, A checks its ground truths and reader-probe measures the conditions.
AGENT_RUN_CONDITIONS: tuple[str, ...] = tuple(n for n, c in CONDITIONS.items() if c.tools and c.main_run)
RUN_MODELS: dict[str, dict[str, tuple[str, ...] | None]] = {
    PAPER_BENCHMARK: {
        **{m: (FLOOR_CONDITION,) if m in ("paraphrase", GUESS_PROBE) else None for m in REFERENCE_MODELS},
        REFERENCE_AGENT: AGENT_RUN_CONDITIONS,
    },
    EXTENDED_BENCHMARK: {"gold": (FLOOR_CONDITION,), "reader-probe": None},
}


def run_cells(benchmark: str, conditions: Sequence[str]) -> list[tuple[str, str]]:
    """The (model, condition) partitions `memsql run` evaluates on `benchmark`."""
    plain = [c for c in conditions if CONDITIONS[c].main_run and not CONDITIONS[c].tools]
    return [(m, c) for m, only in RUN_MODELS[benchmark].items() for c in conditions if c in (only or plain)]


# The status of a check execution that passed, as the instance records it (the status enum's value).
CHECK_SUCCEEDED = "SUCCEEDED"

# Step-level DEBUG events are for the UI; the terminal gets INFO and above.
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


def _sources_list(args: argparse.Namespace) -> int:
    from memsql_assets.lib.sources.build import describe_source
    from memsql_assets.lib.sources.config import load_sources

    home = memsql_home()
    rows: list[dict[str, Any]] = []
    for name, spec in load_sources().items():
        path = source_db_path(home, name)
        row: dict[str, Any] = {
            "name": name,
            "kind": spec.kind,
            "path": str(path),
            "real_path": str(spec.real_path) if spec.kind == "real" else None,
            "built": path.exists(),
            "row_counts": None,
        }
        if path.exists():
            built = describe_source(name, path)
            row.update(
                built_kind=built.kind,
                synthetic=built.synthetic,
                row_counts=built.row_counts,
                content_hash=built.content_hash,
            )
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        from memsql_assets.lib.console import table

        def state(r: dict[str, Any]) -> str:
            return f"{sum(r['row_counts'].values()):,} rows" if r["row_counts"] else "not built (run `memsql run`)"

        print("\n".join(table([(r["name"], r["kind"], state(r), r["path"]) for r in rows])))
    return 0


def _sources_fetch(args: argparse.Namespace) -> int:
    from memsql_assets.lib.sources.config import env_var_for, use_real_path
    from memsql_assets.lib.sources.fetch import (
        Downloader,
        check_user_agent,
        fetch_source,
        load_fetch_config,
        resolve_names,
        setting_for,
    )

    names = resolve_names(args.names)
    config = load_fetch_config()
    downloader = Downloader(check_user_agent(config, names), lambda line: print(line, file=sys.stderr, flush=True))
    home = memsql_home()
    for name in names:
        print(f"{name}: fetching {len(config.plans[name].files)} files", file=sys.stderr, flush=True)
        got = fetch_source(config.plans[name], home, downloader)
        checked = f", {got.verified} sha256-verified" if got.verified else ""
        print(f"{name}: {got.files} files in {got.folder}{checked}; the {name} adapter accepts them "
              f"({sum(got.row_counts.values()):,} rows)")  # fmt: skip
        if args.use:
            edited = use_real_path(name, got.folder)
            print(f"{name}: now real in {edited} (kind: real, real_path: {got.folder})")
            if os.environ.get(env_var_for(name)):
                print(f"{name}: note: {env_var_for(name)} is set and overrides that file")
        else:
            print(f"  to use it: {setting_for(name, got.folder)}   (or run again with --use)")
    return 0


def _export_benchmark(args: argparse.Namespace) -> int:
    from memsql_assets.lib.benchmark.store import export_jsonl, read_turns

    n = export_jsonl(read_turns(benchmark_dir(memsql_home())), Path(args.path))
    print(f"wrote {n} turns to {args.path}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from dagster import DagsterInstance

    from memsql_assets.defs.evaluation import concurrent_runs
    from memsql_assets.defs.instance import ensure_dagster_home
    from memsql_assets.lib.console import captured
    from memsql_assets.lib.memory.plugins import check_conditions

    home = memsql_home()
    check_conditions()  # every condition's memory imports and takes its params: else one line, nothing run
    benchmarks = load_benchmarks()  # an unknown name: one line naming the choices, before anything is built
    cells = {b: run_cells(b, CONDITIONS) for b in benchmarks}
    max_cost = _max_cost_allowed("run", args.max_cost)
    wave_size = _wave_size_allowed("run", args.wave_size)
    if max_cost is False or wave_size is False:
        return 2
    if args.dry_run:
        answered = _answered()
        plans = [_plan(m, c, answered=answered, benchmark=b) for b, bc in cells.items() for m, c in bc]
        return _print_plans(plans, max_cost, dry_run=True)
    ensure_dagster_home(home)
    log = None if args.verbose else _run_log(home)
    with captured("memsql run", log) as console, DagsterInstance.get() as instance:
        console.stage("observing the source configurations")
        _observe_inputs(instance)
        # A changed input: evaluations follow, whose run processes fork from the server started here.
        on_work = None if args.skip_eval else concurrent_runs.start
        main = _main_job(instance, args.force, on_work=on_work, benchmarks=benchmarks, say=console.stage)
        ok = main["success"] and all(main["checks"].values())
        evaluations = []
        if ok and not args.skip_eval:
            _sync_models(instance)
            for b, bc in cells.items():
                why = _partitions_out_of_date(instance, bc, args.force, b)
                evaluations += _evaluate_out_of_date(
                    instance, bc, why, max_cost, b, say=console.stage, wave_size=wave_size
                )
        if evaluations:
            console.stage("metrics: dbt build and the report, where Dagster reports them out of date")
        report = _metrics_after(evaluations, instance, args.force)
        console.stage("done")
    summary = _summary(home, main["run_id"], main["success"], main["checks"], benchmarks)
    summary["main_job_skipped"] = main["skipped"]
    summary["main_job_why"] = main["why"]
    summary["evaluations"] = evaluations
    summary["report"] = report
    summary["log"] = str(log) if log is not None else None
    ok = ok and all(e["success"] for e in evaluations) and (report is None or report["success"])
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_summary(summary)
    return 0 if ok else 1


def _sensitivity_parser(tsub: Any) -> None:
    from memsql_assets.lib.harness.trajectory_sensitivity import (
        DEFAULT_BUDGETS,
        DEFAULT_SESSIONS,
        DEFAULT_THETAS,
        theta_arg,
    )

    p = tsub.add_parser(
        "sensitivity",
        help="θ × N: build a store per pair and run the reference agent under E (and T) on a sample of sessions",
    )
    p.add_argument("--thetas", nargs="+", type=theta_arg, default=list(DEFAULT_THETAS))
    p.add_argument("--budgets", nargs="+", type=int, default=list(DEFAULT_BUDGETS))
    p.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS, help="the agent's sample of sessions")
    p.add_argument("--max-len", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="also write the figures to this JSON file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_trajectory_sensitivity)


def _run_log(home: Path) -> Path:
    from datetime import UTC, datetime

    from memsql_assets.lib.paths import run_log_path

    return run_log_path(home, "run", datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ"))


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """stdout carries the summary alone (text or --json): dbt's subprocess output goes to stderr meanwhile."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _observe_inputs(instance: Any) -> None:
    """Observe the source configurations and the conditions, so that Dagster sees a changed setting,
    real file or condition."""
    from memsql_assets.defs.evaluation.automation import observe_conditions
    from memsql_assets.defs.jobs import OBSERVE_SOURCES_JOB
    from memsql_assets.defs.without_metrics import defs

    defs.resolve_job_def(OBSERVE_SOURCES_JOB).execute_in_process(instance=instance, run_config=QUIET_RUN_CONFIG)
    observe_conditions(instance)


def _sync_models(instance: Any) -> None:
    """The `model` partitions become the runnable registry models; their configurations are observed."""
    from memsql_assets.defs.evaluation.automation import sync_model_partitions
    from memsql_assets.lib.models.registry import load_registry

    sync_model_partitions(instance, load_registry())
    _observe_models(instance)


def _observe_models(instance: Any) -> None:
    from memsql_assets.defs.jobs import OBSERVE_MODELS_JOB
    from memsql_assets.defs.without_metrics import defs

    defs.resolve_job_def(OBSERVE_MODELS_JOB).execute_in_process(instance=instance, run_config=QUIET_RUN_CONFIG)


def _group_keys(defs: Any, groups: tuple[str, ...]) -> list[Any]:
    graph = defs.resolve_asset_graph()
    return [
        k
        for k in graph.get_all_asset_keys()
        if graph.get(k).group_name in groups and graph.get(k).is_materializable
    ]


def _latest_checks(instance: Any, defs: Any, keys: list[Any]) -> dict[str, bool]:
    """The latest evaluation of every check on `keys`, passed or not (from the instance, run or not now)."""
    graph = defs.resolve_asset_graph()
    check_keys = [c for c in graph.asset_check_keys if c.asset_key in set(keys)]
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(check_keys)
    return {
        c.name: c in latest and latest[c].status.value == CHECK_SUCCEEDED
        for c in check_keys
    }


def _main_job(
    instance: Any,
    force: bool,
    on_work: Any = None,
    benchmarks: tuple[str, ...] = BENCHMARKS,
    say: Any = None,
) -> dict[str, Any]:
    """Materialize the main job's assets that Dagster reports missing or stale (all with --force), run
    after run until none is: a rebuilt asset whose data version changed makes its dependents stale.
    The assets of benchmarks not in `benchmarks` are left alone."""
    from memsql_assets.defs.jobs import MAIN_GROUPS, MAIN_JOB, unchosen_assets
    from memsql_assets.defs.planning import out_of_date
    from memsql_assets.defs.without_metrics import defs

    keys = [k for k in _group_keys(defs, MAIN_GROUPS) if k not in unchosen_assets(benchmarks)]
    job = defs.resolve_job_def(MAIN_JOB)
    run_ids: list[str] = []
    why: dict[str, str] = {}
    success = True
    for _ in range(len(keys)):  # each round rebuilds at least one asset: bounded by the asset count
        todo = dict.fromkeys(keys, "forced") if force and not run_ids else out_of_date(instance, defs, keys)
        if not todo:
            break
        if on_work is not None:
            on_work()
        if say is not None:
            say(f"main job: materializing {_names(todo)}")
        why.update({k.to_user_string(): reason for k, reason in todo.items()})
        result = job.execute_in_process(
            instance=instance, asset_selection=list(todo), raise_on_error=False, run_config=QUIET_RUN_CONFIG
        )
        run_ids.append(result.run_id)
        success = bool(result.success)
        if not success:
            break
    if say is not None and not run_ids:
        say("main job: up to date")
    return {
        "run_id": run_ids[-1] if run_ids else None,
        "success": success,
        "checks": _latest_checks(instance, defs, keys),
        "skipped": not run_ids,
        "why": why,
    }


def _names(keys: Any, shown: int = 4) -> str:
    """"a, b, c and 3 more": one progress line however many assets a round rebuilds."""
    names = sorted(k.to_user_string() for k in keys)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"{len(names)} assets ({', '.join(names[:shown])}{more})"


def _partitions_out_of_date(
    instance: Any, cells: list[tuple[str, str]], force: bool, benchmark: str = PAPER_BENCHMARK
) -> dict[tuple[str, str], str | None]:
    """Why each (model, condition) partition of `benchmark` must be evaluated (None: Dagster reports it current)."""
    import dagster as dg

    from memsql_assets.defs.evaluation.partitions import partition_key
    from memsql_assets.defs.jobs import TURN_RESULTS
    from memsql_assets.defs.planning import stale_status, why_out_of_date
    from memsql_assets.defs.without_metrics import defs

    if force:
        return dict.fromkeys(cells, "forced")
    resolver = stale_status(instance, defs)  # partitions do not depend on one another: one resolver
    key = dg.AssetKey(TURN_RESULTS[benchmark])
    return {(m, c): why_out_of_date(resolver, key, partition_key(m, c)) for m, c in cells}


def _evaluate_out_of_date(
    instance: Any,
    cells: list[tuple[str, str]],
    why: dict[tuple[str, str], str | None],
    max_cost: float | None = None,
    benchmark: str = PAPER_BENCHMARK,
    say: Any = None,
    wave_size: int | None = None,
) -> list[dict[str, Any]]:
    """Evaluate the partitions Dagster reports out of date (and samples), as concurrent Dagster runs,
    one per core (concurrent_runs); the others report their current summary. A partition keeps its
    epochs: the re-run of one evaluated with several asks the model only for what changed. `say`: one
    progress line per stage and partition (default stderr); `wave_size`: the W of C and D (None: each
    model's max_concurrency)."""
    from memsql_assets.defs.evaluation.concurrent_runs import run_cells, slots
    from memsql_assets.lib.memory.redis_service import redis_connection

    say = say or _to_stderr
    out, epochs = _current_partitions(cells, why, benchmark, wave_size)
    # Largest first (the conditions grow in cost), so that no run is left alone at the end.
    conditions = list(dict.fromkeys(c for _, c in cells))
    todo = sorted((c for c in cells if c not in out), key=lambda cell: conditions.index(cell[1]), reverse=True)
    out.update(_over_budget(todo, epochs, max_cost, benchmark, say))
    todo = [cell for cell in todo if cell not in out]
    threads = slots(len(todo))
    say(
        f"evaluations ({benchmark} benchmark): {len(todo)} partitions to run, {threads} at a time, "
        f"{len(out)} up to date or left out"
    )
    progress = _condition_progress(todo, say)

    def run(model: str, condition: str) -> dict[str, Any]:
        return _evaluate_in_run_worker(
            model, condition, epochs=epochs[(model, condition)], benchmark=benchmark, wave_size=wave_size
        )

    # One Redis for all the runs: a private server stops when its first user's block ends.
    with redis_connection(memsql_home()) if len(todo) > 1 else contextlib.nullcontext():
        done = run_cells(todo, run, threads, on_result=progress)
    out.update({cell: {**result, "benchmark": benchmark, "why": why[cell]} for cell, result in done.items()})
    return [out[cell] for cell in cells]


def _current_partitions(
    cells: list[tuple[str, str]],
    why: dict[tuple[str, str], str | None],
    benchmark: str = PAPER_BENCHMARK,
    wave_size: int | None = None,
) -> tuple[dict[tuple[str, str], dict[str, Any]], dict[tuple[str, str], int | None]]:
    """The summaries of the partitions that stay as they are, and every partition's epochs. A
    partition Dagster reports current is still re-run when it is a sample or ran in other waves
    (`why` gets the reason)."""
    from memsql_assets.lib.harness.results import SUMMARY_FILE, full_epochs, partition_dir

    out: dict[tuple[str, str], dict[str, Any]] = {}
    epochs: dict[tuple[str, str], int | None] = {}
    for m, c in cells:
        path = partition_dir(memsql_home(), m, c, benchmark) / SUMMARY_FILE
        summary = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        had = full_epochs(memsql_home(), m, c, benchmark)  # a sample's epochs never become the partition's
        epochs[(m, c)] = had if had > 1 else None
        if why[(m, c)] is None:
            w_now = _wave_size_now(m, wave_size) if summary.get("wave_size") is not None else None
            if summary.get("complete") is False:  # current, but a sample (`eval --sessions`)
                why[(m, c)] = (
                    f"a sample of {summary.get('sessions')} sessions: the full run reuses its answers"
                )
            elif w_now != summary.get("wave_size"):  # rows are a function of W, which is not an input
                why[(m, c)] = f"ran in waves of {summary['wave_size']}, now {w_now}"
            else:
                out[(m, c)] = {
                    "model": m,
                    "condition": c,
                    **summary,
                    "benchmark": benchmark,
                    "skipped": "up to date",
                    "success": True,
                }
    return out, epochs


def _condition_progress(todo: list[tuple[str, str]], say: Any) -> Any:
    """`run_cells`' on_result: one line per condition once all its partitions have ended (every
    model's EX, or why it failed), so the console stays short however many models run."""
    pending = Counter(c for _, c in todo)
    ended: dict[str, list[str]] = defaultdict(list)
    lock = threading.Lock()  # results arrive from the feeder threads too

    def on_result(cell: tuple[str, str], result: dict[str, Any]) -> None:
        model, condition = cell
        with lock:
            ended[condition].append(f"{model} {_outcome(result)}")
            pending[condition] -= 1
            if pending[condition]:
                return
            done = sum(len(v) for v in ended.values())
            say(f"  {done}/{len(todo)} condition {condition}: " + ", ".join(sorted(ended[condition])))

    return on_result


def _outcome(result: dict[str, Any]) -> str:
    if "ex_strict" in result and result.get("success"):
        return f"EX {result['ex_strict']:.1f} %"
    return "FAILED: " + str(result.get("error", "see the Dagster run"))


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _wave_size_now(model: str, requested: int | None) -> int:
    """The W a C/D partition of `model` would run with now (`requested`, else its concurrency)."""
    from memsql_assets.lib.harness.settings import resolve_wave_size
    from memsql_assets.lib.models.registry import load_registry

    return resolve_wave_size(requested, load_registry().get(model).max_concurrency)


def _evaluate_in_run_worker(
    model: str, condition: str, epochs: int | None = None, benchmark: str = PAPER_BENCHMARK, wave_size: int | None = None
) -> dict[str, Any]:
    """`_evaluate` of one partition in a run worker of its own (concurrent_runs)."""
    from memsql_assets.defs.evaluation.concurrent_runs import in_run_worker

    return in_run_worker(_evaluate_here, model, condition, epochs, benchmark, wave_size)


def _evaluate_here(
    model: str, condition: str, epochs: int | None, benchmark: str, wave_size: int | None
) -> dict[str, Any]:
    """One partition in a run worker of `memsql run` (its environment names the same instance)."""
    from dagster import DagsterInstance

    with DagsterInstance.get() as instance:
        return _evaluate(instance, model, condition, epochs=epochs, benchmark=benchmark, wave_size=wave_size)


def _evaluate(
    instance: Any,
    model: str,
    condition: str,
    sessions: int | None = None,
    epochs: int | None = None,
    only_failed: bool = False,
    benchmark: str = PAPER_BENCHMARK,
    retry_errors: bool = False,
    wave_size: int | None = None,
) -> dict[str, Any]:
    """One turn_results partition through Dagster (recorded in the instance); returns its summary.
    `sessions`, `epochs`, `only_failed`, `retry_errors`, `wave_size`: the evaluation resource's fields
    of that name, passed as the run's config (validated by the caller; None: the resource's default).
    The job comes from the definitions without the dbt metrics: no evaluation process pays for
    importing those."""
    from memsql_assets.defs.evaluation.partitions import model_partitions, partition_key
    from memsql_assets.defs.evaluation.resources import SAMPLE_TAG, evaluation_run_config
    from memsql_assets.defs.jobs import EVALUATE_JOBS
    from memsql_assets.defs.without_metrics import defs
    from memsql_assets.lib.agent.conditions import get_condition
    from memsql_assets.lib.harness.results import SUMMARY_FILE, output_dir
    from memsql_assets.lib.memory.plugins import check_conditions
    from memsql_assets.lib.models.registry import load_registry
    from memsql_assets.lib.scale_out import scale_out_enabled

    get_condition(condition)  # unknown condition: a clear error before anything runs
    check_conditions([condition])  # its memory imports and takes its params: else one line
    load_registry().get(model)  # unknown model: names the registry file
    if not instance.has_dynamic_partition(model_partitions.name, model):
        instance.add_dynamic_partitions(model_partitions.name, [model])
        _observe_models(instance)
    resources = evaluation_run_config(
        sessions=sessions,
        epochs=epochs,
        only_failed=only_failed or None,
        retry_errors=retry_errors or None,
        wave_size=wave_size,
    )
    run_config = {**QUIET_RUN_CONFIG, "resources": resources} if resources else QUIET_RUN_CONFIG
    if scale_out_enabled():  # MEMSQL_PROFILE=scale-out: queued on the shared instance, run by Celery workers
        from memsql_assets.defs.scale_out import submit_evaluation

        with _stdout_to_stderr():  # the code server it starts logs to stdout, which carries the summary
            return submit_evaluation(instance, model, condition, run_config)
    key = partition_key(model, condition)
    result = defs.resolve_job_def(EVALUATE_JOBS[benchmark]).execute_in_process(
        instance=instance,
        partition_key=key,
        raise_on_error=False,
        run_config=run_config,
        tags={SAMPLE_TAG: str(sessions)} if sessions is not None else None,
    )
    summary_path = output_dir(memsql_home(), model, condition, sessions, benchmark) / SUMMARY_FILE
    return _run_outcome(result, {"model": model, "condition": condition, "benchmark": benchmark}, summary_path)


def _run_outcome(result: Any, cell: dict[str, Any], summary_path: Path) -> dict[str, Any]:
    """The partition run's summary (from its file), or its failure's last line, with its checks."""
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    out: dict[str, Any] = {**cell, "run_id": result.run_id}
    if result.success and summary_path.exists():
        out.update(json.loads(summary_path.read_text(encoding="utf-8")))
    else:
        failure = next((e for e in result.all_events if e.event_type_value == "STEP_FAILURE"), None)
        if failure is not None:
            error = failure.event_specific_data.error
            cause = error.cause or error
            out["error"] = cause.message.strip().splitlines()[-1]
    out["checks"] = checks
    out["success"] = bool(result.success and all(checks.values()))
    return out


def _metrics_after(evaluations: list[dict[str, Any]], instance: Any, force: bool) -> dict[str, Any] | None:
    """The metrics after the evaluations: in a run worker when any partition ran (the fork server
    is up and has dagster-dbt imported), else here (nothing new: usually only the check)."""
    from memsql_assets.defs.evaluation import concurrent_runs

    if not evaluations:
        return None
    if any(not e.get("skipped") for e in evaluations):
        return concurrent_runs.in_run_worker(_metrics_here, force)
    return _metrics(instance, force)


def _metrics_here(force: bool) -> dict[str, Any]:
    """`_metrics` in a run worker of `memsql run`, which imported dagster-dbt before it was needed."""
    from dagster import DagsterInstance

    with DagsterInstance.get() as instance:
        return _metrics(instance, force)


def _metrics(instance: Any, force: bool = False) -> dict[str, Any]:
    """dbt build + the report through Dagster, when Dagster reports any of them missing or stale (a
    turn_results partition with a new data version, a changed dbt model or report code)."""
    from memsql_assets.definitions import defs
    from memsql_assets.defs.jobs import METRICS_JOB
    from memsql_assets.defs.planning import out_of_date

    home = memsql_home()
    report_dir = home / "report"
    summary_file = report_dir / "summary.txt"
    keys = _group_keys(defs, ("metrics",))
    todo = keys if force else list(out_of_date(instance, defs, keys))
    run_id, success = None, True
    if todo:
        result = defs.resolve_job_def(METRICS_JOB).execute_in_process(
            instance=instance, raise_on_error=False, run_config=QUIET_RUN_CONFIG
        )
        run_id, success = result.run_id, bool(result.success)
    checks = _latest_checks(instance, defs, keys)
    return {
        "success": success,
        "skipped": not todo,
        "run_id": run_id,
        "failed_dbt_tests": sorted(name for name, passed in checks.items() if not passed),
        "html": str(report_dir / "report.html"),
        "summary_text": summary_file.read_text(encoding="utf-8") if summary_file.exists() else "",
    }


def _port_taken(command: str, host: str, port: int) -> bool:
    """Say in one line that host:port is taken (before anything starts), and whether it is."""
    from memsql_assets.lib.process_group import port_in_use

    if not port_in_use(host, port):
        return False
    print(
        f"memsql {command}: {host}:{port} is already in use (another `memsql {command}`?); "
        "stop it or pass --port",
        file=sys.stderr,
    )
    return True


def _docs(args: argparse.Namespace) -> int:
    from memsql_assets.lib.process_group import serve
    from memsql_assets.lib.report.dbt_cli import DBT_DIR, dbt_env, dbt_executable, run_dbt

    if _port_taken("docs", args.host, args.port):
        return 1
    home = memsql_home()
    run_dbt(home, "docs", "generate")
    print(f"dbt docs on http://{args.host}:{args.port} (Ctrl-C to stop)")
    cmd = [
        dbt_executable(),
        "docs",
        "serve",
        "--host",
        args.host,
        "--port",
        str(args.port),
        "--no-browser",
        "--project-dir",
        str(DBT_DIR),
        "--profiles-dir",
        str(DBT_DIR),
    ]
    return serve(cmd, cwd=DBT_DIR, env=dbt_env(home))


def _eval(args: argparse.Namespace) -> int:
    from dagster import DagsterInstance

    from memsql_assets.defs.instance import ensure_dagster_home

    if args.epochs is not None and not _epochs_allowed(args.epochs):
        return 2
    if args.sessions is not None and not _sessions_allowed(args.sessions, args.benchmark):
        return 2
    if args.only_failed and not _only_failed_allowed(args.model, args.condition, args.sessions, args.benchmark):
        return 2
    max_cost = _max_cost_allowed("eval", args.max_cost)
    wave_size = _wave_size_allowed("eval", args.wave_size)
    if max_cost is False or wave_size is False:
        return 2
    if args.dry_run or max_cost is not None or not _builtin(args.model):  # the count reads the request store
        plan = _plan(
            args.model,
            args.condition,
            args.sessions,
            args.epochs,
            args.retry_errors,
            only_failed=args.only_failed,
            benchmark=args.benchmark,
        )
        if args.dry_run or plan.exceeds(max_cost):
            return _print_plans([plan], max_cost, args.dry_run)
        print(f"memsql eval: {plan.describe()}", file=sys.stderr)
    ensure_dagster_home(memsql_home())
    with DagsterInstance.get() as instance, _console_without_failures():
        out = _evaluate(
            instance,
            args.model,
            args.condition,
            args.sessions,
            args.epochs,
            args.only_failed,
            retry_errors=args.retry_errors,
            wave_size=wave_size,
            benchmark=args.benchmark,
        )
    if args.json:
        print(json.dumps(out, indent=2))
        for warning in out.get("warnings", []):
            print(f"memsql eval: warning: {warning}", file=sys.stderr)
    elif "error" in out:
        print(f"memsql eval {args.model}/{args.condition}: FAILED: {out['error']}", file=sys.stderr)
    else:
        _print_evaluations([out])
        print(f"\nthese turns: memsql view  ({partition_url(args.model, args.condition, args.benchmark)})")
    return 0 if out["success"] else 1


def _only_failed_allowed(model: str, condition: str, sessions: int | None, benchmark: str = PAPER_BENCHMARK) -> bool:
    """`--only-failed` retries a published full evaluation; else one line saying what it needs."""
    from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir

    if sessions is not None:
        print("memsql eval: --only-failed retries a full evaluation; it takes no --sessions", file=sys.stderr)
        return False
    if not (partition_dir(memsql_home(), model, condition, benchmark) / RESULT_FILE).exists():
        print(
            f"memsql eval: --only-failed: {model}/{condition} has no evaluation yet; run "
            f"`memsql eval --model {model} --condition {condition}` first",
            file=sys.stderr,
        )
        return False
    return True


def _sessions_allowed(n: int, benchmark: str = PAPER_BENCHMARK) -> bool:
    """`--sessions N` within what the benchmark allows; else one line naming the flag and the range."""
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.harness.sample import SampleSizeError, check_size

    bench = benchmark_dir(memsql_home(), benchmark)
    if not (bench / "turns.jsonl").exists():
        print("memsql eval: --sessions needs the benchmark: run `memsql run --skip-eval` first", file=sys.stderr)
        return False
    try:
        check_size(read_turns(bench), n, name="--sessions")
    except SampleSizeError as exc:
        print(f"memsql eval: {exc}", file=sys.stderr)
        return False
    return True


def _epochs_allowed(n: int) -> bool:
    """`--epochs N` of at least 1; else one line naming the flag and the range."""
    from memsql_assets.lib.harness.settings import EpochsError, check_epochs

    try:
        check_epochs(n, name="--epochs")
    except EpochsError as exc:
        print(f"memsql eval: {exc}", file=sys.stderr)
        return False
    return True


@contextlib.contextmanager
def _console_without_failures() -> Iterator[None]:
    """Dagster's console logger, created during the run, leaves out records at ERROR and above (a
    failure's stack trace): `memsql eval` prints the cause in one line, and the UI keeps the rest."""
    import logging

    base = logging.getLoggerClass()

    class Console(base):  # type: ignore[misc, valid-type]
        def __init__(self, name: str, level: int | str = logging.NOTSET) -> None:
            super().__init__(name, level)
            if name == "dagster":  # the console logger's name; other loggers are left alone
                self.addFilter(lambda record: record.levelno < logging.ERROR)

    logging.setLoggerClass(Console)
    try:
        yield
    finally:
        logging.setLoggerClass(base)


def guess_floor(rows: list[dict[str, Any]]) -> float | None:
    """guess-probe's memory-critical EX under A among `rows`: the floor each model's A is read against."""
    return next(
        (
            e.get("ex_memory_critical")
            for e in rows
            if e["model"] == GUESS_PROBE and e["condition"] == FLOOR_CONDITION and "ex_strict" in e
        ),
        None,
    )


def _print_evaluations(rows: list[dict[str, Any]]) -> None:
    floor = guess_floor(rows)
    w = max([len("model"), *(len(e["model"]) for e in rows)])  # the model column fits its longest key
    print(
        f"  {'model':<{w}} {'cond':<6} {'EX %':>6} {'95% CI':>13} {'EX crit %':>9} {'floor %':>7} {'calls':>6} {'cache':>6}  classes"
    )
    for e in rows:
        if "ex_strict" not in e:
            print(f"  {e['model']:<{w}} {e['condition']:<6} FAILED: {e.get('error', 'see the Dagster run')}")
            continue
        classes = ", ".join(f"{k} {v}" for k, v in e["error_classes"].items() if v)
        floor_text = "-" if floor is None else f"{floor:.1f}"
        ci_text = interval_text(*e["ex_strict_ci95"]) if e.get("ex_strict_ci95") else "-"
        sample = "" if e.get("complete", True) else f"  (sample of {e['sessions']} sessions)"
        if e.get("partition_sample"):  # the model's registry entry fixes its partitions' sessions
            sample += f"  (its fixed sample of {e['partition_sample']} sessions)"
        if e.get("epochs", 1) > 1:
            sample += f"  ({e['epochs']} epochs, {e['n_turns']} rows)"
        if e.get("retried_turns"):
            sample += f"  ({e['retried_turns']} turns retried)"
        print(
            f"  {e['model']:<{w}} {e['condition']:<6} {e['ex_strict']:>6.1f} {ci_text:>13} {'-' if e['ex_memory_critical'] is None else format(e['ex_memory_critical'], '.1f'):>9} "
            f"{floor_text if e['condition'] == FLOOR_CONDITION else '':>7} {e['calls']:>6} {e['cache_hits']:>6}  {classes}"
            + sample
            + (
                f"  stale {e['stale_state']}/{e['stale_turns']}, contaminated {e['contaminated']}"
                if e.get("stale_turns")
                else ""
            )
            + ("  (up to date)" if e.get("skipped") else "")
        )
        for warning in e.get("warnings", []):
            print(f"  warning: {warning}")


def _extended_summary(home: Path) -> dict[str, Any] | None:
    """The extended benchmark's composition: sessions, turns and memory-critical turns, turns by tag."""
    from memsql_assets.lib.benchmark.store import read_turns

    bench = benchmark_dir(home, EXTENDED_BENCHMARK)
    if not (bench / "turns.jsonl").exists():
        return None
    turns = read_turns(bench)
    critical = [t for t in turns if t["memory_critical"]]
    return {
        "sessions": len({t["session_id"] for t in turns}),
        "turns": len(turns),
        "memory_critical": len(critical),
        "beyond_five_turns": sum(t["recall_distance"] > 5 for t in critical),
        "sessions_by_source": dict(
            sorted(Counter(t["source"] for t in turns if t["turn_index"] == 1).items())
        ),
        "turns_by_tag": dict(sorted(Counter(t["tag"] for t in turns).items())),
    }


def _summary(
    home: Path, run_id: str, success: bool, checks: dict[str, bool], benchmarks: tuple[str, ...] = BENCHMARKS
) -> dict[str, Any]:
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.sources.build import describe_source
    from memsql_assets.lib.sources.config import SOURCE_NAMES

    summary: dict[str, Any] = {"run_id": run_id, "success": success, "home": str(home), "checks": checks}
    sources = {}
    for name in SOURCE_NAMES:
        path = source_db_path(home, name)
        if path.exists():
            b = describe_source(name, path)
            sources[name] = {
                "kind": b.kind,
                "rows": sum(b.row_counts.values()),
                "sha256": b.content_hash[:12],
            }
    summary["sources"] = sources
    summary["benchmarks"] = list(benchmarks)
    if EXTENDED_BENCHMARK in benchmarks:
        summary["extended_benchmark"] = _extended_summary(home)
    bench = benchmark_dir(home)
    if (bench / "turns.jsonl").exists():
        turns = read_turns(bench)
        sessions = {(t["session_id"], t["source"], t["tier"]) for t in turns}
        summary["benchmark"] = {
            "sessions": len(sessions),
            "turns": len(turns),
            "memory_critical": sum(t["memory_critical"] for t in turns),
            "sessions_by_source_tier": {
                f"{s}-T{t}": n for (s, t), n in sorted(Counter((s, t) for _, s, t in sessions).items())
            },
            "turns_by_source_tier": {
                f"{s}-T{t}": n
                for (s, t), n in sorted(Counter((x["source"], x["tier"]) for x in turns).items())
            },
        }
    return summary


def _modes(evaluations: list[dict[str, Any]]) -> str:
    """", observed context mode": the context modes the evaluations ran in (issue 46)."""
    modes = "/".join(sorted({str(e["context_mode"]) for e in evaluations if e.get("context_mode")}))
    return f", {modes} context mode" if modes else ""


def _print_summary(s: dict[str, Any]) -> None:
    from memsql_assets.defs.jobs import TURN_RESULTS
    from memsql_assets.lib.console import table

    state = "SUCCESS" if s["success"] else "FAILED"
    if s.get("main_job_skipped"):
        state = "up to date, not re-run"
    elif set(s.get("main_job_why", {}).values()) == {"forced"}:
        state += "  (forced)"
    elif s.get("main_job_why"):
        state += "  (" + ", ".join(f"{k}: {v}" for k, v in sorted(s["main_job_why"].items())[:4]) + ")"
    print(f"\nmemsql main job: {state}  (run {s['run_id']}, data in {s['home']})")
    print("\nsources:")
    for line in table(
        [(name, i["kind"], f"{i['rows']:,} rows", f"sha256 {i['sha256']}") for name, i in s["sources"].items()],
        right=(2,),
    ):
        print("  " + line)
    if "benchmark" in s:
        b = s["benchmark"]
        print(
            f"\nbenchmark: {b['sessions']} sessions, {b['turns']} turns, {b['memory_critical']} memory-critical"
        )
        print(f"  {'source':<6} {'T1':>4} {'T2':>4} {'T3':>4}   turns")
        for src in REPORT_SOURCES:
            cells = [b["sessions_by_source_tier"].get(f"{src}-T{t}", 0) for t in (1, 2, 3)]
            turns = sum(b["turns_by_source_tier"].get(f"{src}-T{t}", 0) for t in (1, 2, 3))
            print(f"  {src:<6} {cells[0]:>4} {cells[1]:>4} {cells[2]:>4}   {turns:>5}")
    x = s.get("extended_benchmark")
    if x:
        print(
            f"\nextended benchmark: {x['sessions']} sessions, {x['turns']} turns, {x['memory_critical']} "
            f"memory-critical ({x['beyond_five_turns']} need a value from beyond five turns)"
        )
        print("  sessions: " + ", ".join(f"{k} {v}" for k, v in x["sessions_by_source"].items()))
        print("  turns by tag: " + ", ".join(f"{k} {v}" for k, v in x["turns_by_tag"].items()))
    print("\nchecks:")
    for name, passed in sorted(s["checks"].items()):
        print(f"  {'PASS' if passed else 'FAIL'}  {name}")
    if s.get("evaluations"):
        print("\nreference evaluations (`memsql run --force` recomputes all):")
        for benchmark in BENCHMARKS:
            rows = [e for e in s["evaluations"] if e.get("benchmark", PAPER_BENCHMARK) == benchmark]
            if rows:
                print(f"  {benchmark} benchmark ({TURN_RESULTS[benchmark]} partitions{_modes(rows)}):")
                _print_evaluations(rows)
    report = s.get("report")
    if report:
        state = "  FAILED: see the Dagster run" if not report["success"] else ""
        if report.get("skipped"):
            state = "  up to date, not rebuilt"
        print("\nmetrics (dbt marts):" + state)
        if report["summary_text"]:
            print(report["summary_text"].rstrip())
        print(f"\nreport: {report['html']}")
        print("dbt docs: memsql docs  (http://127.0.0.1:8080)")
    print("\nBrowse the run: memsql ui  (Dagster on http://127.0.0.1:3333)")
    print(f"Every turn: memsql view  ({viewer_url()})")
    if s.get("log"):
        print(f"Dagster and dbt logs: {s['log']}  (`memsql run --verbose` prints them)")


def _models_list(args: argparse.Namespace) -> int:
    from memsql_assets.lib.models.registry import load_registry

    registry = load_registry()
    rows = []
    for key in registry.keys():  # noqa: SIM118 (Registry is not a dict)
        entry = registry.get(key)
        available, reason = registry.available(key, os.environ)
        rows.append(
            {
                "key": key,
                "litellm_model": entry.litellm_model,
                "kind": entry.kind,
                "enabled": entry.enabled,
                "available": available,
                "reason": reason,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        from memsql_assets.lib.console import table

        lines = table(
            [
                (r["key"], r["kind"], "on" if r["enabled"] else "off",
                 "ready" if r["available"] else f"unavailable: {r['reason']}")  # fmt: skip
                for r in rows
            ]
        )
        print("\n".join(lines))
    return 0


def _models_fetch(args: argparse.Namespace) -> int:
    from memsql_assets.lib.models.builtins import fetch_smollm2

    path = fetch_smollm2(memsql_home())
    print(f"smollm2 weights at {path}")
    return 0


def _trajectory_search(args: argparse.Namespace) -> int:
    from memsql_assets.lib.memory.chroma import chroma_client
    from memsql_assets.lib.trajectories.store import retrieve, search

    client = chroma_client(memsql_home())
    hits = search(client, args.db, args.question, k=args.k)
    if not hits:
        print(f"no trajectories for {args.db}: materialize trajectory_store (memsql run)")
        return 1
    for hit in hits:
        print(f"{hit.similarity:.3f}  {hit.question_id}  {hit.question}  ({hit.step_count} steps)")
    best = retrieve(client, args.db, args.question, phase=args.phase)
    if best is not None:
        print(f"\n--- trajectory of {best.question_id}{f' ({args.phase})' if args.phase else ''} ---\n")
        print(best.markdown)
    return 0


def _trajectory_sensitivity(args: argparse.Namespace) -> int:
    import tempfile

    from memsql_assets.lib.harness.trajectory_sensitivity import Sweep, sweep, table_lines

    home = memsql_home()
    if not benchmark_dir(home).exists():
        print(f"memsql trajectory sensitivity: no benchmark in {home}: run `memsql run` first", file=sys.stderr)
        return 2
    spec = Sweep(tuple(args.thetas), tuple(args.budgets), args.sessions, args.max_len, args.seed)
    from memsql_assets.lib.atomic import write_text_atomic

    with tempfile.TemporaryDirectory(prefix="memsql-sensitivity-") as tmp:
        result = sweep(home, Path(tmp), spec, say=lambda line: print(line, file=sys.stderr, flush=True))
    if args.out:
        write_text_atomic(Path(args.out), json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2) if args.json else "\n".join(table_lines(result)))
    return 0


def _trajectory_coverage(args: argparse.Namespace) -> int:
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.memory.chroma import chroma_client
    from memsql_assets.lib.trajectories.store import store_coverage

    home = memsql_home()
    turns = read_turns(benchmark_dir(home))
    report = store_coverage(chroma_client(home), turns, embeddings_store=embeddings_cache_dir(home))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"coverage {report['coverage']:.1%} of {report['questions']} distinct benchmark questions")
        for db, share in report["by_source"].items():
            print(
                f"  {db:<15} {share:.1%}  mean Jaccard {report['mean_jaccard'][db]:.3f}  "
                f"mean similarity {report['mean_similarity'][db]:.3f}"
            )
    return 0 if report["meets_target"] else 1


def _ui(args: argparse.Namespace) -> int:
    from memsql_assets.defs.instance import ensure_dagster_home
    from memsql_assets.lib.process_group import serve

    if _port_taken("ui", args.host, args.port):
        return 1
    ensure_dagster_home(memsql_home())
    cmd = [
        sys.executable,
        "-m",
        "dagster",
        "dev",
        "-w",
        str(REPO_ROOT / "workspace.yaml"),
        "-h",
        args.host,
        "-p",
        str(args.port),
    ]
    return serve(cmd, cwd=REPO_ROOT, env=os.environ)


def _wave_size_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--wave-size",
        metavar="W",
        help="conditions C and D run sessions in waves of W, a session never seeing one of its own wave "
        "(an integer >= 1; 1: the paper's strictly sequential order; default: the model's max_concurrency)",
    )


def _wave_size_allowed(command: str, text: str | None) -> int | None | bool:
    """`--wave-size` as an integer >= 1 (None: not given); False after one line saying what was expected."""
    from memsql_assets.lib.errors import MemsqlError
    from memsql_assets.lib.harness.settings import resolve_wave_size

    if text is None:
        return None
    try:
        value: object = int(text)
    except ValueError:
        value = text
    try:
        return resolve_wave_size(value, 1)  # type: ignore[arg-type]
    except MemsqlError as exc:
        print(f"memsql {command}: --wave-size: {exc}", file=sys.stderr)
        return False


def _cost_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print, per partition, the model calls the run would make (answers not in the request store) "
        "and an upper bound of their cost; change nothing",
    )
    p.add_argument(
        "--max-cost",
        metavar="USD",
        help="stop before a partition run whose cost bound exceeds USD (a number >= 0)",
    )


def _max_cost_allowed(command: str, text: str | None) -> float | None | bool:
    """`--max-cost` as a number >= 0 (None: not given); False after one line saying what was expected."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0 or math.isinf(value):
        print(f"memsql {command}: --max-cost {text}: expected a number of USD >= 0", file=sys.stderr)
        return False
    return value


def _plan(
    model: str,
    condition: str,
    sessions: int | None = None,
    epochs: int | None = None,
    retry_errors: bool = False,
    answered: Any = None,
    only_failed: bool = False,
    benchmark: str = PAPER_BENCHMARK,
) -> Any:
    """What evaluating `model` under `condition` would ask of the model now (harness/plan.py)."""
    from memsql_assets.lib.agent.conditions import get_condition
    from memsql_assets.lib.harness.plan import plan_partition
    from memsql_assets.lib.models.registry import load_registry

    get_condition(condition)  # unknown condition: a clear error
    entry = load_registry().get(model)
    return plan_partition(
        memsql_home(), entry, condition, sessions, epochs, retry_errors, answered, only_failed, benchmark
    )


def _answered() -> Any:
    """The request store's answered cells by model configuration, read once for a run's plans."""
    from memsql_assets.lib.harness.plan import answered_by_config
    from memsql_assets.lib.models.request_store import requests_dir

    return answered_by_config(requests_dir(memsql_home()))


def _builtin(model: str) -> bool:
    from memsql_assets.lib.models.registry import load_registry

    return load_registry().get(model).kind == "builtin"


def _print_plans(plans: list[Any], max_cost: float | None, dry_run: bool) -> int:
    """One line per partition; 0 for a dry run, 1 when a run was stopped by --max-cost."""
    for plan in plans:
        over = f"  (above --max-cost ${max_cost:,.2f}: not run)" if plan.exceeds(max_cost) else ""
        print(plan.describe() + over)
    if dry_run:
        print(f"total: {sum(p.calls for p in plans):,} model calls (dry run: nothing was run)")
        return 0
    return 1


def _over_budget(
    todo: list[tuple[str, str]],
    epochs: dict[tuple[str, str], int | None],
    max_cost: float | None,
    benchmark: str = PAPER_BENCHMARK,
    say: Any = _to_stderr,
) -> dict[tuple[str, str], dict[str, Any]]:
    """The partitions `memsql run` leaves out because their bound exceeds --max-cost; each plan is
    said (a progress line) before an API or local model is asked."""

    skipped: dict[tuple[str, str], dict[str, Any]] = {}
    answered = None
    for m, c in todo:
        if max_cost is None and _builtin(m):
            continue
        answered = _answered() if answered is None else answered
        plan = _plan(m, c, epochs=epochs.get((m, c)), answered=answered, benchmark=benchmark)
        say(f"plan: {plan.describe()}")
        if plan.exceeds(max_cost):
            error = f"not run: its cost bound exceeds --max-cost ${max_cost:,.2f}"
            skipped[(m, c)] = {"model": m, "condition": c, "success": False, "error": error}
    return skipped


def _view(args: argparse.Namespace) -> int:
    from memsql_assets.lib.viewer.data import NoResultsError, TurnIndex
    from memsql_assets.lib.viewer.server import serve

    if _port_taken("view", args.host, args.port):
        return 1
    home = memsql_home()
    try:
        TurnIndex(home).connection()
    except NoResultsError as exc:
        print(f"memsql view: {exc}", file=sys.stderr)
        return 1
    print(f"memsql view: turns of {home} on {viewer_url(args.host, args.port)} (Ctrl-C to stop)", flush=True)
    serve(home, args.host, args.port)
    return 0


# long: one declarative list of every subcommand and its flags, read top to bottom like `--help`.
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memsql", description="Multi-turn text-to-SQL memory benchmark platform."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="the main job, then the reference models under every condition")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--skip-eval", action="store_true", help="only the unpartitioned assets")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="print Dagster's and dbt's logs as they come (default: one line per stage; the logs go to "
        "a file under the data directory, named in the summary)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="recompute everything (default: only what Dagster reports missing or stale)",
    )
    _cost_flags(p)
    _wave_size_flag(p)
    p.set_defaults(func=_run)

    p = sub.add_parser("eval", help="evaluate one model under one condition (a turn_results partition)")
    p.add_argument("--model", required=True, help="a partition key of models.yaml")
    p.add_argument("--condition", required=True, help=f"one of {', '.join(CONDITIONS)} (conditions.yaml)")
    p.add_argument(
        "--benchmark",
        choices=BENCHMARKS,
        default=PAPER_BENCHMARK,
        help=f"the benchmark to evaluate on (default: {PAPER_BENCHMARK}, the paper's)",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--retry-errors",
        action="store_true",
        help="ask the model again for every turn whose recorded reply is a failure (default: replay "
        "deterministic failures such as 400 from the request store; transient ones are always re-asked)",
    )
    p.add_argument(
        "--only-failed",
        action="store_true",
        help="ask the model again for every turn of the partition whose answer is not strictly correct "
        "(wrong SQL and deterministic failures included); the other turns replay from the request store. "
        "Each row counts its retries (`retries`): the marts and `memsql view` show them",
    )
    p.add_argument(
        "--sessions",
        type=int,
        metavar="N",
        help="a sample run: a deterministic sample of N sessions stratified by source x tier, the same for "
        "every model and condition (at least one per stratum); a later full run reuses its answers",
    )
    p.add_argument(
        "--epochs",
        type=int,
        metavar="N",
        help="independent samples of every turn (default 1): each epoch asks the model again for every "
        "cell; adding epochs to an evaluated partition asks only for the new ones (default: the "
        "partition's epochs; a sample: 1)",
    )
    _cost_flags(p)
    _wave_size_flag(p)
    p.set_defaults(func=_eval)

    p = sub.add_parser("models", help="the model registry")
    msub = p.add_subparsers(dest="models_command", required=True)
    pl = msub.add_parser("list", help="every registry entry and whether it can run here")
    pl.add_argument("--json", action="store_true")
    pl.set_defaults(func=_models_list)
    pf = msub.add_parser("fetch", help="fetch a local model's weights (explicit, never at run time)")
    pf.add_argument("name", choices=["smollm2"])
    pf.set_defaults(func=_models_fetch)

    p = sub.add_parser("trajectory", help="the AgentSM trajectory store")
    tsub = p.add_subparsers(dest="trajectory_command", required=True)
    ps = tsub.add_parser("search", help="the synthetic questions of DB most similar to QUESTION")
    ps.add_argument("db", choices=["bird_financial", "sec_edgar", "northwind"])
    ps.add_argument("question")
    ps.add_argument("-k", type=int, default=3)
    ps.add_argument("--phase", choices=["explore", "execute", "validate"], help="print only this phase")
    ps.set_defaults(func=_trajectory_search)
    pc = tsub.add_parser("coverage", help="share of benchmark questions whose top-1 trajectory reads their tables")
    pc.add_argument("--json", action="store_true")
    pc.set_defaults(func=_trajectory_coverage)
    _sensitivity_parser(tsub)

    p = sub.add_parser("sources", help="inspect the source databases, fetch the real data")
    ssub = p.add_subparsers(dest="sources_command", required=True)
    pl = ssub.add_parser("list", help="name, kind, path and row counts of each source")
    pl.add_argument("--json", action="store_true")
    pl.set_defaults(func=_sources_list)
    pf = ssub.add_parser(
        "fetch", help="download real public data into $MEMSQL_HOME/raw/<name>/ (sources/fetch.yaml)"
    )
    pf.add_argument("names", nargs="+", metavar="NAME", help="bird_financial, northwind, sec_edgar or all")
    pf.add_argument("--use", action="store_true", help="then set kind: real and real_path in the sources file")
    pf.set_defaults(func=_sources_fetch)

    p = sub.add_parser("export-benchmark", help="write the benchmark as JSONL (one object per turn)")
    p.add_argument("path")
    p.set_defaults(func=_export_benchmark)

    p = sub.add_parser("docs", help="generate the dbt docs and serve them on 127.0.0.1")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.set_defaults(func=_docs)

    p = sub.add_parser("ui", help="serve the Dagster UI over this project's instance")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=3333)
    p.set_defaults(func=_ui)


    p = sub.add_parser("view", help="browse every evaluated turn, and compare two partitions, on 127.0.0.1")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.set_defaults(func=_view)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except MemsqlError as exc:
        print(f"memsql: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
