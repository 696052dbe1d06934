"""Partition summaries: the numbers a person reads in the Dagster UI and `memsql eval --json`, and
the typed model (`PartitionSummary`) that summary.json, the CLI, the scale-out path and dbt read."""

from __future__ import annotations

import json
import types
import typing
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from memsql_assets.lib.atomic import write_text_atomic
from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.evaluation.interval import ex_interval
from memsql_assets.lib.history import History
from memsql_assets.lib.vocabulary import CROSS_SESSION_TAGS, ERROR_CLASSES, PAPER_BENCHMARK


def _pct(num: int, den: int) -> float | None:
    """None when there is nothing to score: the dbt marts' `pct` macro says null, never 0."""
    return round(100.0 * num / den, 2) if den else None


def _ex_by(rows: list[Mapping[str, Any]], key: str) -> dict[Any, float | None]:
    """EX per value of `key`, in the values' own order (turn 2 before turn 10)."""
    groups: dict[Any, list[bool]] = defaultdict(list)
    for r in rows:
        groups[r[key]].append(bool(r["ex_strict"]))
    return {k: _pct(sum(v), len(v)) for k, v in sorted(groups.items())}


def _interval(rows: list[Mapping[str, Any]]) -> list[float] | None:
    """Wilson over sessions of strict EX among `rows` (lib/evaluation/interval.py), what the marts'
    ex_ci_lo/ex_ci_hi return; None with no rows."""
    if not rows:
        return None
    correct = sum(bool(r["ex_strict"]) for r in rows)
    return list(ex_interval(correct, len(rows), len({r["session_id"] for r in rows})))


def _over_turns(rows: list[Mapping[str, Any]]) -> list[float] | None:
    """Wilson over turns (each row one observation) of strict EX among `rows`: the unit of the
    cross-session headline's intervals, the marts' ex_ci_lo(n_correct, n, n); None with no rows."""
    correct = sum(bool(r["ex_strict"]) for r in rows)
    return list(ex_interval(correct, len(rows), len(rows))) if rows else None


def cross_session_turns(turns: Iterable[Mapping[str, Any]]) -> frozenset[tuple[str, int]]:
    """(session_id, turn_index) of the benchmark turns tagged cross-session (the extended benchmark's)."""
    return frozenset((t["session_id"], int(t["turn_index"])) for t in turns if t.get("tag") in CROSS_SESSION_TAGS)


def _session_split(rows: list[Mapping[str, Any]], cross: frozenset[tuple[str, int]]) -> dict[str, Any]:
    """The cross-session headline: memory-critical EX within a session (turns not tagged cross-session)
    beside EX on the cross-session turns, each with its Wilson interval over turns."""
    across = [r for r in rows if (r["session_id"], int(r["turn_index"])) in cross]
    within = [r for r in rows if r["memory_critical"] and (r["session_id"], int(r["turn_index"])) not in cross]
    return {
        "n_within_session": len(within),
        "ex_within_session": _pct(sum(bool(r["ex_strict"]) for r in within), len(within)),
        "ex_within_session_ci95": _over_turns(within),
        "n_cross_session": len(across),
        "ex_cross_session": _pct(sum(bool(r["ex_strict"]) for r in across), len(across)),
        "ex_cross_session_ci95": _over_turns(across),
        "contaminated_cross_session": sum(bool(r["contaminated"]) for r in across),
    }


def reasoning_warning(rows: list[Mapping[str, Any]], model: str, condition: str, expected: bool) -> str | None:
    """A warning when an entry configured to reason answered without a single reasoning token over
    the whole partition: the provider's default may be no reasoning at all."""
    answered = [r for r in rows if not r["model_error_type"]]
    if not expected or not answered or any(r.get("reasoning_tokens") for r in answered):
        return None
    return (
        f"{model} is configured to reason, but its {len(answered)} answered turns under {condition} "
        "report 0 reasoning tokens: the provider may not be reasoning (GPT-5.1 and later do not "
        "unless a reasoning effort is sent; see docs/reference_models.md)"
    )


