"""`memsql eval`'s progress line, as a person sees it: rewritten in place with a bar on a terminal, plain
lines (the first, then one every `every_s` seconds, and the last) in a pipe or a CI log."""

from __future__ import annotations

import io
from dataclasses import dataclass

from memsql_assets.lib.console import ProgressLine, progress_to, report_progress


@dataclass
class Stats:
    done_turns: int
    total_turns: int = 40
    ex: float = 75.0
    eta_s: float | None = 12.0


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_one_line_rewritten_in_place_with_a_bar():
    out = Terminal()
    line = ProgressLine("memsql eval", out)
    for done in (10, 40):
        line("gold/A", Stats(done, eta_s=None if done == 10 else 0.0))
    first, last = out.getvalue().split("\r")[1:]
    assert first == "memsql eval [#####...............] gold/A: 10/40 turns, EX so far 75.0 %, ETA ?\x1b[K"
    assert last == "memsql eval [####################] gold/A: 40/40 turns, EX so far 75.0 %, ETA 0 s\x1b[K\n"


def test_a_pipe_gets_plain_lines_the_first_then_every_ten_seconds_and_the_last():
    out = io.StringIO()
    with progress_to(ProgressLine("memsql eval", out, every_s=10.0)):
        for done in range(1, 41):
            report_progress("recall-probe/B", Stats(done))
    report_progress("recall-probe/B", Stats(40))  # nobody listens any more
    assert out.getvalue().splitlines() == [
        "memsql eval: recall-probe/B: 1/40 turns, EX so far 75.0 %, ETA 12 s",
        "memsql eval: recall-probe/B: 40/40 turns, EX so far 75.0 %, ETA 12 s",
    ]
