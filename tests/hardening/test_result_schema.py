"""Bad input: result files and checkpoints of an older schema; unknown model/condition.

A published result file of another schema is refused by `read_results` with a message naming the
file, the field and the expected schema version. A checkpoint of another schema (or an unreadable
one) is private scratch state: the resume discards it with such a warning and redoes its session,
so the partition still ends with a clean run's rows.
"""

from __future__ import annotations

import json
import logging

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import row_diffs

from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.harness.evaluate import benchmark_version, evaluate_partition
from memsql_assets.lib.harness.results import (
    ADDED_COLUMNS,
    COLUMNS,
    RESULT_FILE,
    RESULT_SCHEMA,
    SCHEMA_VERSION,
    ResultSchemaError,
    partition_dir,
    progress_dir,
    read_results,
    write_result_table,
)
from memsql_assets.lib.models.registry import default_models_file


def _row(**over):
    row = dict.fromkeys(RESULT_SCHEMA.names)
    row.update(session_id="NW-1-001", source="NW", tier=1, turn_index=1, epoch=1, memory_critical=False, model="gold")
    row.update(condition="A", ex_strict=True, error_class="correct", schema_version=SCHEMA_VERSION)
    row.update(over)
    return row


@pytest.fixture
def result_file(tmp_path):
    return write_result_table(tmp_path, [_row(), _row(turn_index=2)])


def test_current_schema_reads(result_file):
    assert [r["turn_index"] for r in read_results(result_file)] == [1, 2]


@pytest.mark.parametrize(
    ("mutate", "field", "problem"),
    [
        (lambda t: t.drop_columns(["schema_version"]), "schema_version", "missing (the file predates schema"),
        (
            lambda t: t.set_column(
                t.schema.get_field_index("schema_version"), "schema_version", pa.array([0, 0], pa.int32())
            ),
            "schema_version",
            "is 0",
        ),
        (lambda t: t.drop_columns(["retrieval_ms"]), "retrieval_ms", "missing"),
        (
            lambda t: t.append_column("judge_score", pa.array([1.0, 1.0])),
            "judge_score",
            "not a column of this schema",
        ),
        (
            lambda t: t.set_column(t.schema.get_field_index("tier"), "tier", pa.array(["1", "1"])),
            "tier",
            "has type string, expected int32",
        ),
    ],
    ids=["no-version", "old-version", "missing-column", "extra-column", "changed-type"],
)
def test_result_file_of_another_schema_is_refused_naming_file_field_and_version(
    result_file, mutate, field, problem
):
    pq.write_table(mutate(pq.read_table(result_file)), result_file)
    with pytest.raises(ResultSchemaError) as err:
        read_results(result_file)
    message = str(err.value)
    assert message.startswith(f"{result_file}: field '{field}': {problem}"), message
    assert f"expected schema_version {SCHEMA_VERSION}" in message
    assert err.value.field == field and err.value.path == str(result_file)


def _as_version(table: pa.Table, version: int) -> pa.Table:
    at = table.schema.get_field_index("schema_version")
    return table.set_column(at, "schema_version", pa.array([version] * table.num_rows, pa.int32()))


def _added_after(version: int) -> list[str]:
    """The columns a published file of `version` lacks."""
    return [name for name, (since, _) in ADDED_COLUMNS.items() if since > version]


def test_a_file_written_before_epochs_reads_as_epoch_1_and_a_current_one_needs_the_column(result_file):
    table = pq.read_table(result_file).drop_columns(_added_after(2))
    pq.write_table(table, result_file)
    with pytest.raises(ResultSchemaError, match=f"{result_file}: field 'epoch': missing"):
        read_results(result_file)  # the current schema without its columns: broken, not old
    pq.write_table(_as_version(table, 2), result_file)
    rows = read_results(result_file)
    assert [(r["turn_index"], r["epoch"], r["reasoning_tokens"], r["retries"]) for r in rows] == [
        (1, 1, None, 0),
        (2, 1, None, 0),
    ]