def summarize(
    rows: Iterable[Mapping[str, Any]],
    model: str,
    condition: str,
    wall_s: float,
    reasoning_expected: bool = False,
    cross_session: frozenset[tuple[str, int]] = frozenset(),
) -> PartitionSummary:
    """The partition's numbers (the run's own fields at their defaults); `reasoning_expected`: the
    registry entry is configured to reason; `cross_session`: the turns tagged cross-session
    (`cross_session_turns`)."""
    rows = list(rows)
    warning = reasoning_warning(rows, model, condition, reasoning_expected)
    n = len(rows)
    turns = len({(r["session_id"], r["turn_index"]) for r in rows})
    classes = Counter(r["error_class"] for r in rows)
    critical = [r for r in rows if r["memory_critical"]]
    correct = sum(bool(r["ex_strict"]) for r in rows)
    sessions = len({r["session_id"] for r in rows})
    return PartitionSummary(
        model=model,
        condition=condition,
        turns=turns,
        epochs=len({int(r.get("epoch") or 1) for r in rows}),
        n_turns=n,
        sessions=sessions,
        ex_strict=_pct(correct, n),
        ex_strict_ci95=_interval(rows),
        ex_bag=_pct(sum(r["ex_bag"] for r in rows), n),
        ex_set=_pct(sum(r["ex_set"] for r in rows), n),
        ex_memory_critical=_pct(sum(r["ex_strict"] for r in critical), len(critical)),
        ex_memory_critical_ci95=_interval(critical),
        **_session_split(rows, cross_session),
        ex_by_tier={str(k): v for k, v in _ex_by(rows, "tier").items()},
        ex_by_source=_ex_by(rows, "source"),
        ex_by_turn_index={int(k): v for k, v in _ex_by(rows, "turn_index").items()},
        error_classes={c: classes.get(c, 0) for c in ERROR_CLASSES},
        contaminated=sum(bool(r["contaminated"]) for r in rows),
        fallback_match=sum(bool(r["fallback_match"]) for r in rows),
        stale_turns=sum(r.get("stale_state") is not None for r in rows),
        stale_state=sum(bool(r.get("stale_state")) for r in rows),
        gt_errors=sum(1 for r in rows if r["gt_error"]),
        model_errors=dict(Counter(r["model_error_type"] for r in rows if r["model_error_type"])),
        calls=sum(int(r["attempts"] or 0) for r in rows),
        cache_hits=sum(bool(r["cache_hit"]) for r in rows),
        prompt_tokens=sum(int(r["prompt_tokens"] or 0) for r in rows),
        completion_tokens=sum(int(r["completion_tokens"] or 0) for r in rows),
        reasoning_tokens=sum(int(r.get("reasoning_tokens") or 0) for r in rows),
        warnings=[warning] if warning else [],
        cost_usd=round(sum(float(r["cost_usd"] or 0.0) for r in rows), 6),
        wall_s=round(wall_s, 2),
    )


