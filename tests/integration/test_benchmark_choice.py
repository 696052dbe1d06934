"""The benchmark choice of the sources file: an unknown name is one line naming the choices and
nothing is built; a valid choice is read in vocabulary order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memsql_assets.lib.errors import ConfigError
from memsql_assets.lib.sources.config import DEFAULT_SOURCES_FILE, load_benchmarks, load_sources
from memsql_assets.lib.vocabulary import BENCHMARKS, EXTENDED_BENCHMARK, PAPER_BENCHMARK

pytestmark = pytest.mark.integration


def _sources(tmp_path: Path, choice: str) -> Path:
    text = DEFAULT_SOURCES_FILE.read_text(encoding="utf-8")
    path = tmp_path / "sources.yaml"
    path.write_text(text.replace("benchmarks: [paper, extended]", f"benchmarks: {choice}"), encoding="utf-8")
    return path


def test_the_shipped_file_chooses_both_benchmarks():
    assert load_benchmarks(DEFAULT_SOURCES_FILE) == BENCHMARKS


def test_a_choice_is_read_in_vocabulary_order(tmp_path):
    assert load_benchmarks(_sources(tmp_path, f"[{EXTENDED_BENCHMARK}]")) == (EXTENDED_BENCHMARK,)
    both = f"[{EXTENDED_BENCHMARK}, {PAPER_BENCHMARK}]"
    assert load_benchmarks(_sources(tmp_path, both)) == (PAPER_BENCHMARK, EXTENDED_BENCHMARK)


@pytest.mark.parametrize("choice", ["[paper, papr]", "[]", "extended"])
def test_a_bad_choice_fails_loading_the_sources_too(tmp_path, choice):
    path = _sources(tmp_path, choice)
    with pytest.raises(ConfigError, match="benchmarks"):
        load_sources(path, environ={})


def test_memsql_run_with_an_unknown_benchmark_is_one_line_and_builds_nothing(tmp_path):
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSQL_SOURCE_")}
    env.update(MEMSQL_HOME=str(home), MEMSQL_SOURCES_FILE=str(_sources(tmp_path, "[paper, papr]")))
    proc = subprocess.run(
        [sys.executable, "-m", "memsql_assets.cli", "run"], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "benchmarks[1]" in lines[0] and "'papr'" in lines[0]
    assert all(name in lines[0] for name in BENCHMARKS)
    assert not home.exists()
