"""What a partition run would ask a model, before it asks: the calls and an upper bound of their cost.

A cell (model, condition, session, turn, epoch) costs nothing when the request store holds a
replayable answer for it from the same model configuration (litellm id and params); every other
cell of the run is counted as one call. The count is by cell, so a prompt that changed since (a new
benchmark version) is not foreseen: `memsql run` re-asks such cells, which the count of a stale
partition leaves out only when the same cells were answered before under other prompts.

The cost bound prices each call at its largest possible size: the prompt at PROMPT_BYTES_BOUND
tokens (a token is at least one byte of UTF-8; memsql's prompts without model-written text are
below it) plus every model-written entry a prompt can carry (MEMORY_ENTRIES) at the model's output
limit, and the output at that limit (`max_tokens` or `max_completion_tokens` of the entry's
provider params). A priced model without an output limit has no bound: None.

The estimate is what a user can act on: each call's prompt counted with the model's tokenizer,
assembled as the agent will assemble it (plan_prompts.py: exact under A; under a condition with
memory, the blocks built from earlier turns are assembled with each earlier turn's ground truth
standing in for the model's answer; a block that only a retrieval by embedding could fill is stood
in for, or left out and named in the estimate's line), and an expected output: the median
completion tokens of the model's answers in the request store, else the entry's reasoning budget
plus TYPICAL_ANSWER_TOKENS. A cap (`--max-cost`, `max_cost_usd`) is per partition run: it refuses
a run whose estimate exceeds it (its bound, where there is no estimate), and stops a run whose
recorded spend reaches it (gateway.COST_CAP).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsql_assets.lib.agent.limits import DEFAULT_MAX_STEPS
from memsql_assets.lib.benchmark.sample import sample_turns
from memsql_assets.lib.benchmark.store import turn_id
from memsql_assets.lib.conditions import get_condition
from memsql_assets.lib.harness.plan_prompts import PromptCount, prompt_counts
from memsql_assets.lib.history import History
from memsql_assets.lib.models.failures import ENDPOINT_FAILURES
from memsql_assets.lib.models.registry import ModelEntry
from memsql_assets.lib.models.request_store import requests_dir, scrub
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK

# The largest prompt the benchmark assembles without model-written text, in UTF-8 bytes, rounded up
# (condition E_prompt with a whole trajectory comes to about 13 KB).
PROMPT_BYTES_BOUND = 16_384
# Model-written entries one prompt can carry: five working-memory turns and three episodic ones.
MEMORY_ENTRIES = 8
OUTPUT_LIMIT_PARAMS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
# The output of a typical answer without reasoning, in tokens: a SQL query of a few joins and filters.
TYPICAL_ANSWER_TOKENS = 150

Cell = tuple[str, str, str, int, int, int]  # model, condition, session, turn, epoch, retry


@dataclass(frozen=True)
class RunPlan:
    model: str
    condition: str
    cells: int  # turns x epochs of the run
    calls: int  # cells without a stored answer
    cost_bound_usd: float | None  # None: no bound (a priced model without an output limit)
    estimate: Estimate | None = None  # None: not estimated (a home without its benchmark)

    def exceeds(self, max_cost_usd: float | None) -> bool:
        """Above the cap: its estimate, else its bound (None: no bound exceeds any cap)."""
        if max_cost_usd is None:
            return False
        if self.estimate is not None:
            return self.estimate.usd > max_cost_usd
        return self.cost_bound_usd is None or self.cost_bound_usd > max_cost_usd

    def describe(self) -> str:
        bound = "no bound (set provider_params.max_tokens)" if self.cost_bound_usd is None else (
            f"at most ${self.cost_bound_usd:,.2f}"
        )
        expected = f"about ${self.estimate.usd:,.2f} ({self.estimate.describe()}), " if self.estimate else ""
        return f"{self.model}/{self.condition}: {self.calls:,} model calls of {self.cells:,} cells, {expected}{bound}"


@dataclass(frozen=True)
class Estimate:
    """The expected cost of a run's calls."""

    prompt_tokens: int  # of every call, counted
    output_tokens_per_call: int  # expected
    output_source: str  # where the expectation comes from
    usd: float
    left_out: str | None = None  # a memory block the prompts' count leaves out (plan_prompts.left_out)

    def describe(self) -> str:
        prompts = f"{self.prompt_tokens:,} prompt tokens" + (f" without {self.left_out}" if self.left_out else "")
        return f"{prompts}, {self.output_tokens_per_call:,} output tokens a call ({self.output_source})"


