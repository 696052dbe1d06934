"""`memsql run`'s console summary fits one screen whatever the run evaluated: per benchmark one matrix
(the paper's: models as rows, conditions as columns, memory-critical EX with its interval; the extended
one: conditions as rows, EX within a session | across sessions with their intervals and the
contaminated/stale turns), the checks in one line, then where the report, the viewer and the logs
are; `--json` keeps every field."""

from __future__ import annotations

from memsql_assets.cli.render import print_run_summary
from memsql_assets.defs.jobs import MAIN_GROUP_WORDS
from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.harness.summary import PartitionSummary, summarize
from memsql_assets.lib.vocabulary import BENCHMARKS, CROSS_SESSION_NOTE, EXTENDED_BENCHMARK, PAPER_BENCHMARK
from memsql_assets.orchestration.dagster_jobs import plain_reason
from memsql_assets.orchestration.metrics import MetricsOutcome
from memsql_assets.orchestration.outcome import EvaluationRun
from memsql_assets.orchestration.run_summary import RunSummary
from memsql_assets.orchestration.selection import main_run_cells

MAX_LINES = 50


def _evaluation(benchmark: str, model: str, condition: str, failed: bool) -> EvaluationRun:
    if failed:
        return EvaluationRun(model=model, condition=condition, benchmark=benchmark, success=False, error="boom")
    fields = {**summarize([], model, condition, 0.0).model_dump(), "benchmark": benchmark, "ex_strict": 90.0}
    fields.update(ex_memory_critical=87.4, ex_memory_critical_ci95=[80.04, 92.6])
    fields.update(ex_within_session=91.2, ex_within_session_ci95=[88.1, 93.6], contaminated=3, stale_state=1)
    fields.update(ex_cross_session=62.5, ex_cross_session_ci95=[55.3, 69.2])
    return EvaluationRun(model=model, condition=condition, benchmark=benchmark, success=True, summary=PartitionSummary(**fields))


def _summary(failures: int = 0, built: dict[str, str] | None = None) -> RunSummary:
    cells = [(b, m, c) for b in BENCHMARKS for m, c in main_run_cells(b, CONDITIONS)]
    return RunSummary(
        run_id="r1", success=True, home="/data", checks={f"check_{i}": i != 3 for i in range(12)},
        main_job_skipped=False, main_job_why={"sessions": "missing"}, sources={}, benchmarks=list(BENCHMARKS),
        main_job_built=built or {"sessions": "not built yet"},
        benchmark=None, evaluations=[_evaluation(*cell, failed=i < failures) for i, cell in enumerate(cells)],
        report=MetricsOutcome(success=True, skipped=False, html="/data/report/report.html", failed_dbt_tests=[]),
        log="/data/logs/run-1.log",
    )  # fmt: skip


def test_the_summary_is_one_matrix_per_benchmark_and_fits_one_screen(capsys):
    summary = _summary(failures=5)
    print_run_summary(summary)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) <= MAX_LINES, "\n".join(lines)
    for benchmark in BENCHMARKS:
        cells = main_run_cells(benchmark, CONDITIONS)
        (title,) = [i for i, line in enumerate(lines) if line.startswith(f"{benchmark} benchmark")]
        header = lines[title + 1].split()
        conditions = list(dict.fromkeys(c for c in CONDITIONS if any(c == x for _, x in cells)))
        models = list(dict.fromkeys(m for m, _ in cells))
        rows, columns = (conditions, models) if benchmark == EXTENDED_BENCHMARK else (models, conditions)
        assert header == [header[0], *columns]
        assert [line.split()[0] for line in lines[title + 2 : title + 2 + len(rows)]] == rows
    assert "87 (80–93)" in "\n".join(lines) and sum("FAILED" in line for line in lines) >= 5
    (extended,) = [i for i, line in enumerate(lines) if line.startswith(f"{EXTENDED_BENCHMARK} benchmark")]
    assert "within a session | across sessions (95% CI, unit: turns)" in lines[extended]
    by_condition = {line.split()[0]: line for line in lines[extended + 2 : extended + 2 + len(conditions)]}
    assert {"C", "C_analyst", "M0", "M0_analyst"} <= set(by_condition)
    assert "91 (88–94) | 62 (55–69)  3/1" in by_condition["C_analyst"]
    assert [line.strip() for line in lines[extended + 2 + len(conditions) :][:2]] == list(CROSS_SESSION_NOTE)
    (checks,) = [line for line in lines if line.startswith("checks:")]
    assert checks == "checks: 11/12 passed (FAILED: check_3); dbt tests passed"
    assert lines[-3].startswith("report: /data/report/report.html")
    assert lines[-2].startswith("viewer: memsql view") and lines[-1].startswith("Dagster and dbt logs: /data/logs")


def test_json_keeps_every_partition_and_field():
    summary = _summary()
    out = summary.as_json()
    assert len(out["evaluations"]) == len(summary.evaluations)
    first = out["evaluations"][0]
    assert set(PartitionSummary.model_fields) <= set(first) and first["benchmark"] == PAPER_BENCHMARK
    assert out["report"]["html"] == "/data/report/report.html" and out["checks"]["check_3"] is False


def test_the_first_line_says_what_the_main_job_built_and_why(capsys):
    new_home = dict.fromkeys(MAIN_GROUP_WORDS.values(), "new home")
    print_run_summary(_summary(built=new_home))
    first = capsys.readouterr().out.strip().splitlines()[0]
    assert first.startswith("memsql main job: built: sources, sessions, semantic memory, trajectory store (new home)")
    print_run_summary(_summary(built={"sources": "raw_northwind changed", "sessions": "its code changed"}))
    first = capsys.readouterr().out.strip().splitlines()[0]
    assert first.startswith("memsql main job: built: sources (raw_northwind changed), sessions (its code changed)")


def test_dagster_causes_read_as_plain_words():
    words = plain_reason({"northwind": "has a new dependency data version: raw_northwind", "sessions": "missing"}, 11)
    assert words("has a new dependency data version: raw_northwind") == "raw_northwind changed"
    assert words("has a new code version") == "its code changed" and words("missing") == "not built yet"
    assert words("forced") == "--force"
    assert plain_reason(dict.fromkeys("ab", "missing"), 2)("missing") == "new home", "every asset missing"
