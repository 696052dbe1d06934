"""A field added to the run summary model (PartitionSummary, lib/harness/summary.py) reaches
summary.json, `memsql eval --json` and dbt's staging with no other edit.

The test makes exactly that one-line edit in a copy of the checkout's code, then runs the real CLI
(a Dagster run) and dbt from the copy, as separate processes, on a small benchmark."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from memsql_assets.lib.harness.results import partition_dir
from memsql_assets.lib.harness.summary import SUMMARY_FILE
from tests.metrics.conftest import fresh_home

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
LEFT_OUT = ("tests/", "docs/", "bench/", "examples/")  # what the copy does not need to run
ANCHOR = '    memory_store_bytes: int = 0\n    """Bytes the memory\'s stores held."""\n'
FIELD = '    probe_field: str = "added in one line"\n'


def _checkout_with_one_more_field(dst: Path) -> Path:
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    for name in files.splitlines():
        if not name.startswith(LEFT_OUT) and (REPO / name).is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dst / name)
    model = dst / "memsql_assets" / "lib" / "harness" / "summary.py"
    text = model.read_text(encoding="utf-8")
    assert text.count(ANCHOR) == 1, "the model's last field moved: update ANCHOR"
    model.write_text(text.replace(ANCHOR, ANCHOR + FIELD), encoding="utf-8")
    return dst


def test_a_new_summary_field_is_in_the_file_the_cli_json_and_dbt_staging(small_home, tmp_path):
    code = _checkout_with_one_more_field(tmp_path / "checkout")
    home = fresh_home(small_home, tmp_path / "home")
    env = {**os.environ, "MEMSQL_HOME": str(home), "PYTHONPATH": str(code)}
    env.pop("DAGSTER_HOME", None)

    def python(*args: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, *args], cwd=code, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        return proc

    out = json.loads(python("-m", "memsql_assets.cli", "eval", "--model", "gold", "--condition", "A", "--json").stdout)
    assert out["success"] and out["probe_field"] == "added in one line"
    published = json.loads((partition_dir(home, "gold", "A") / SUMMARY_FILE).read_text(encoding="utf-8"))
    assert published["probe_field"] == "added in one line"

    python("-c", "import sys; from pathlib import Path; from memsql_assets.lib.report.dbt_cli import run_dbt; "
                 "run_dbt(Path(sys.argv[1]), 'run', '--select', 'stg_partition_summaries')", str(home))  # fmt: skip
    with duckdb.connect(str(home / "dbt" / "memsql.duckdb"), read_only=True) as con:
        rows = con.execute(
            "select model, condition, probe_field, turns, ex_by_turn_index from staging.stg_partition_summaries"
        ).fetchall()
    # A dict field is a JSON column (ex_by_turn_index's int keys once made it a bigint no query could read).
    assert [(*r[:4], json.loads(r[4])) for r in rows] == [
        ("gold", "A", "added in one line", published["turns"], published["ex_by_turn_index"])
    ]
