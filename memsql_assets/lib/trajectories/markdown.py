"""Trajectories rewritten as markdown, one header per contiguous phase segment.

Structure matters (paper Table 1: raw logs help nothing, markdown doubles accuracy), and per-phase
documents let an agent load only the segment it needs. Headers are deterministic by default
("## Explore (steps 1–4)"); pass `header=` (e.g. built on a model call) for LLM headers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memsql_assets.lib.trajectories.phases import PHASES, RuleSet, default_rules
from memsql_assets.lib.trajectories.trace import Call, Step, Trace, format_args

Header = Callable[[str, int, int, Sequence[Step]], str]  # (phase, first, last, steps) -> header text


@dataclass(frozen=True)
class Segment:
    phase: str
    first: int  # 1-based step numbers, inclusive
    last: int
    steps: tuple[Step, ...]


def segments(trace: Trace, rules: RuleSet | None = None) -> list[Segment]:
    rules = rules or default_rules()
    out: list[Segment] = []
    for i, step in enumerate(trace.steps, 1):
        phase = rules.classify(step)
        if out and out[-1].phase == phase:
            prev = out[-1]
            out[-1] = Segment(phase, prev.first, i, prev.steps + (step,))
        else:
            out.append(Segment(phase, i, i, (step,)))
    return out


def default_header(phase: str, first: int, last: int, steps: Sequence[Step]) -> str:
    span = f"step {first}" if first == last else f"steps {first}–{last}"
    return f"{phase.capitalize()} ({span})"


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def _call_line(call: Call) -> str:
    line = f"{_code(call.tool)} {_code(format_args(call.args))}"
    if call.error:
        return f"{line} → **error:** {call.error}"
    return f"{line} → {call.observation}"


def render_step(number: int, step: Step) -> str:
    if not step.calls:
        return f"- **{number}.** {_call_line(Call(step.tool, step.args, step.observation, step.error))}"
    lines = [f"- **{number}.** {_code(step.tool)} (composite: {' + '.join(c.tool for c in step.calls)})"]
    lines += [f"  - {_call_line(c)}" for c in step.calls]
    return "\n".join(lines)


def render_segment(seg: Segment, header: Header = default_header) -> str:
    lines = [f"## {header(seg.phase, seg.first, seg.last, seg.steps)}", ""]
    lines += [render_step(seg.first + k, s) for k, s in enumerate(seg.steps)]
    return "\n".join(lines)


def _title(trace: Trace) -> list[str]:
    return [
        f"# Trajectory: {trace.question}",
        "",
        f"- database: {trace.db}",
        f"- question id: {trace.question_id}",
        f"- steps: {len(trace.steps)}",
        f"- final SQL ok: {'yes' if trace.final_sql_ok else 'no'}",
        "",
    ]


def _final(trace: Trace) -> list[str]:
    if not trace.final_sql:
        return []
    return ["", "## Final SQL", "", "```sql", trace.final_sql.strip(), "```"]


def render_markdown(trace: Trace, rules: RuleSet | None = None, header: Header = default_header) -> str:
    """The whole trajectory: title block, every phase segment in order, the final SQL."""
    body = "\n\n".join(render_segment(s, header) for s in segments(trace, rules))
    return "\n".join(_title(trace) + [body] + _final(trace)) + "\n"


def split_by_phase(
    trace: Trace, rules: RuleSet | None = None, header: Header = default_header
) -> dict[str, str]:
    """One markdown document per phase present (all its segments, in order); execute ends with the final SQL."""
    by_phase: dict[str, list[Segment]] = {}
    for seg in segments(trace, rules):
        by_phase.setdefault(seg.phase, []).append(seg)
    out: dict[str, str] = {}
    for phase in PHASES:
        segs = by_phase.get(phase)
        if not segs:
            continue
        lines = [f"# {phase.capitalize()} steps for: {trace.question}", "", f"- database: {trace.db}", ""]
        lines.append("\n\n".join(render_segment(s, header) for s in segs))
        if phase == "execute":
            lines += _final(trace)
        out[phase] = "\n".join(lines) + "\n"
    return out
