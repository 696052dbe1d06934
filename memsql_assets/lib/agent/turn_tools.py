"""The tools of one agent turn, and one call of them as a typed ToolUse.

Besides the exploration tools and `submit_sql` (tool_specs.py), a turn may offer:
- the mined composite tools (trajectories/composites.py): one call runs its tools in order, each
  with its own arguments, as one step;
- with a retrieved trajectory, `load_trajectory_phase`: the trajectory's segment of one phase on
  demand. A segment is also loaded when the agent's own calls enter its phase, by the phase rules
  (`entered`), so the execute and validate segments arrive when they are of use.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from memsql_assets.lib.agent.tool_specs import (
    LOAD_PHASE_TOOL,
    SUBMIT_TOOL,
    TOOL_SPECS,
    ArgumentError,
    ToolSpec,
    check_arguments,
    composite_spec,
    parse_arguments,
    phase_load_spec,
)
from memsql_assets.lib.sql.execute import TIMEOUT_ERROR
from memsql_assets.lib.sql.syntax import sql_tables
from memsql_assets.lib.trajectories.composites import CompositeTool
from memsql_assets.lib.trajectories.phases import PHASES, RuleSet, default_rules
from memsql_assets.lib.trajectories.tools import DbTools
from memsql_assets.lib.trajectories.trace import Call, clip

SQL_REFUSED_ERROR = "not authorized"  # sql/execute.py's words for a statement the sandbox refuses
LOADED_PHASES = ("execute", "validate")  # the explore segment is in the first message
# One rendered call of a trajectory's markdown (trajectories/markdown.py): `tool` `{json args}`
_CALL_RE = re.compile(r"`([A-Za-z_]\w*)` `(\{.*?\})`")
_SQL_BLOCK_RE = re.compile(r"```sql\n(.*?)```", re.S)


class CallOutcome(StrEnum):
    OK = "ok"
    SUBMITTED = "submitted"
    TOOL_ERROR = "tool_error"
    UNKNOWN_TOOL = "unknown_tool"
    INVALID_JSON = "invalid_json"
    INVALID_ARGUMENTS = "invalid_arguments"
    SQL_REFUSED = "sql_refused"
    SQL_TIMEOUT = "sql_timeout"


@dataclass(frozen=True)
class ToolUse:
    call_id: str
    tool: str
    arguments: dict[str, Any] | None  # None where they did not parse or failed the schema
    observation: str  # preview, at most trace.OBSERVATION_CHARS
    error: str | None
    outcome: CallOutcome
    phase: str | None  # explore / execute / validate by the phase rules; None: submit, loads, bad calls
    calls: tuple[str, ...] = ()  # the tools a composite ran

    @property
    def n_calls(self) -> int:
        return len(self.calls) or 1

    def as_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["outcome"] = self.outcome.value
        d["calls"] = list(self.calls)
        return d


def markdown_segments(markdown: str) -> dict[str, str]:
    """A whole trajectory's markdown (trajectories/markdown.render_markdown) by phase: the title block
    and every "## Explore" segment under explore (what goes into the first message), "## Execute"
    segments and the final SQL under execute, "## Validate" segments under validate."""
    parts: dict[str, list[str]] = {}
    phase = "explore"
    for line in markdown.splitlines():
        if line.startswith("## "):
            word = line[3:].split(" ", 1)[0].lower()
            phase = "execute" if word == "final" else word if word in PHASES else phase
        parts.setdefault(phase, []).append(line)
    return {p: "\n".join(lines).strip() + "\n" for p, lines in parts.items()}


def trajectory_tables(segments: Mapping[str, str]) -> set[str]:
    """The tables (lowercased) a trajectory's segments name: its calls' `table` arguments and the tables
    its SQL reads (the final SQL's included)."""
    out: set[str] = set()
    for text in segments.values():
        for call in _CALL_RE.finditer(text):
            try:
                args = json.loads(call.group(2))
            except ValueError:
                continue
            out |= {str(args["table"]).lower()} if "table" in args else set()
            out |= {t.lower() for t in sql_tables(str(args.get("sql", "")))}
        out |= {t.lower() for block in _SQL_BLOCK_RE.findall(text) for t in sql_tables(block)}
    return out


def _sql_outcome(error: str) -> CallOutcome:
    if error.startswith(TIMEOUT_ERROR):
        return CallOutcome.SQL_TIMEOUT
    if error.startswith(SQL_REFUSED_ERROR):
        return CallOutcome.SQL_REFUSED
    return CallOutcome.TOOL_ERROR


@dataclass
class TurnTools:
    db: DbTools
    rules: RuleSet = field(default_factory=default_rules)
    composites: Sequence[CompositeTool] = ()
    trajectory: Mapping[str, str] = field(default_factory=dict)  # phase -> that segment's markdown
    loaded: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._composites = {c.name: c for c in self.composites}
        self._phases = tuple(p for p in LOADED_PHASES if p in self.trajectory)
        self.specs: dict[str, ToolSpec] = {
            **TOOL_SPECS,
            **{c.name: composite_spec(c.name, c.steps) for c in self.composites},
        }
        if self._phases:
            self.specs[LOAD_PHASE_TOOL] = phase_load_spec(self._phases)

    def openai(self) -> list[dict[str, Any]]:
        return [s.openai() for s in self.specs.values()]

    def run(self, call: Mapping[str, str]) -> tuple[ToolUse, str]:
        """One call as a typed ToolUse, and the text the model gets back (never raises for what it sent)."""
        name, raw, call_id = call.get("name", ""), call.get("arguments", ""), call.get("id", "")

        def use(
            outcome: CallOutcome,
            args: dict[str, Any] | None,
            obs: str = "",
            err: str | None = None,
            phase: str | None = None,
            calls: tuple[str, ...] = (),
            content: str | None = None,
        ) -> tuple[ToolUse, str]:
            done = ToolUse(call_id, name, args, clip(obs), err and clip(err), outcome, phase, calls)
            return done, content or (f"error ({outcome.value}): {err}" if err else obs)

        spec = self.specs.get(name)
        if spec is None:
            return use(
                CallOutcome.UNKNOWN_TOOL, None, err=f"unknown tool '{name}'; tools: {', '.join(self.specs)}"
            )
        try:
            args = parse_arguments(spec, raw)
        except ArgumentError as exc:
            return use(CallOutcome(exc.kind), None, err=str(exc))
        if name == SUBMIT_TOOL:
            return use(CallOutcome.SUBMITTED, args, obs="submitted")
        if name == LOAD_PHASE_TOOL:
            self.loaded.add(args["phase"])
            doc = self.trajectory[args["phase"]]
            return use(CallOutcome.OK, args, obs=f"loaded the {args['phase']} segment", content=doc)
        if name in self._composites:
            return self._composite(self._composites[name], args, use)
        done = self.db.call(name, args)
        phase = self.rules.classify_call(name, args)
        if done.error:
            return use(_sql_outcome(done.error), args, err=done.error, phase=phase)
        return use(CallOutcome.OK, args, obs=done.observation, phase=phase)

    def _composite(self, comp: CompositeTool, args: dict[str, Any], use: Any) -> tuple[ToolUse, str]:
        try:
            each = [check_arguments(TOOL_SPECS[t], a) for t, a in zip(comp.steps, args["calls"], strict=True)]
        except ArgumentError as exc:
            return use(CallOutcome.INVALID_ARGUMENTS, None, err=f"{comp.name}: {exc}")
        done: list[Call] = [self.db.call(t, a) for t, a in zip(comp.steps, each, strict=True)]
        text = " | ".join(f"{c.tool}: {c.observation or c.error}" for c in done)
        failed = next((c for c in done if c.error), None)
        outcome = _sql_outcome(failed.error) if failed and failed.error else CallOutcome.OK
        err = f"{failed.tool}: {failed.error}" if failed else None
        return use(outcome, args, obs=text, err=err, phase=comp.phase, calls=comp.steps, content=text)

    def entered(self, uses: Sequence[ToolUse]) -> list[dict[str, str]]:
        """{"phase", "content"} of each trajectory segment whose phase these calls entered, each loaded once."""
        out = []
        for phase in dict.fromkeys(u.phase for u in uses if u.phase in self._phases):
            if phase not in self.loaded:
                self.loaded.add(phase)
                doc = self.trajectory[phase]
                out.append({"phase": phase, "content": f"Reference trajectory, its {phase} steps:\n{doc}"})
        return out
