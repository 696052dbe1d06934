"""Each turn's prompt as a run under a condition will assemble it, before the model is asked: what
plan.py's estimate counts with the model's tokenizer.

The prompt of a turn under a condition with memory carries blocks built from the earlier turns'
answers, which are not known before the run. Each earlier turn stands in with its ground truth: its
SQL the turn's `gt_sql`, its result the summary of the ground truth's result (summarize_result over
the shared result cache, which the benchmark's checks filled): the payload of a model that answered
it correctly. Given those stand-ins, the blocks of the built-in memories are assembled as the memory
would (agent/prompts.build_messages):

- `none`: none; the prompt is exact.
- `window` (B, B_wm5, H, T): the session's last N turns (`all`: every earlier one), with the
  Resolved block the paper's rule resolves from them (annotated context mode).
- `summary`, extractive (S): the kept turns (summary.extract), and the Resolved block from them.
- `episodic` (C, D): the window as above; as the similar past turns, the k most recent turns the
  session can see (its own earlier turns, then the turns of its source's earlier waves of W, W the
  model's max_concurrency, the default `--wave-size`): the number of similar turns is exact, their
  content a stand-in of the source's real payloads for the k nearest, which only Chroma's search
  over embeddings would name (scope `analyst`: the count too is of every session's turns, not only
  its analyst's); D's semantic hints: the source's longest `semantic_top_k`.
  In observed mode the memory's facts block from those payloads.
- `trajectory` (E, E_prompt): the window; the retrieved trajectory is not counted (a lookup by
  embedding in the trajectory store).
- a model-written summary, `mem0` and plug-ins: no memory block is counted.

Where a block is not counted the estimate says so (`PromptCount.left_out`): it is low by that block.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsql_assets.lib.agent.prompts import PromptParts, build_messages
from memsql_assets.lib.benchmark.store import turn_id
from memsql_assets.lib.conditions import Condition
from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.memory.episodic import DEFAULT_TOP_K
from memsql_assets.lib.memory.facts import facts_block
from memsql_assets.lib.memory.protocol import PromptBlock
from memsql_assets.lib.memory.resolution import Payload, resolve_context, resolve_from
from memsql_assets.lib.memory.semantic import SEMANTIC_HINTS
from memsql_assets.lib.memory.summary import SUMMARY_HEADER, SUMMARY_STORE, extract, render_turns

Turn = Mapping[str, Any]
# What the estimate leaves out of the prompt under each built-in implementation (module docstring).
NOT_COUNTED = {"trajectory": "the retrieved trajectory", "mem0": "mem0's retrieved turns"}


@dataclass(frozen=True)
class PromptCount:
    tokens: dict[str, int]  # by turn id
    left_out: str | None  # the memory's blocks the count leaves out; None: every block is counted


@dataclass(frozen=True)
class Retrieved:
    """A turn's stand-in retrieval: what prompts.PromptParts takes of a memory."""

    working: Sequence[Payload] = ()
    similar: Sequence[Payload] = ()
    hints: Sequence[str] = ()
    blocks: Sequence[PromptBlock] = ()
    resolved: Mapping[str, Any] | None = None


def left_out(condition: Condition) -> str | None:
    """The blocks of `condition`'s memory that the count cannot assemble (module docstring)."""
    name, params = condition.implementation, condition.params
    if name == "summary" and params.get("model"):
        return "the model-written summary"
    if name in NOT_COUNTED:
        return NOT_COUNTED[name]
    if name not in {"none", "window", "summary", "episodic"}:
        return f"the blocks of the memory {name!r}"
    return None


def stand_in(turn: Turn, result_summary: str, mode: ContextMode) -> Payload:
    """The payload a correct answer to `turn` would leave in memory (agent.Agent.persist)."""
    payload: Payload = {
        "session_id": turn["session_id"],
        "turn_index": turn["turn_index"],
        "source": turn["source"],
        "question": turn["question"],
        "sql": turn["gt_sql"],
        "result_summary": result_summary,
    }
    if mode == ContextMode.ANNOTATED:
        payload["state_updates"] = dict(turn["state_updates"])
    return payload


def ground_truth_summaries(home: Path, turns: Sequence[Turn]) -> dict[str, str]:
    """Each turn's ground-truth result summary, from the shared result cache (run on a miss)."""
    from memsql_assets.lib.paths import source_db_path, sql_cache_path
    from memsql_assets.lib.sql.result_cache import RESULTS, run_cached
    from memsql_assets.lib.sql.sandbox import open_readonly
    from memsql_assets.lib.sql.summary import summarize_result
    from memsql_assets.lib.vocabulary import SOURCE_BY_PREFIX

    out: dict[str, str] = {}
    for prefix in sorted({t["source"] for t in turns}):
        path = source_db_path(home, SOURCE_BY_PREFIX[prefix])
        memo = RESULTS.for_database(path, store=sql_cache_path(home))
        conn = open_readonly(path)
        try:
            for t in (t for t in turns if t["source"] == prefix):
                out[turn_id(t)] = summarize_result(run_cached(conn, t["gt_sql"], memo))
        finally:
            conn.close()
    return out