class PartitionSummary(BaseModel):
    """A partition run's summary, as `summary.json` holds it: `summarize`'s scores and what the run
    was. The one definition behind the file, `memsql eval --json`, the run worker's pipe and dbt's
    staging (`summary_columns` derives the staging's columns from these fields). A new field with a
    default is one line here."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    model: str
    """The registry key of the evaluated model."""
    condition: str
    """The memory condition (conditions.yaml)."""
    turns: int
    """Distinct benchmark turns evaluated."""
    epochs: int
    """Independent samples of every turn."""
    n_turns: int
    """Scored rows, what EX and its interval rest on: turns x epochs."""
    sessions: int
    """Distinct sessions evaluated."""
    ex_strict: float | None
    """Strict execution accuracy in percent (None: nothing scored)."""
    ex_strict_ci95: list[float] | None
    """Wilson interval over sessions of ex_strict (lib/evaluation/interval.py)."""
    ex_bag: float | None
    """Bag-semantics execution accuracy in percent."""
    ex_set: float | None
    """Set-semantics execution accuracy in percent."""
    ex_memory_critical: float | None
    """Strict EX over the memory-critical turns."""
    ex_memory_critical_ci95: list[float] | None = None
    """Wilson interval over sessions of ex_memory_critical."""
    n_within_session: int = 0
    """Scored memory-critical rows not tagged cross-session: what ex_within_session rests on."""
    ex_within_session: float | None = None
    """Strict EX over the memory-critical turns not tagged cross-session: memory within a session."""
    ex_within_session_ci95: list[float] | None = None
    """Wilson interval of ex_within_session, the unit turns (each scored row one observation)."""
    n_cross_session: int = 0
    """Scored rows of the turns tagged cross-session (extended benchmark): what ex_cross_session rests on."""
    ex_cross_session: float | None = None
    """Strict EX over the turns tagged cross-session: memory across an analyst's sessions (None: none)."""
    ex_cross_session_ci95: list[float] | None = None
    """Wilson interval of ex_cross_session, the unit turns (each scored row one observation)."""
    contaminated_cross_session: int = 0
    """Of the cross-session rows, those whose answer took a value from another analyst's session."""
    ex_by_tier: dict[str, float | None]
    """Strict EX per tier."""
    ex_by_source: dict[str, float | None]
    """Strict EX per source."""
    ex_by_turn_index: dict[int, float | None]
    """Strict EX per turn index."""
    error_classes: dict[str, int]
    """Rows per error class (every class of the vocabulary, 0 included)."""
    contaminated: int
    """Rows whose answer read a later turn's state."""
    fallback_match: int
    """Rows scored by the fallback comparator."""
    stale_turns: int
    """Turns after a correction (extended benchmark)."""
    stale_state: int
    """Of those, turns whose result is the overwritten state's."""
    gt_errors: int
    """Rows whose ground truth failed to execute."""
    model_errors: dict[str, int]
    """Rows per model error type."""
    calls: int
    """Model calls, retries included."""
    cache_hits: int
    """Rows answered from the request store."""
    prompt_tokens: int
    """Prompt tokens over the rows."""
    completion_tokens: int
    """Completion tokens over the rows."""
    reasoning_tokens: int
    """Reasoning tokens over the rows."""
    warnings: list[str]
    """What a person should know about the run (e.g. a reasoning model that did not reason)."""
    cost_usd: float
    """The rows' cost in USD."""
    wall_s: float
    """Seconds the partition took."""
    benchmark: str = PAPER_BENCHMARK
    """The benchmark whose turns were evaluated."""
    benchmark_version: str | None = None
    """The benchmark file's content hash."""
    retried_turns: int = 0
    """Turns asked again (`--only-failed`)."""
    model_calls_this_run: int = 0
    """Model calls this run made (not replayed from the request store)."""
    model_fingerprint: str | None = None
    """The registry entry's fingerprint."""
    share_identical_prompts: bool = False
    """Whether identical prompts shared one answer."""
    complete: bool = True
    """False for a sample run (`--sessions`) that leaves sessions out."""
    partition_sample: int | None = None
    """The sample the model's registry entry fixes for its partitions (the reference agent's)."""
    sample_sessions: list[str] | None = None
    """The sessions evaluated, when not all."""
    wave_size: int | None = None
    """W of a shared memory (C, D); None for per-session memory."""
    concurrency: dict[str, float] | None = None
    """The model's adaptive in-flight limit over the run: limit_min, limit_max, limit_last,
    limit_settled (the median over the later half of the attempts), retries, retry_wait_s."""
    damaged_records: int = 0
    """Request-store records that failed their checksum, and were asked again instead of replayed."""
    twins_reachable_pct: float | None = None
    """A shared memory's distractor turns whose twin session ran in an earlier wave, in percent."""
    memory_implementation: str | None = None
    """The condition's memory implementation."""
    context_mode: str = ContextMode.ANNOTATED.value
    """What the memory was given of each turn: annotated (the paper's) or observed (lib/context_mode.py)."""
    history: str = History.MODEL.value
    """Whose answers to earlier turns the memory stored: model (the paper's) or gold (lib/history.py)."""
    resumed_sessions: int = 0
    """Sessions x epochs resumed from checkpoints."""
    redone_sessions: int = 0
    """Sessions x epochs redone."""
    memory_store_entries: int = 0
    """Entries the memory's stores held."""
    memory_store_bytes: int = 0
    """Bytes the memory's stores held."""


SUMMARY_FILE = "summary.json"


def write_summary(directory: Path, summary: PartitionSummary) -> Path:
    path = directory / SUMMARY_FILE
    write_text_atomic(path, json.dumps(summary.model_dump(mode="json"), indent=2, sort_keys=True))
    return path


def read_summary(directory: Path) -> PartitionSummary | None:
    """The summary published in `directory` (None when there is none yet): the one decoder of
    `summary.json`. A file that does not fit the model is one error naming the file and field."""
    path = directory / SUMMARY_FILE
    if not path.exists():
        return None
    try:
        return PartitionSummary.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(the file)"
        raise MemsqlError(
            f"{path}: field '{field}': {first['msg']}; re-run the partition to rewrite it"
        ) from None


# DuckDB's type for each scalar field's JSON value; lists and dicts stay JSON.
_DUCKDB_TYPES = {int: "bigint", float: "double", bool: "boolean", str: "varchar"}
# Named by the file's path (model=…/condition=…) and the glob's benchmark, not read from the file.
PATH_FIELDS = ("model", "condition", "benchmark")


def _scalar(annotation: Any) -> Any:
    """The type of a field's value: `X | None` is X; a dict or list stays itself (JSON)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    return annotation


def summary_columns() -> list[list[str]]:
    """[name, DuckDB type] of every field of PartitionSummary but those its path names: the columns
    dbt's stg_partition_summaries reads from each summary.json (the `summary_columns` var)."""
    out = []
    for name, field in PartitionSummary.model_fields.items():
        if name in PATH_FIELDS:
            continue
        out.append([name, _DUCKDB_TYPES.get(_scalar(field.annotation), "json")])
    return out


def summary_column_docs() -> dict[str, str]:
    """Each field's description (its docstring): the `summary_column_docs` var."""
    return {name: field.description or "" for name, field in PartitionSummary.model_fields.items()}
