"""What `memsql eval` and `memsql run` print: a row per partition, or a matrix per benchmark."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.console import table
from memsql_assets.lib.evaluation.interval import interval_text
from memsql_assets.lib.ports import DOCS_PORT, UI_PORT, url
from memsql_assets.lib.vocabulary import (
    CROSS_SESSION_NOTE,
    EXTENDED_BENCHMARK,
    FLOOR_CONDITION,
    GUESS_PROBE,
    PAPER_BENCHMARK,
)

if TYPE_CHECKING:  # the run summary's module imports the Dagster definitions: not for a dry run's plan
    from memsql_assets.orchestration.outcome import EvaluationRun
    from memsql_assets.orchestration.run_summary import RunSummary

SHOWN_FAILURES = 3  # failed partitions named under a matrix; `--json` has every one


def guess_floor(rows: Sequence[EvaluationRun]) -> float | None:
    """guess-probe's memory-critical EX under A among `rows`: the floor each model's A is read against."""
    return next(
        (
            e.summary.ex_memory_critical
            for e in rows
            if e.model == GUESS_PROBE and e.condition == FLOOR_CONDITION and e.summary is not None
        ),
        None,
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _notes(e: EvaluationRun) -> str:
    s = e.summary
    assert s is not None
    notes = "" if s.complete else f"  (sample of {s.sessions} sessions)"
    if s.partition_sample:  # the model's registry entry fixes its partitions' sessions
        notes += f"  (its fixed sample of {s.partition_sample} sessions)"
    if s.epochs > 1:
        notes += f"  ({s.epochs} epochs, {s.n_turns} rows)"
    if s.history != "model":
        notes += f"  ({s.history} history)"
    if s.retried_turns:
        notes += f"  ({s.retried_turns} turns retried)"
    if s.stale_turns:
        notes += f"  stale {s.stale_state}/{s.stale_turns}, contaminated {s.contaminated}"
    return notes + ("  (up to date)" if e.skipped else "")


def print_evaluations(rows: Sequence[EvaluationRun]) -> None:
    """One line per partition: EX with its interval, memory-critical EX, the floor beside A, calls."""
    floor = guess_floor(rows)
    w = max([len("model"), *(len(e.model) for e in rows)])  # the model column fits its longest key
    print(
        f"  {'model':<{w}} {'cond':<6} {'EX %':>6} {'95% CI':>13} {'EX crit %':>9} {'floor %':>7} {'calls':>6} {'cache':>6}  classes"
    )
    for e in rows:
        s = e.summary
        if s is None:
            print(f"  {e.model:<{w}} {e.condition:<6} FAILED: {e.error or 'see the Dagster run'}")
            continue
        classes = ", ".join(f"{k} {v}" for k, v in s.error_classes.items() if v)
        ci = interval_text(*s.ex_strict_ci95) if s.ex_strict_ci95 else "-"
        floor_text = _pct(floor) if e.condition == FLOOR_CONDITION else ""
        print(
            f"  {e.model:<{w}} {e.condition:<6} {_pct(s.ex_strict):>6} {ci:>13} {_pct(s.ex_memory_critical):>9} "
            f"{floor_text:>7} {s.calls:>6} {s.cache_hits:>6}  {classes}{_notes(e)}"
        )
        for warning in s.warnings:
            print(f"  warning: {warning}")


def cascade_line(model: str, condition: str, benchmark: str) -> str | None:
    """The cascade of one model x condition (EX with gold history minus EX with its own), once both
    histories are evaluated on the same benchmark version; the marts give its paired interval."""
    from memsql_assets.lib.harness.results import cascade_pair
    from memsql_assets.lib.paths import memsql_home

    pair = cascade_pair(memsql_home(), model, condition, benchmark)
    if pair is None or pair[0].ex_strict is None or pair[1].ex_strict is None:
        return None
    gold, own = pair
    sides = [f"{h} history {_pct(s.ex_strict)} %" for h, s in (("gold", gold), ("own", own))]
    return (
        f"cascade {model}/{condition} ({benchmark}): {gold.ex_strict - own.ex_strict:+.1f} pp EX "
        f"({', '.join(sides)}; interval: `memsql report`, agg_history_cascade)"
    )


def print_cascade(model: str, condition: str, benchmark: str) -> None:
    """`cascade_line`, once both histories of the partition are evaluated."""
    line = cascade_line(model, condition, benchmark)
    if line:
        print(line)


def _cell(e: EvaluationRun) -> str:
    """Memory-critical EX with its interval, in whole percent: `92 (85–96)`."""
    s = e.summary
    if s is None or not e.success:
        return "FAILED"
    if s.ex_memory_critical is None:
        return "-"
    ci = s.ex_memory_critical_ci95
    return f"{s.ex_memory_critical:.0f}" + (f" ({ci[0]:.0f}–{ci[1]:.0f})" if ci else "")


def matrix_lines(rows: Sequence[EvaluationRun]) -> list[str]:
    """Models as rows, conditions as columns, memory-critical EX (95% CI) in each cell."""
    conditions = [c for c in CONDITIONS if any(e.condition == c for e in rows)]
    models = list(dict.fromkeys(e.model for e in rows))
    cells = {(e.model, e.condition): _cell(e) for e in rows}
    body = [[m, *(cells.get((m, c), "") for c in conditions)] for m in models]
    return table([["model", *conditions], *body], right=tuple(range(1, len(conditions) + 1)))


def _figure(value: float | None, ci: list[float] | None) -> str:
    return "-" if value is None else f"{value:.0f}" + (f" ({ci[0]:.0f}–{ci[1]:.0f})" if ci else "")


def _split_cell(e: EvaluationRun) -> str:
    """Within a session | across sessions, each with its interval over turns, then contaminated/stale turns."""
    s = e.summary
    if s is None or not e.success:
        return "FAILED"
    within = _figure(s.ex_within_session, s.ex_within_session_ci95)
    return f"{within} | {_figure(s.ex_cross_session, s.ex_cross_session_ci95)}  {s.contaminated}/{s.stale_state}"


def split_matrix_lines(rows: Sequence[EvaluationRun]) -> list[str]:
    """The extended benchmark's matrix, conditions as rows (two figures a cell are too wide for columns)."""
    conditions = [c for c in CONDITIONS if any(e.condition == c for e in rows)]
    models = list(dict.fromkeys(e.model for e in rows))
    cells = {(e.model, e.condition): _split_cell(e) for e in rows}
    body = [[c, *(cells.get((m, c), "") for m in models)] for c in conditions]
    return table([["condition", *models], *body], right=tuple(range(1, len(models) + 1)))


