"""The trace data model: steps an exploration agent took, as stored and rendered.

A step is one agent action. A plain step calls one tool; a composite step (a mined composite
tool) runs several tool calls in one action and keeps each call, so tool calls per step and the
phase of every call stay measurable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

OBSERVATION_CHARS = 200


def clip(text: str, limit: int = OBSERVATION_CHARS) -> str:
    """One line, at most `limit` characters (an ellipsis marks a cut)."""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


@dataclass(frozen=True)
class Call:
    tool: str
    args: dict[str, Any]
    observation: str
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": self.args, "observation": self.observation, "error": self.error}


@dataclass(frozen=True)
class Step:
    tool: str
    args: dict[str, Any]
    observation: str
    error: str | None = None
    calls: tuple[Call, ...] = field(default=())  # non-empty only for a composite step

    @property
    def n_calls(self) -> int:
        return len(self.calls) if self.calls else 1

    def primitive_calls(self) -> tuple[Call, ...]:
        return self.calls or (Call(self.tool, self.args, self.observation, self.error),)

    def as_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"tool": self.tool, "args": self.args, "observation": self.observation}
        d["error"] = self.error
        if self.calls:
            d["calls"] = [c.as_json() for c in self.calls]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Step:
        return cls(
            tool=str(d["tool"]),
            args=dict(d.get("args") or {}),
            observation=str(d.get("observation", "")),
            error=d.get("error"),
            calls=tuple(
                Call(str(c["tool"]), dict(c.get("args") or {}), str(c.get("observation", "")), c.get("error"))
                for c in d.get("calls", ())
            ),
        )


@dataclass(frozen=True)
class Trace:
    question_id: str
    db: str
    question: str
    steps: tuple[Step, ...]
    final_sql: str | None
    final_sql_ok: bool
    explorer: str = "deterministic"

    @property
    def n_calls(self) -> int:
        return sum(s.n_calls for s in self.steps)

    def as_json(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "db": self.db,
            "question": self.question,
            "explorer": self.explorer,
            "final_sql": self.final_sql,
            "final_sql_ok": self.final_sql_ok,
            "steps": [s.as_json() for s in self.steps],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Trace:
        return cls(
            question_id=str(d["question_id"]),
            db=str(d["db"]),
            question=str(d["question"]),
            steps=tuple(Step.from_json(s) for s in d["steps"]),
            final_sql=d.get("final_sql"),
            final_sql_ok=bool(d.get("final_sql_ok")),
            explorer=str(d.get("explorer", "deterministic")),
        )


def format_args(args: dict[str, Any]) -> str:
    """Deterministic one-line rendering of tool arguments (sorted keys, whitespace collapsed)."""
    return " ".join(json.dumps(args, sort_keys=True, ensure_ascii=False).split())
