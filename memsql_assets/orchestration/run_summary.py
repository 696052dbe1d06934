"""`memsql run`'s summary: the main job, the sources and benchmarks it built, the evaluations and the
metrics. `--json` prints all of it; the console a matrix per benchmark (cli/render.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.paths import benchmark_dir, source_db_path, turns_file
from memsql_assets.lib.sources.build import describe_source
from memsql_assets.lib.sources.config import SOURCE_NAMES
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK
from memsql_assets.orchestration.dagster_jobs import MainJobOutcome
from memsql_assets.orchestration.metrics import MetricsOutcome
from memsql_assets.orchestration.outcome import EvaluationRun

_DOCS = ConfigDict(use_attribute_docstrings=True)


class SourceState(BaseModel):
    """A built source database."""

    model_config = _DOCS
    kind: str
    """embedded, synthetic or real."""
    rows: int
    """Rows over its tables."""
    sha256: str
    """The first 12 hex digits of its content hash."""


class PaperComposition(BaseModel):
    """The paper benchmark's sessions and turns."""

    model_config = _DOCS
    sessions: int
    """Sessions."""
    turns: int
    """Turns."""
    memory_critical: int
    """Memory-critical turns."""
    sessions_by_source_tier: dict[str, int]
    """Sessions per "source-T<tier>"."""
    turns_by_source_tier: dict[str, int]
    """Turns per "source-T<tier>"."""


class ExtendedComposition(BaseModel):
    """The extended benchmark's sessions, turns and tags."""

    model_config = _DOCS
    sessions: int
    """Sessions."""
    turns: int
    """Turns."""
    memory_critical: int
    """Memory-critical turns."""
    beyond_five_turns: int
    """Memory-critical turns that need a value from beyond five turns."""
    sessions_by_source: dict[str, int]
    """Sessions per source."""
    turns_by_tag: dict[str, int]
    """Turns per tag."""


class RunSummary(BaseModel):
    """Everything one `memsql run` did and found."""

    model_config = _DOCS
    run_id: str | None
    """The main job's last Dagster run (None: it was up to date)."""
    success: bool
    """The main job succeeded."""
    home: str
    """The data directory."""
    checks: dict[str, bool]
    """The main job's checks: passed or not."""
    main_job_skipped: bool
    """Nothing of the main job was out of date."""
    main_job_why: dict[str, str]
    """Why each rebuilt asset was rebuilt."""
    main_job_built: dict[str, str] = {}
    """What the main job rebuilt, in a newcomer's words, and why."""
    sources: dict[str, SourceState]
    """The built source databases."""
    benchmarks: list[str]
    """The benchmarks this run built and evaluated."""
    benchmark: PaperComposition | None
    """The paper benchmark's composition."""
    extended_benchmark: ExtendedComposition | None = None
    """The extended benchmark's composition (when chosen and built)."""
    evaluations: list[EvaluationRun] = []
    """Every partition `memsql run` evaluates, run or up to date."""
    gold_history: list[EvaluationRun] = []
    """The partitions it also evaluates with gold history (lib/history.py), run or up to date:
    beside `evaluations`' own-history ones, their EX difference is the cascade."""
    report: MetricsOutcome | None = None
    """The metrics step (None: no evaluation)."""
    log: str | None = None
    """The file Dagster's and dbt's logs went to (None: --verbose)."""

    @property
    def ok(self) -> bool:
        """The run's exit status: the main job, its checks, every evaluation and the metrics."""
        return (
            self.success
            and all(self.checks.values())
            and all(e.success for e in self.evaluations + self.gold_history)
            and (self.report is None or self.report.success)
        )

    def as_json(self) -> dict[str, Any]:
        """`memsql run --json`: every field, each evaluation flat as `memsql eval --json` prints it."""
        return {
            **self.model_dump(mode="json"),
            "evaluations": [e.as_json() for e in self.evaluations],
            "gold_history": [e.as_json() for e in self.gold_history],
        }


def sources_state(home: Path) -> dict[str, SourceState]:
    out = {}
    for name in SOURCE_NAMES:
        path = source_db_path(home, name)
        if path.exists():
            b = describe_source(name, path)
            out[name] = SourceState(kind=b.kind, rows=sum(b.row_counts.values()), sha256=b.content_hash[:12])
    return out


def paper_composition(home: Path) -> PaperComposition | None:
    if not turns_file(home).exists():
        return None
    turns = read_turns(benchmark_dir(home))
    sessions = {(t["session_id"], t["source"], t["tier"]) for t in turns}
    return PaperComposition(
        sessions=len(sessions),
        turns=len(turns),
        memory_critical=sum(t["memory_critical"] for t in turns),
        sessions_by_source_tier={f"{s}-T{t}": n for (s, t), n in sorted(Counter((s, t) for _, s, t in sessions).items())},
        turns_by_source_tier={
            f"{s}-T{t}": n for (s, t), n in sorted(Counter((x["source"], x["tier"]) for x in turns).items())
        },
    )


def extended_composition(home: Path) -> ExtendedComposition | None:
    if not turns_file(home, EXTENDED_BENCHMARK).exists():
        return None
    turns = read_turns(benchmark_dir(home, EXTENDED_BENCHMARK))
    critical = [t for t in turns if t["memory_critical"]]
    return ExtendedComposition(
        sessions=len({t["session_id"] for t in turns}),
        turns=len(turns),
        memory_critical=len(critical),
        beyond_five_turns=sum(t["recall_distance"] > 5 for t in critical),
        sessions_by_source=dict(sorted(Counter(t["source"] for t in turns if t["turn_index"] == 1).items())),
        turns_by_tag=dict(sorted(Counter(t["tag"] for t in turns).items())),
    )


def build_run_summary(
    home: Path,
    main: MainJobOutcome,
    benchmarks: tuple[str, ...],
    evaluations: list[EvaluationRun],
    report: MetricsOutcome | None,
    log: Path | None,
    gold_history: list[EvaluationRun] | None = None,
) -> RunSummary:
    return RunSummary(
        run_id=main.run_id,
        success=main.success,
        home=str(home),
        checks=main.checks,
        main_job_skipped=main.skipped,
        main_job_why=main.why,
        main_job_built=main.built,
        sources=sources_state(home),
        benchmarks=list(benchmarks),
        benchmark=paper_composition(home),
        extended_benchmark=extended_composition(home) if EXTENDED_BENCHMARK in benchmarks else None,
        evaluations=evaluations,
        gold_history=gold_history or [],
        report=report,
        log=None if log is None else str(log),
    )