@dataclass(frozen=True)
class StoreIndex:
    """One read of the request store: its replayable cells and its answers' output tokens, by model
    configuration (config_key)."""

    cells: dict[str, set[Cell]]
    outputs: dict[str, list[int]]


def output_limit(entry: ModelEntry) -> int | None:
    for name in OUTPUT_LIMIT_PARAMS:
        value = entry.provider_params.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def call_cost_bound(entry: ModelEntry) -> float | None:
    """The most one call of `entry` can cost (USD); None when a priced model has no output limit."""
    if entry.price_input_per_mtok == 0 and entry.price_output_per_mtok == 0:
        return 0.0
    limit = output_limit(entry)
    if limit is None:
        return None
    return entry.cost_usd(PROMPT_BYTES_BOUND + MEMORY_ENTRIES * limit, limit)


def answered_by_config(store_root: Path, retry_errors: bool = False, history: History = History.MODEL) -> StoreIndex:
    """Every replayable cell of the request store of `history`, and every answer's output tokens, by
    model configuration (config_key): one read of the store serves every partition of a run's plan.
    A cell of one history never answers the other's (history.py)."""
    done: dict[str, set[Cell]] = {}
    outputs: dict[str, list[int]] = {}
    for path in store_root.glob("??/*.json") if store_root.exists() else ():
        try:
            record = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue  # the gateway treats an unreadable record as a miss: so does the count
        cell = record.get("cell") if isinstance(record, dict) else None
        if not isinstance(cell, dict) or "condition" not in cell or not _replayable(record, retry_errors):
            continue
        if cell.get("history", History.MODEL.value) != history.value:
            continue
        config = config_key(record.get("litellm_model"), (record.get("request") or {}).get("params"))
        if not record.get("error"):
            outputs.setdefault(config, []).append(int((record.get("usage") or {}).get("completion_tokens") or 0))
        done.setdefault(config, set()).add(
            (
                cell["model"],
                cell["condition"],
                cell["session"],
                int(cell["turn"]),
                int(cell["epoch"]),
                int(cell.get("retry", 0)),
            )
        )
    return StoreIndex(done, outputs)


def config_key(litellm_model: Any, params: Any) -> str:
    """What a stored answer must share with the entry to be replayed for it: model id and params (the
    tools an agent step offered are the request's, not the model's configuration)."""
    if isinstance(params, dict):
        params = {k: v for k, v in params.items() if k != "tools"}
    return json.dumps([litellm_model, params], sort_keys=True, default=str)


def entry_config(entry: ModelEntry) -> str:
    return config_key(entry.litellm_model, scrub(entry.call_params()))


def _replayable(record: Mapping[str, Any], retry_errors: bool) -> bool:
    """As the gateway decides: an answer, or a failure the request determines unless retried."""
    error = record.get("error")
    return not error or (not retry_errors and error.get("type") not in ENDPOINT_FAILURES)


def plan_run(
    entry: ModelEntry,
    condition: str,
    turns: Sequence[Mapping[str, Any]],
    epochs: int,
    answered: Iterable[Cell],
    sessions: int | None = None,
    retries: Mapping[int, Mapping[str, int]] | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    prompts: PromptCount | None = None,
    outputs: Sequence[int] = (),
) -> RunPlan:
    """The calls and cost bound of evaluating `entry` under `condition` (a sample of `sessions`);
    `retries`: by epoch and turn id, the retry each cell asks for (evaluate.retry_counts). A cell
    with a stored step counts as answered (a turn cut short mid-loop asks for its later steps).
    `prompts`: each turn's prompt tokens (plan_prompts.prompt_counts), for the estimate; `outputs`:
    the output tokens of the model's stored answers."""
    answered = set(answered)
    retries = retries or {}
    cells = [
        (entry.key, condition, t["session_id"], int(t["turn_index"]), e, retries.get(e, {}).get(turn_id(t), 0))
        for t in sample_turns(turns, sessions)
        for e in range(1, epochs + 1)
    ]
    calls = sum(1 for c in cells if c not in answered)
    per_call = call_cost_bound(entry)
    # A cell under a condition with tools is up to a step budget of calls (each step's prompt is
    # bounded as one call's: the loop's observations are clipped previews).
    steps = max_steps if get_condition(condition).tools else 1
    bound = None if per_call is None and calls else (per_call or 0.0) * calls * steps
    asked = [f"{session}#{turn}" for _, _, session, turn, *_ in (c for c in cells if c not in answered)]
    estimate = None if prompts is None else estimate_cost(entry, prompts, asked, outputs)
    return RunPlan(entry.key, condition, len(cells), calls, None if bound is None else _cents_up(bound), estimate)


