"""The console of long commands: columns that fit their longest cell, output sent to a log file."""

from __future__ import annotations

import subprocess
import sys

from memsql_assets.lib.console import captured, table


def test_columns_fit_their_longest_cell_and_numbers_align_right():
    lines = table([("claude-sonnet-4.6-standard", "api", "1,688"), ("gold", "builtin", "43,360")], right=(2,))
    assert lines == ["claude-sonnet-4.6-standard  api       1,688", "gold                        builtin  43,360"]
    assert len({line.index("api") if "api" in line else line.index("builtin") for line in lines}) == 1


def test_output_of_child_processes_goes_to_the_log(tmp_path, capfd):
    """(Under pytest, sys.stdout is its capture, not descriptor 1: children show what the CLI does.)"""
    log = tmp_path / "logs" / "run.log"
    with captured("memsql test", log) as console:
        subprocess.run([sys.executable, "-c", "import sys; print('child out'); print('child err', file=sys.stderr)"])
        console.stage("one stage")
    out, err = capfd.readouterr()
    assert out == "" and "memsql test [" in err and err.strip().endswith("one stage")
    assert log.read_text().splitlines() == ["child out", "child err"]


def test_without_a_log_stdout_goes_to_stderr(capfd):
    with captured("memsql test", None):
        subprocess.run([sys.executable, "-c", "print('dbt says')"])
    out, err = capfd.readouterr()
    assert out == "" and "dbt says" in err
