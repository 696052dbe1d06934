"""The result row has one definition, TurnResult: a field added to it, and nothing else, is a column
of the partition's Parquet file and of the dbt staging model over the files (stg_turn_results).

The proof edits a copy of the package: it adds one field to TurnResult's source and nothing else,
then, in a process that imports the copy, builds a row of the edited model, publishes it as a
partition's file the way the runner does, and runs the copy's dbt project on it (real dbt, DuckDB)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from memsql_assets.lib.harness.results import RESULT_SCHEMA
from memsql_assets.lib.paths import REPO_ROOT

NEW = "probe_score"
NEW_FIELD = f'    {NEW}: float | None = column(pa.float64(), "A column only this test declares.")\n'

# In the edited copy: a row of every field (one value per Arrow type), published and staged.
CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path

    import duckdb
    import pyarrow.parquet as pq

    from memsql_assets.lib.harness.results import partition_dir, read_results, write_result_table
    from memsql_assets.lib.harness.turn_result import FIELDS, SCHEMA_VERSION, TurnResult
    from memsql_assets.lib.report.dbt_cli import run_dbt

    home = Path(sys.argv[1])
    value = {"string": "x", "int32": 1, "int64": 2, "bool": True, "double": 0.5}
    row = TurnResult(**{f.name: value[str(f.metadata["arrow"])] for f in FIELDS}).as_row()
    row.update(model="m", condition="A", schema_version=SCHEMA_VERSION)
    out = partition_dir(home, "m", "A")
    out.mkdir(parents=True)
    path = write_result_table(out, [row])
    run_dbt(home, "run", "--select", "stg_turn_results", "--quiet")
    with duckdb.connect(str(home / "dbt" / "memsql.duckdb"), read_only=True) as con:
        cur = con.execute("select * from staging.stg_turn_results")
        staged = dict(zip([d[0] for d in cur.description], cur.fetchone()))
    print(json.dumps({
        "parquet": pq.read_schema(path).names,
        "read": read_results(path)[0],
        "staged": staged,
    }, default=str))
    """
)


def _edited_copy(root: Path) -> Path:
    """The package, the dbt project and the conditions file, with NEW_FIELD added after TurnResult's last field."""
    shutil.copytree(
        REPO_ROOT / "memsql_assets", root / "memsql_assets", ignore=shutil.ignore_patterns("__pycache__")
    )
    ignore = shutil.ignore_patterns("target", "logs", "dbt_packages")
    shutil.copytree(REPO_ROOT / "dbt_project", root / "dbt_project", ignore=ignore)
    shutil.copyfile(REPO_ROOT / "conditions.yaml", root / "conditions.yaml")  # the vocabulary reads it
    source = root / "memsql_assets" / "lib" / "harness" / "turn_result.py"
    text, n = re.subn(
        r"(    schema_version: int = column\(.*\)\n)", lambda m: m.group(1) + NEW_FIELD, source.read_text()
    )
    assert n == 1, "TurnResult's last field moved: adjust the edit"
    source.write_text(text)
    return root


def test_a_field_added_to_the_model_reaches_the_file_and_the_staging_model(tmp_path):
    assert NEW not in RESULT_SCHEMA.names
    root = _edited_copy(tmp_path / "repo")
    home = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": str(root), "DBT_SEND_ANONYMOUS_USAGE_STATS": "False"}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(home)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["parquet"] == [*RESULT_SCHEMA.names, NEW]
    assert seen["read"][NEW] == 0.5
    assert seen["staged"][NEW] == 0.5
    assert {"benchmark", "result_file", *RESULT_SCHEMA.names} <= set(seen["staged"])
