"""The CLI prints the guess floor (guess-probe's memory-critical EX under A) beside every A row."""

from __future__ import annotations

from memsql_assets.cli.render import guess_floor, print_evaluations
from memsql_assets.lib.harness.summary import PartitionSummary, summarize
from memsql_assets.orchestration.outcome import EvaluationRun


def _row(model: str, condition: str, mc: float) -> EvaluationRun:
    fields = {**summarize([], model, condition, 0.0).model_dump(), "ex_strict": 50.0, "ex_memory_critical": mc, "calls": 1}
    return EvaluationRun(model=model, condition=condition, success=True, summary=PartitionSummary(**fields))


def test_the_floor_is_shown_on_condition_a_rows_only(capsys):
    rows = [_row("gold", "A", 100.0), _row("gold", "B", 100.0), _row("guess-probe", "A", 3.0)]
    assert guess_floor(rows) == 3.0
    print_evaluations(rows)
    lines = capsys.readouterr().out.splitlines()
    assert "floor %" in lines[0]
    by_row = {tuple(line.split()[:2]): line.split() for line in lines[1:]}
    assert by_row[("gold", "A")][5] == "3.0" and by_row[("guess-probe", "A")][5] == "3.0"
    assert "3.0" not in by_row[("gold", "B")][3:6]  # B: no floor cell


def test_without_guess_probe_under_a_the_floor_is_unknown(capsys):
    rows = [_row("gold", "A", 100.0), _row("guess-probe", "B", 3.0)]
    assert guess_floor(rows) is None
    print_evaluations(rows)
    assert capsys.readouterr().out.splitlines()[1].split()[5] == "-"
