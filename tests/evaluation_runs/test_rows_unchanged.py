"""The memory conditions the code had before the memory protocol (A, B, B_wm5, C, D, and the single-shot
trajectory condition, then E, now E_prompt), re-expressed as
memory implementations, give every reference model exactly the rows they gave before.

`golden/rows_before_protocol.json` holds, per reference model × condition, a digest of every session's
comparable rows: every column but the measurements (timings, cache hits, attempts; harness/results.py)
and the request key, which carries the built-ins' code version and so changes with any edit to them
(`prompt_hash` still pins the prompt),
over a copy of the small benchmark with its own trajectory store, recorded with the code as it was
before the protocol (`MEMSQL_RECORD_GOLDEN=1` writes the file instead of comparing). A condition whose
rows change on purpose (a new semantics) is re-recorded, and the commit says why.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import dagster as dg
import pytest

from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.defs.trajectories.assets import synthetic_questions, trajectory_store
from memsql_assets.defs.trajectories.resources import TrajectorySettings
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import comparable_rows
from memsql_assets.lib.trajectories.lookup import trajectory_lookup
from memsql_assets.lib.vocabulary import REFERENCE_MODELS

GOLDEN = Path(__file__).with_name("golden") / "rows_before_protocol.json"
RECORD = os.environ.get("MEMSQL_RECORD_GOLDEN") == "1"
TRAJECTORY_BUDGET = 12  # synthetic questions of the home's trajectory store (condition E_prompt's prompts)


def _golden() -> dict:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def _conditions() -> list[str]:
    """The conditions the golden file covers (recording too: conditions added since keep their own tests;
    a renamed one is renamed in the file first, so that only its `condition` column changes)."""
    return list(_golden()["conditions"])


def digest_rows(rows: list[dict], columns: list[str]) -> dict[str, object]:
    """Per session, a digest of its comparable rows restricted to `columns`, in turn and epoch order."""
    by_session: dict[str, list[dict]] = {}
    for row in comparable_rows(rows):
        by_session.setdefault(row["session_id"], []).append({c: row[c] for c in columns})
    sessions = {}
    for sid, session_rows in sorted(by_session.items()):
        session_rows.sort(key=lambda r: (r["turn_index"], r["epoch"]))
        text = json.dumps(session_rows, sort_keys=True, default=str, ensure_ascii=False)
        sessions[sid] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return {"rows": len(rows), "correct": sum(bool(r["ex_strict"]) for r in rows), "sessions": sessions}


@pytest.fixture(scope="module")
def golden_home(small_home, tmp_path_factory) -> Path:
    """A copy of the small benchmark with its own trajectory store, evaluated from scratch."""
    home = tmp_path_factory.mktemp("golden_home") / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "redis", "dbt", "report", "requests"))
    with dg.instance_for_test() as instance:
        built = dg.materialize(
            [synthetic_questions, trajectory_store],
            instance=instance,
            resources={
                "memsql": MemsqlSettings(home=str(home)),
                "trajectories": TrajectorySettings(budget=TRAJECTORY_BUDGET),
            },
        )
        assert built.success
    return home


@pytest.mark.integration
def test_rows_of_the_conditions_before_the_protocol_are_unchanged(golden_home):
    conditions = _conditions()
    if RECORD:
        from memsql_assets.lib.harness.results import MEASUREMENT_COLUMNS
        from memsql_assets.lib.harness.turn_result import COLUMNS

        columns = [c for c in COLUMNS if c not in MEASUREMENT_COLUMNS and c != "request_key"]
    else:
        columns = _golden()["columns"]
    got = {}
    for model in REFERENCE_MODELS:
        for condition in conditions:
            rows = evaluate_partition(golden_home, model, condition, trajectory_factory=trajectory_lookup).rows
            got[f"{model}/{condition}"] = digest_rows(rows, columns)
    if RECORD:
        GOLDEN.parent.mkdir(exist_ok=True)
        record = {"conditions": conditions, "columns": columns, "partitions": got}
        GOLDEN.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip(f"recorded {GOLDEN}")
    want = _golden()["partitions"]
    assert set(got) == set(want)
    changed = {
        key: sorted(s for s, d in got[key]["sessions"].items() if want[key]["sessions"].get(s) != d)
        for key in want
        if got[key] != want[key]
    }
    assert not changed, f"partitions whose rows changed (sessions): {changed}"
