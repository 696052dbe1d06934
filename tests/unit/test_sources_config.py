"""sources/sources.yaml: defaults, environment overrides and errors naming file and field."""

from __future__ import annotations

import pytest

from memsql_assets.lib.errors import ConfigError, SourceError
from memsql_assets.lib.sources.build import describe_source
from memsql_assets.lib.sources.config import load_sources
from memsql_assets.lib.sql.sandbox import check_sqlite_file


def test_defaults_are_embedded():
    specs = load_sources(environ={})
    assert {s.kind for s in specs.values()} == {"embedded"}
    assert specs["sec_edgar"].prefix == "SEC"


def test_env_override_selects_real_adapter(tmp_path):
    specs = load_sources(environ={"MEMSQL_SOURCE_NORTHWIND": str(tmp_path)})
    assert specs["northwind"].kind == "real" and specs["northwind"].real_path == tmp_path


def test_override_pointing_nowhere_names_variable_field(tmp_path):
    with pytest.raises(ConfigError, match=r"field 'bird_financial.real_path': .*/nowhere does not exist"):
        load_sources(environ={"MEMSQL_SOURCE_BIRD_FINANCIAL": str(tmp_path / "nowhere")})


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("northwind: {kind: csv}\n", "northwind.kind"),
        ("sec_edgar: {seed: abc}\n", "sec_edgar.seed"),
        ("oracle: {kind: real}\n", "oracle"),
        ("bird_financial: {kind: real}\n", "bird_financial.real_path"),
        ("northwind: [1, 2\n", "<file>"),
    ],
)
def test_malformed_config_names_file_and_field(tmp_path, text, field):
    path = tmp_path / "sources.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_sources(path, environ={})
    assert str(path) in str(err.value) and f"field '{field}'" in str(err.value)


def test_missing_and_corrupt_database_files(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        check_sqlite_file(tmp_path / "absent.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(SourceError, match=r"junk.sqlite: is not a SQLite database"):
        describe_source("northwind", junk)


def test_truncated_database_is_reported_corrupt(embedded_dbs, tmp_path):
    data = embedded_dbs["northwind"].read_bytes()
    broken = tmp_path / "northwind.sqlite"
    broken.write_bytes(data[: len(data) // 3])
    with pytest.raises(SourceError, match="northwind.sqlite: (corrupt|is not)"):
        describe_source("northwind", broken)