def retrievals(
    condition: Condition, turns: Sequence[Turn], payloads: Mapping[str, Payload], mode: ContextMode, wave_size: int
) -> Iterator[tuple[Turn, Retrieved]]:
    """Each turn with its stand-in retrieval under `condition`'s memory, session by session, in waves."""
    from memsql_assets.lib.harness.schedule import waves

    sessions: dict[str, list[Turn]] = defaultdict(list)
    for t in sorted(turns, key=lambda t: (t["session_id"], int(t["turn_index"]))):
        sessions[t["session_id"]].append(t)
    order = sorted(sessions)
    chains = waves(order, wave_size, {s: sessions[s][0]["source"] for s in order})
    retrieve = retriever(condition, mode)
    for chain in chains.values():
        published: list[Payload] = []  # the source's earlier waves, in (session, turn) order
        for wave in chain:
            for session in wave:
                earlier: list[Payload] = []
                for t in sessions[session]:
                    yield t, retrieve(t, earlier, published)
                    earlier.append(payloads[turn_id(t)])
            published += [payloads[turn_id(t)] for s in wave for t in sessions[s]]


Retriever = Callable[[Turn, list[Payload], list[Payload]], Retrieved]


def retriever(condition: Condition, mode: ContextMode) -> Retriever:
    """`condition`'s memory as a function of the turn, its session's earlier payloads and the
    source's published ones (module docstring)."""
    name, params = condition.implementation, condition.params
    annotated = mode == ContextMode.ANNOTATED

    def window(turn: Turn, earlier: list[Payload], published: list[Payload]) -> Retrieved:
        turns = params.get("turns", params.get("window"))
        recent = list(reversed(earlier))[: None if turns == "all" else int(turns)]
        resolved = resolve_context(turn["referenced_context_keys"], recent, []).values if annotated else None
        return Retrieved(working=recent, resolved=resolved)

    def summary(turn: Turn, earlier: list[Payload], published: list[Payload]) -> Retrieved:
        kept: list[Payload] = []
        for p in earlier:
            kept = extract(kept, p, int(params.get("max_turns", 3)), mode)
        if not kept:
            return Retrieved()
        keys = turn["referenced_context_keys"]
        resolved = resolve_from(keys, [(SUMMARY_STORE, reversed(kept))]).values if annotated else None
        return Retrieved(blocks=[PromptBlock(SUMMARY_HEADER, render_turns(kept))], resolved=resolved)

    def episodic(turn: Turn, earlier: list[Payload], published: list[Payload]) -> Retrieved:
        recent = window(turn, earlier, published).working
        k = int(params.get("top_k") or DEFAULT_TOP_K)  # the run setting episodic_k's default
        similar = [*reversed(earlier), *reversed(published)][:k]
        hints = sorted((h.text for h in SEMANTIC_HINTS if h.source == turn["source"]), key=len, reverse=True)
        hints = hints[: int(params.get("semantic_top_k", 0))]
        if not annotated:
            facts = facts_block([*recent, *similar])
            return Retrieved(recent, similar, hints, [facts] if facts else ())
        resolved = resolve_context(turn["referenced_context_keys"], recent, similar).values
        return Retrieved(recent, similar, hints, resolved=resolved)

    def nothing(turn: Turn, earlier: list[Payload], published: list[Payload]) -> Retrieved:
        return Retrieved()

    if name == "summary" and not params.get("model"):
        return summary
    if name in {"window", "trajectory"}:
        return window
    return episodic if name == "episodic" else nothing


def stand_in_messages(
    home: Path, condition: Condition, turns: Sequence[Turn], mode: ContextMode, wave_size: int
) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """Each turn's id and chat messages under `condition`, earlier turns standing in with their ground
    truths (module docstring)."""
    from memsql_assets.lib.paths import source_db_path
    from memsql_assets.lib.sql.schema import schema_text
    from memsql_assets.lib.vocabulary import SOURCE_BY_PREFIX

    shown = condition.schema_in_prompt
    schemas = {p: schema_text(source_db_path(home, name)) if shown else "" for p, name in SOURCE_BY_PREFIX.items()}
    pairs: Iterable[tuple[Turn, Retrieved]] = ((t, Retrieved()) for t in turns)
    if condition.implementation != "none":  # the stand-ins run the ground truths (from the cache)
        summaries = ground_truth_summaries(home, turns)
        payloads = {turn_id(t): stand_in(t, summaries[turn_id(t)], mode) for t in turns}
        pairs = retrievals(condition, turns, payloads, mode, wave_size)
    for t, got in pairs:
        parts = PromptParts(
            t["source"], schemas[t["source"]], t["question"], t["output_requirements"], got.hints,
            got.similar, got.working, None, got.resolved or None, tuple(b.render() for b in got.blocks),
            observed=mode == ContextMode.OBSERVED,
        )  # fmt: skip
        yield turn_id(t), build_messages(parts)


def prompt_counts(
    home: Path,
    litellm_model: str,
    condition: Condition,
    turns: Sequence[Turn],
    mode: ContextMode,
    wave_size: int,
) -> PromptCount:
    """Each turn's prompt tokens under `condition` by the model's tokenizer (module docstring)."""
    from memsql_assets.lib.models.replies import count_prompt_tokens

    messages = stand_in_messages(home, condition, turns, mode, wave_size)
    return PromptCount({t: count_prompt_tokens(litellm_model, m) for t, m in messages}, left_out(condition))