def test_a_file_written_before_reasoning_tokens_reads_them_as_null(result_file):
    table = pq.read_table(result_file).drop_columns(_added_after(3))
    pq.write_table(table, result_file)
    first_lacking = next(c for c in COLUMNS if c in _added_after(3))  # the error names the first
    with pytest.raises(ResultSchemaError, match=f"{result_file}: field '{first_lacking}': missing"):
        read_results(result_file)
    pq.write_table(_as_version(table, 3), result_file)
    assert [(r["epoch"], r["reasoning_tokens"]) for r in read_results(result_file)] == [(1, None), (1, None)]
    pq.write_table(_as_version(pq.read_table(result_file).drop_columns(["epoch"]), 3), result_file)
    with pytest.raises(ResultSchemaError, match=f"{result_file}: field 'epoch': missing"):
        read_results(result_file)  # schema 3 has epoch


def test_unreadable_result_file_is_named(result_file):
    result_file.write_bytes(b"PAR1 not really")
    with pytest.raises(
        ResultSchemaError, match=f"{result_file}: field '\\(file\\)': not a readable Parquet file"
    ):
        read_results(result_file)


def test_checkpoints_of_another_schema_are_discarded_with_a_warning_and_redone(home, caplog):
    clean = evaluate_partition(home, "recall-probe", "B")
    sessions = sorted({r["session_id"] for r in clean.rows})
    rows_of = {s: [r for r in clean.rows if r["session_id"] == s] for s in sessions}
    ckpt = progress_dir(home, "recall-probe", "B")
    ckpt.mkdir(parents=True)
    (ckpt / "_meta.json").write_text(json.dumps({"benchmark_version": benchmark_version(home)}))
    good, no_version, old_version, broken = sessions[:4]
    (ckpt / f"{good}.json").write_text(json.dumps(rows_of[good]))
    (ckpt / f"{no_version}.json").write_text(
        json.dumps([{k: v for k, v in r.items() if k != "schema_version"} for r in rows_of[no_version]])
    )
    (ckpt / f"{old_version}.json").write_text(
        json.dumps([{**r, "schema_version": 0} for r in rows_of[old_version]])
    )
    (ckpt / f"{broken}.json").write_text(json.dumps(rows_of[broken])[:100])

    with caplog.at_level(logging.WARNING, logger="memsql_assets.lib.harness.results"):
        resumed = evaluate_partition(home, "recall-probe", "B")
    assert resumed.summary["resumed_sessions"] == 1, "only the current-schema checkpoint is trusted"
    assert resumed.summary["model_calls_this_run"] == 0, "redone sessions come back from the request store"
    assert not row_diffs(resumed.rows, clean.rows)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    expected = f"(expected schema_version {SCHEMA_VERSION})"
    assert any(
        f"{ckpt / no_version}.json: discarding checkpoint: field 'schema_version' missing" in w
        and expected in w
        for w in warnings
    ), warnings
    assert any(
        f"{ckpt / old_version}.json: discarding checkpoint: field 'schema_version' is 0" in w
        for w in warnings
    )
    assert any(f"{ckpt / broken}.json: discarding unreadable checkpoint" in w for w in warnings)
    assert len(read_results(partition_dir(home, "recall-probe", "B") / RESULT_FILE)) == len(clean.rows)


def test_unknown_condition_and_model_say_what_was_expected(home):
    with pytest.raises(MemsqlError) as err:
        evaluate_partition(home, "gold", "F")
    assert str(err.value) == f"unknown condition 'F'; expected one of {sorted(CONDITIONS)}"
    with pytest.raises(MemsqlError) as err:
        evaluate_partition(home, "gpt-9", "A")
    message = str(err.value)
    assert (
        message.startswith(f"{default_models_file()}: no model 'gpt-9' (registered: ") and "gold" in message
    )
    assert not (home / "results").exists(), "nothing is written for a bad request"
