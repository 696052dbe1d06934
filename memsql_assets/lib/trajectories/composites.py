"""Composite tools: frequent same-phase tool subsequences merged into one action (AgentSM §3.3).

Mining. Each trace is cut into *runs*: maximal stretches of consecutive tool calls (composite
steps expanded into their calls) that share one phase; a call that returned an error ends a run
and is not part of it — a composite should be a routine that works, not a recovery. Every
contiguous tool subsequence of a run with length 2..max_len is a candidate; its support is the
number of traces that contain it at least once.

θ (`theta`): a float in (0, 1] is a *fraction* of the traces (support ≥ ⌈θ·n⌉); an int ≥ 1 is an
absolute trace *count*. So θ = 0.2 means "in at least 20 % of trajectories", θ = 5 means "in at
least 5 trajectories". Names are deterministic: `<phase>_<short tool names>`, e.g.
`explore_ddl_sample` for get_ddl + sample_rows (the paper's get_ext + get_ddl ⇒ local_exploration).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memsql_assets.lib.trajectories.phases import PHASES, RuleSet, default_rules
from memsql_assets.lib.trajectories.trace import Trace

SHORT_NAMES = {
    "list_tables": "tables",
    "get_ddl": "ddl",
    "sample_rows": "sample",
    "distinct_values": "distinct",
    "column_stats": "stats",
    "find_join_path": "joinpath",
    "execute_sql": "execute",
    "validate_result": "validate",
}


@dataclass(frozen=True)
class CompositeTool:
    name: str
    phase: str
    steps: tuple[str, ...]
    support: float  # fraction of mined traces containing the subsequence
    count: int  # number of mined traces containing it

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "phase": self.phase,
            "steps": list(self.steps),
            "support": round(self.support, 4),
            "count": self.count,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CompositeTool:
        return cls(str(d["name"]), str(d["phase"]), tuple(d["steps"]), float(d["support"]), int(d["count"]))


def composite_name(phase: str, tools: Sequence[str]) -> str:
    return phase + "_" + "_".join(SHORT_NAMES.get(t, t) for t in tools)


def phase_runs(trace: Trace, rules: RuleSet) -> list[tuple[str, list[str]]]:
    runs: list[tuple[str, list[str]]] = []
    current: tuple[str, list[str]] | None = None
    for step in trace.steps:
        for call in step.primitive_calls():
            if call.error:
                current = None
                continue
            phase = rules.classify(call)
            if current is None or current[0] != phase:
                current = (phase, [])
                runs.append(current)
            current[1].append(call.tool)
    return runs


def support_threshold(theta: float | int, n_traces: int) -> int:
    if isinstance(theta, bool):
        raise ValueError("theta must be a number, not a bool")
    if isinstance(theta, int):
        if theta < 1:
            raise ValueError(f"theta as a count must be ≥ 1, got {theta}")
        return theta
    if not 0 < theta <= 1:
        raise ValueError(f"theta as a fraction must be in (0, 1], got {theta}")
    return max(1, math.ceil(theta * n_traces - 1e-9))


def mine_composites(
    traces: Sequence[Trace],
    theta: float | int,
    max_len: int = 3,
    rules: RuleSet | None = None,
) -> list[CompositeTool]:
    """Composite tools with support ≥ θ, sorted by support (desc), length (desc), name."""
    if max_len < 2:
        raise ValueError(f"max_len must be ≥ 2, got {max_len}")
    rules = rules or default_rules()
    need = support_threshold(theta, len(traces))
    counts: Counter[tuple[str, tuple[str, ...]]] = Counter()
    for trace in traces:
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for phase, tools in phase_runs(trace, rules):
            for length in range(2, min(max_len, len(tools)) + 1):
                for i in range(len(tools) - length + 1):
                    seen.add((phase, tuple(tools[i : i + length])))
        counts.update(seen)
    n = len(traces) or 1
    found = [
        CompositeTool(composite_name(phase, tools), phase, tools, c / n, c)
        for (phase, tools), c in counts.items()
        if c >= need
    ]
    return sorted(found, key=lambda t: (-t.count, -len(t.steps), t.name))


@dataclass(frozen=True)
class TrajectoryStats:
    trajectories: int
    mean_steps: float
    median_steps: float
    tool_calls_per_step: float
    phase_steps: dict[str, int] = field(default_factory=dict)

    @property
    def phase_share(self) -> dict[str, float]:
        total = sum(self.phase_steps.values()) or 1
        return {p: self.phase_steps.get(p, 0) / total for p in PHASES}

    @property
    def exploration_execution(self) -> str:
        """Paper's Figure 5 split: exploration vs. execution + validation, in % of steps."""
        explore = round(100 * self.phase_share["explore"])
        return f"{explore}:{100 - explore}"

    def as_json(self) -> dict[str, Any]:
        return {
            "trajectories": self.trajectories,
            "mean_steps": round(self.mean_steps, 3),
            "median_steps": self.median_steps,
            "tool_calls_per_step": round(self.tool_calls_per_step, 3),
            "phase_steps": self.phase_steps,
            "phase_share": {p: round(v, 4) for p, v in self.phase_share.items()},
            "exploration_execution": self.exploration_execution,
        }


def trajectory_stats(traces: Sequence[Trace], rules: RuleSet | None = None) -> TrajectoryStats:
    rules = rules or default_rules()
    lengths = [len(t.steps) for t in traces]
    steps = sum(lengths)
    phase_steps = dict.fromkeys(PHASES, 0)
    for t in traces:
        for s in t.steps:
            phase_steps[rules.classify(s)] += 1
    return TrajectoryStats(
        trajectories=len(traces),
        mean_steps=statistics.fmean(lengths) if lengths else 0.0,
        median_steps=float(statistics.median(lengths)) if lengths else 0.0,
        tool_calls_per_step=(sum(t.n_calls for t in traces) / steps) if steps else 0.0,
        phase_steps=phase_steps,
    )


def compare_stats(without: TrajectoryStats, with_: TrajectoryStats) -> dict[str, Any]:
    saved = without.mean_steps - with_.mean_steps
    return {
        "without_composites": without.as_json(),
        "with_composites": with_.as_json(),
        "mean_steps_saved": round(saved, 3),
        "steps_saved_pct": round(100 * saved / without.mean_steps, 2) if without.mean_steps else 0.0,
        "median_steps_saved": without.median_steps - with_.median_steps,
    }
