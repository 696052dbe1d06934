"""The paper's prompts, verbatim (Appendix A.1; the per-source guidance of A.2-A.4 is in
lib/sources/guidance.py, which the synthetic questions read too), and the per-condition prompt
composition.

The extracted paper text lost the spaces around code-formatted words ("inCustomers.CompanyName");
they are restored here and nothing else is changed. Curly quotes in A.1 are the paper's.
See docs/prompt_composition.md for the composition table (the paper's lost Table 11).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memsql_assets.lib.sources.guidance import guidance_lines

SYSTEM_PROMPT = (
    "You are an expert SQLite analyst. Generate one valid SQLite query for the user’s question. "
    "Return SQL only. No markdown, comments, or explanation. Use only the provided schema and context. "
    "If resolved structured context is provided, those values are authoritative and must be used exactly. "
    "Match the requested result shape exactly. If the question asks for a total, return a single aggregate "
    "value only, not supporting columns, not grouped rows, and not explanatory text."
)

# The contract with the recall-probe model (memsql_assets/lib/reference/builtins.py): this header line,
# then one "- key: <JSON value>" line per resolved key.
RESOLVED_HEADER = "Resolved context:"
SCHEMA_HEADER = "Schema:"
OUTPUT_REQUIREMENTS_HEADER = "Output requirements:"
RECENT_HEADER = "Recent conversation:"
SIMILAR_HEADER = "Similar past turns:"
QUESTION_PREFIX = "Question: "
# The schema block of a prompt (build_messages): a block starts the text or follows a blank line.
_SCHEMA_BLOCK_RE = re.compile(rf"(?:\A|\n\n){re.escape(SCHEMA_HEADER)}\n")


@dataclass(frozen=True)
class PromptParts:
    """Everything a condition may put in front of the question; empty parts are left out."""

    source: str
    schema: str  # empty: the condition leaves the guidance and schema out (schema_in_prompt: false)
    question: str
    output_requirements: str
    semantic_hints: Sequence[str] = ()
    episodic: Sequence[Mapping[str, Any]] = ()
    working: Sequence[Mapping[str, Any]] = ()
    trajectory: str | None = None
    resolved: Mapping[str, Any] | None = None
    blocks: Sequence[str] = ()  # a memory's other blocks, each its header line and text (a summary)
    observed: bool = False  # observed context mode: the guidance names no annotation key (guidance.py)

    def __post_init__(self) -> None:
        if not self.output_requirements.strip():
            raise ValueError(
                "the turn has no output_requirements: every benchmark turn carries one "
                "(a turns.jsonl without them predates them: rematerialize the `sessions` asset)"
            )


def _turn_lines(payload: Mapping[str, Any]) -> str:
    return (
        f"Q: {payload.get('question', '')}\n"
        f"SQL: {payload.get('sql') or '(none)'}\n"
        f"Result: {payload.get('result_summary') or '(none)'}"
    )


def render_resolved(resolved: Mapping[str, Any]) -> str:
    lines = [RESOLVED_HEADER]
    lines += [f"- {key}: {json.dumps(value, ensure_ascii=False)}" for key, value in resolved.items()]
    return "\n".join(lines)


def memory_blocks(parts: PromptParts) -> list[str]:
    """The blocks a condition's memory contributes, in prompt order: hints, trajectory, the memory's
    own blocks, similar past turns, recent conversation, Resolved (empty under A)."""
    blocks = []
    if parts.semantic_hints:
        blocks.append("Semantic hints:\n" + "\n".join(f"- {h}" for h in parts.semantic_hints))
    if parts.trajectory:
        blocks.append("Reference trajectory from a similar solved question:\n" + parts.trajectory)
    blocks += [b for b in parts.blocks if b]
    if parts.episodic:
        blocks.append(f"{SIMILAR_HEADER}\n" + "\n\n".join(_turn_lines(p) for p in parts.episodic))
    if parts.working:
        # Working memory arrives most recent first; show it in conversation order.
        history = "\n\n".join(_turn_lines(p) for p in reversed(list(parts.working)))
        blocks.append(f"{RECENT_HEADER}\n{history}")
    if parts.resolved:
        blocks.append(render_resolved(parts.resolved))
    return blocks


def build_messages(parts: PromptParts) -> list[dict[str, str]]:
    """System prompt (A.1) + one user message: guidance, schema, the memory's blocks (`memory_blocks`),
    question, output requirements (the same text for every model and condition, SPEC §2 / paper §5.6).
    Guidance and schema only where the prompt has a schema."""
    guidance = "\n".join(f"- {line}" for line in guidance_lines(parts.source, parts.observed))
    blocks = [f"Source guidance:\n{guidance}", f"{SCHEMA_HEADER}\n{parts.schema}"] if parts.schema else []
    blocks += memory_blocks(parts)
    blocks.append(f"{QUESTION_PREFIX}{parts.question}")
    blocks.append(f"{OUTPUT_REQUIREMENTS_HEADER}\n{parts.output_requirements}")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n\n".join(blocks)}]


def schema_in_prompt(texts: Sequence[str]) -> bool:
    """Whether one of the prompt's texts has the schema block."""
    return any(_SCHEMA_BLOCK_RE.search(text) for text in texts)
