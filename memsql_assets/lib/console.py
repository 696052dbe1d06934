"""What a long command shows on the terminal: one line per stage (or a partition's progress line),
then its summary.

Dagster's event log lines, dbt's output and the libraries' warnings go to a log file instead (every
process the command starts inherits the redirected descriptors: dbt, the worker processes).
`verbose` keeps them on the terminal's stderr, as they come.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

# Who hears a partition's progress in this process (`progress_to`): the command that runs it in-process.
_listeners: list[Callable[[str, Any], None]] = []


class Console:
    """Progress lines on the terminal's stderr; stdout is left for the summary alone."""

    def __init__(self, command: str, stream: TextIO | None = None):
        self.command = command
        self.stream = stream if stream is not None else sys.stderr
        self.started = time.monotonic()

    def stage(self, text: str) -> None:
        elapsed = time.monotonic() - self.started
        print(f"{self.command} [{elapsed:5.0f}s] {text}", file=self.stream, flush=True)


@contextlib.contextmanager
def captured(command: str, log: Path | None) -> Iterator[Console]:
    """Send file descriptors 1 and 2 to `log` (None: stdout to stderr, the verbose console) while the
    block runs; the yielded Console writes to the terminal's stderr either way."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    terminal = os.fdopen(os.dup(saved_err), "w", buffering=1, encoding="utf-8")
    if log is None:
        os.dup2(2, 1)
    else:
        log.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    try:
        yield Console(command, terminal)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved_out, 1)
        os.dup2(saved_err, 2)
        os.close(saved_out)
        os.close(saved_err)
        terminal.close()


class ProgressLine:
    """A partition's progress in one line: rewritten in place on a terminal, with a bar; elsewhere (a
    pipe, a CI log) a plain line every `every_s` seconds and at the end."""

    WIDTH = 20  # the bar's characters

    def __init__(self, command: str, stream: TextIO, every_s: float = 10.0):
        self.command, self.stream, self.every_s = command, stream, every_s
        self.live = stream.isatty()
        self.last = float("-inf")

    def __call__(self, label: str, stats: Any) -> None:
        """`stats`: the runner's RunStats (done_turns, total_turns, ex, eta_s)."""
        done, total = stats.done_turns, stats.total_turns
        eta = f"{stats.eta_s:.0f} s" if stats.eta_s is not None else "?"
        text = f"{label}: {done}/{total} turns, EX so far {stats.ex:.1f} %, ETA {eta}"
        if self.live:
            filled = self.WIDTH * done // max(total, 1)
            bar = "#" * filled + "." * (self.WIDTH - filled)
            end = "\n" if done == total else ""
            print(f"\r{self.command} [{bar}] {text}\x1b[K", end=end, file=self.stream, flush=True)
        elif done == total or time.monotonic() - self.last >= self.every_s:
            self.last = time.monotonic()
            print(f"{self.command}: {text}", file=self.stream, flush=True)


@contextlib.contextmanager
def progress_to(listener: Callable[[str, Any], None]) -> Iterator[None]:
    """`listener(label, stats)` hears every progress report of the partitions run in this process
    while the block runs (the evaluation asset reports, `memsql eval` listens)."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)


def report_progress(label: str, stats: Any) -> None:
    for listener in list(_listeners):
        listener(label, stats)


def table(rows: Sequence[Sequence[object]], right: Sequence[int] = ()) -> list[str]:
    """`rows` (the first one may be a header) as lines whose columns line up, each column as wide as
    its widest cell; the columns numbered in `right` are right-aligned (numbers)."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells if i < len(row)) for i in range(max(map(len, cells), default=0))]
    lines = []
    for row in cells:
        parts = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)]
        lines.append("  ".join(parts).rstrip())
    return lines