def estimate_cost(entry: ModelEntry, prompts: PromptCount, asked: Sequence[str], outputs: Sequence[int]) -> Estimate:
    """The expected cost of the calls of the turns `asked` (module docstring)."""
    if outputs:
        per_call, source = int(statistics.median(outputs)), f"the median of its {len(outputs):,} stored answers"
    else:
        budget = entry.reasoning.budget_tokens or 0
        per_call = budget + TYPICAL_ANSWER_TOKENS
        source = f"reasoning budget {budget:,} + a typical answer" if budget else "a typical answer"
    total = sum(prompts.tokens[t] for t in asked)
    return Estimate(total, per_call, source, entry.cost_usd(total, per_call * len(asked)), prompts.left_out)


def _cents_up(usd: float) -> float:
    return math.ceil(round(usd * 100, 6)) / 100


def plan_unbuilt(entry: ModelEntry, condition: str, epochs: int) -> RunPlan:
    """The plan on a home without a benchmark yet: every turn the benchmark will have is a call."""
    from memsql_assets.lib.benchmark.invariants import TOTAL_TURNS

    cells = TOTAL_TURNS * epochs
    per_call = call_cost_bound(entry)
    return RunPlan(entry.key, condition, cells, cells, None if per_call is None else _cents_up(per_call * cells))


def plan_partition(
    home: Path,
    entry: ModelEntry,
    condition: str,
    sessions: int | None = None,
    epochs: int | None = None,
    retry_errors: bool = False,
    answered: StoreIndex | None = None,
    only_failed: bool = False,
    benchmark: str = PAPER_BENCHMARK,
    max_steps: int = DEFAULT_MAX_STEPS,
    history: History = History.MODEL,
) -> RunPlan:
    """What evaluating `entry` under `condition` on `home` would ask now (epochs None: as the run
    would choose them: the partition's last full evaluation's, or one for a sample). `answered`:
    answered_by_config of the home's store, when the caller plans several partitions."""
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.harness.evaluate import retry_counts
    from memsql_assets.lib.harness.results import full_epochs
    from memsql_assets.lib.harness.schedule import history_reach
    from memsql_assets.lib.harness.settings import resolve_wave_size
    from memsql_assets.lib.paths import benchmark_dir, turns_file
    from memsql_assets.lib.vocabulary import context_mode

    if epochs is None:
        epochs = 1 if sessions is not None else full_epochs(home, entry.key, condition, benchmark, history)
    if not turns_file(home, benchmark).exists():
        return plan_unbuilt(entry, condition, epochs)
    if answered is None:
        answered = answered_by_config(requests_dir(home), retry_errors, history)
    config = entry_config(entry)
    cells = answered.cells.get(config, set())
    retries = retry_counts(home, entry.key, condition, only_failed, benchmark, history) if sessions is None else {}
    turns = read_turns(benchmark_dir(home, benchmark))
    prompts = None
    if entry.kind != "builtin":
        chosen = sample_turns(turns, sessions)
        wave_size = resolve_wave_size(None, entry.max_concurrency, history_reach(chosen))
        mode = context_mode(condition, benchmark)
        prompts = prompt_counts(home, entry.litellm_model, get_condition(condition), chosen, mode, wave_size)
    outputs = answered.outputs.get(config, [])
    return plan_run(entry, condition, turns, epochs, cells, sessions, retries, max_steps, prompts, outputs)
