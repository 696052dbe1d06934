"""The `wide` variant of each source (lib/sources/wide.py): the same data plus a warehouse's tables,
deterministic, with every ground truth of the benchmark executing to the same rows."""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
from pathlib import Path

import pytest

from memsql_assets.lib.benchmark.gt_check import check_ground_truth
from memsql_assets.lib.errors import ConfigError
from memsql_assets.lib.sources.build import build_source, describe_source
from memsql_assets.lib.sources.config import PREFIX, SOURCE_NAMES, load_sources
from memsql_assets.lib.sources.wide import snake, synonym
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.schema import user_tables

# (tables, columns) each source's wide variant reaches at least (docs/data_sources.md)
WIDE_COUNTS = {"bird_financial": (60, 500), "sec_edgar": (15, 90), "northwind": (80, 800)}


def shape(path: Path) -> tuple[int, int]:
    conn = open_readonly(path)
    try:
        tables = user_tables(conn)
        return len(tables), sum(len(conn.execute(f'PRAGMA table_info("{t}")').fetchall()) for t in tables)
    finally:
        conn.close()


def table_digest(path: Path, table: str) -> str:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()
        cols = [r[1:3] for r in conn.execute(f'PRAGMA table_info("{table}")')]
    finally:
        conn.close()
    return hashlib.sha256(repr((cols, rows)).encode()).hexdigest()


@pytest.mark.parametrize("name", SOURCE_NAMES)
def test_each_wide_source_reaches_its_stated_counts_and_keeps_its_base_tables(name, embedded_dbs, wide_dbs):
    tables, columns = shape(wide_dbs[name])
    least_tables, least_columns = WIDE_COUNTS[name]
    assert tables >= least_tables and columns >= least_columns, (tables, columns)
    conn = open_readonly(embedded_dbs[name])
    base = user_tables(conn)
    conn.close()
    assert tables > len(base)
    for table in base:
        assert table_digest(wide_dbs[name], table) == table_digest(embedded_dbs[name], table), table
    assert describe_source(name, wide_dbs[name]).meta["variant"] == "wide"


def test_the_wide_variant_is_deterministic(wide_dbs, tmp_path):
    spec = dataclasses.replace(load_sources(environ={})["sec_edgar"], variant="wide")
    again = build_source(spec, tmp_path / "sec.sqlite")
    assert again.content_hash == describe_source("sec_edgar", wide_dbs["sec_edgar"]).content_hash


def test_every_ground_truth_returns_the_same_rows_on_the_wide_variant(embedded_turns, embedded_dbs, wide_dbs):
    standard = check_ground_truth(embedded_turns, embedded_dbs)
    wide = check_ground_truth(embedded_turns, wide_dbs)
    assert wide.ok and wide.executed == standard.executed > 0, wide.failures[:3]
    by_source = {PREFIX[n]: (sqlite3.connect(embedded_dbs[n]), sqlite3.connect(wide_dbs[n])) for n in SOURCE_NAMES}
    for turn in embedded_turns:
        narrow, wide_conn = by_source[turn["source"]]
        assert narrow.execute(turn["gt_sql"]).fetchall() == wide_conn.execute(turn["gt_sql"]).fetchall()


def test_staging_columns_are_near_synonyms():
    assert (snake("Order Details"), synonym("CustomerID"), synonym("amount"), synonym("A11")) == (
        "order_details",
        "cust_key",
        "amt",
        "a_11_val",
    )


def test_an_unknown_variant_is_refused_naming_the_field(tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text("northwind:\n  kind: embedded\n  variant: huge\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_sources(path, environ={})
    assert "northwind.variant" in str(raised.value) and "standard, wide" in str(raised.value)


def test_choosing_the_wide_variant_is_a_new_data_version_of_the_source():
    from memsql_assets.defs.sources.assets import spec_version
    from memsql_assets.lib.code_versions import digest

    spec = load_sources(environ={})["northwind"]
    assert spec.variant == "standard"
    assert spec_version(spec) == digest({"kind": spec.kind, "seed": spec.seed, "options": spec.options})
    assert spec_version(dataclasses.replace(spec, variant="wide")) != spec_version(spec)