def _benchmark_lines(s: RunSummary, benchmark: str) -> list[str]:
    rows = [e for e in s.evaluations if e.benchmark == benchmark]
    composition = s.benchmark if benchmark == PAPER_BENCHMARK else s.extended_benchmark
    size = "not built"
    if composition:
        size = f"{composition.sessions} sessions, {composition.turns} turns, {composition.memory_critical} memory-critical"
    if not rows:
        return [f"\n{benchmark} benchmark: {size}"]
    modes = "/".join(sorted({e.summary.context_mode for e in rows if e.summary is not None}))
    mode = f" ({modes} context mode)" if modes else ""
    if benchmark == EXTENDED_BENCHMARK:
        lines = [
            f"\n{benchmark} benchmark{mode}: {size}; EX % within a session | across sessions (95% CI, unit: turns)  "
            "contaminated/stale turns:"
        ]
        lines += ["  " + line for line in split_matrix_lines(rows)] + ["  " + line for line in CROSS_SESSION_NOTE]
    else:
        lines = [f"\n{benchmark} benchmark{mode}: {size}; memory-critical EX % (95% CI):"]
        lines += ["  " + line for line in matrix_lines(rows)]
    lines += _cascade_lines(s, benchmark)
    failed = [e for e in rows + [g for g in s.gold_history if g.benchmark == benchmark] if not e.success]
    lines += [f"  {e.model}/{e.condition}: FAILED: {e.error or 'see the Dagster run'}" for e in failed[:SHOWN_FAILURES]]
    if len(failed) > SHOWN_FAILURES:
        lines.append(f"  and {len(failed) - SHOWN_FAILURES} more failures (`memsql run --json`)")
    return lines


def _cascade_lines(s: RunSummary, benchmark: str) -> list[str]:
    """Per model evaluated with gold history too: its cascade under each condition, in one line (EX
    with gold history minus EX with its own, in points; the marts' agg_history_cascade has the intervals)."""
    own = {(e.model, e.condition): e.summary for e in s.evaluations if e.benchmark == benchmark and e.success}
    cascades: dict[str, list[str]] = {}
    for g in s.gold_history:
        mine = own.get((g.model, g.condition))
        if g.benchmark == benchmark and g.success and g.summary and mine and None not in (g.summary.ex_strict, mine.ex_strict):
            cascades.setdefault(g.model, []).append(f"{g.condition} {g.summary.ex_strict - mine.ex_strict:+.1f}")
    return [f"  cascade of {m} (EX with gold history - own history, pp): {', '.join(c)}" for m, c in cascades.items()]


def _state(s: RunSummary) -> str:
    """What the main job built and why: "built: sources, sessions (new home)"; one reason shared by
    all is said once, else each after its part."""
    if s.main_job_skipped:
        return "up to date, not re-run"
    built = s.main_job_built
    if len(set(built.values())) == 1:
        what = f"{', '.join(built)} ({next(iter(built.values()))})"
    else:
        what = ", ".join(f"{part} ({why})" for part, why in built.items())
    return f"built: {what}" if s.success else f"FAILED while building: {what}"


def _checks_line(s: RunSummary) -> str:
    """The main job's checks and dbt's tests, in one line."""
    failed = sorted(name for name, passed in s.checks.items() if not passed)
    line = f"\nchecks: {len(s.checks) - len(failed)}/{len(s.checks)} passed"
    line += f" (FAILED: {', '.join(failed)})" if failed else ""
    if s.report is not None:
        tests = s.report.failed_dbt_tests
        line += f"; dbt tests FAILED: {', '.join(tests)}" if tests else "; dbt tests passed"
        if not s.report.success:
            line += f"; metrics FAILED: {s.report.error or 'see the Dagster run'}"
    return line


def _sources_line(s: RunSummary) -> str:
    return "sources: " + ", ".join(f"{n} ({i.kind}, {i.rows:,} rows)" for n, i in s.sources.items())


def print_run_summary(s: RunSummary) -> None:
    """`memsql run`'s summary in one screen: per benchmark one matrix, the checks, where to look."""
    from memsql_assets.lib.viewer.server import viewer_url

    print(f"\nmemsql main job: {_state(s)}  (run {s.run_id}, data in {s.home})")
    print(_sources_line(s))
    for benchmark in s.benchmarks:
        print("\n".join(_benchmark_lines(s, benchmark)))
    print(_checks_line(s))
    if s.report is not None:
        print(f"report: {s.report.html}  (dbt docs: memsql docs, {url(DOCS_PORT)})")
    print(f"viewer: memsql view  ({viewer_url()});  Dagster: memsql ui  ({url(UI_PORT)})")
    if s.log:
        print(f"Dagster and dbt logs: {s.log}  (`memsql run --verbose` prints them)")
