"""The CLI prints the guess floor (guess-probe's memory-critical EX under A) beside every A row."""

from __future__ import annotations

from memsql_assets.cli import _print_evaluations, guess_floor


def _row(model: str, condition: str, mc: float) -> dict:
    classes = {"correct": 1}
    return {
        "model": model,
        "condition": condition,
        "ex_strict": 50.0,
        "ex_memory_critical": mc,
        "calls": 1,
        "cache_hits": 0,
        "error_classes": classes,
    }


def test_the_floor_is_shown_on_condition_a_rows_only(capsys):
    rows = [_row("gold", "A", 100.0), _row("gold", "B", 100.0), _row("guess-probe", "A", 3.0)]
    assert guess_floor(rows) == 3.0
    _print_evaluations(rows)
    lines = capsys.readouterr().out.splitlines()
    assert "floor %" in lines[0]
    by_row = {tuple(line.split()[:2]): line.split() for line in lines[1:]}
    assert by_row[("gold", "A")][5] == "3.0" and by_row[("guess-probe", "A")][5] == "3.0"
    assert "3.0" not in by_row[("gold", "B")][3:6]  # B: no floor cell


def test_without_guess_probe_under_a_the_floor_is_unknown(capsys):
    rows = [_row("gold", "A", 100.0), _row("guess-probe", "B", 3.0)]
    assert guess_floor(rows) is None
    _print_evaluations(rows)
    assert capsys.readouterr().out.splitlines()[1].split()[5] == "-"
