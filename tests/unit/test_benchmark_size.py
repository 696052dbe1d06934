"""The benchmark's size setting (memsql.benchmark_sessions, $MEMSQL_BENCHMARK_SESSIONS): read, checked,
and part of the sessions asset's code version, so that a changed size rebuilds the benchmark."""

from __future__ import annotations

import pytest

from memsql_assets.defs.benchmark.assets import sized_code_version
from memsql_assets.defs.resources import BENCHMARK_SESSIONS_ENV, MemsqlSettings
from memsql_assets.lib.benchmark.sample import SampleSizeError


def test_the_whole_benchmark_unless_a_size_is_set(monkeypatch):
    monkeypatch.delenv(BENCHMARK_SESSIONS_ENV, raising=False)
    assert MemsqlSettings().benchmark_size() is None
    monkeypatch.setenv(BENCHMARK_SESSIONS_ENV, " 45 ")
    assert MemsqlSettings().benchmark_size() == 45
    assert MemsqlSettings(benchmark_sessions=60).benchmark_size() == 60, "the resource's field before the variable"
    monkeypatch.setenv(BENCHMARK_SESSIONS_ENV, "300")
    assert MemsqlSettings().benchmark_size() is None, "all 300 sessions are the whole benchmark"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", "MEMSQL_BENCHMARK_SESSIONS 'abc': expected a whole number of sessions"),
        ("8", "MEMSQL_BENCHMARK_SESSIONS 8: expected 9 to 300 (at least one session for each of the benchmark's 9"),
        ("301", "MEMSQL_BENCHMARK_SESSIONS 301: expected 9 to 300"),
    ],
)
def test_a_bad_size_is_an_error_naming_the_setting_and_the_range(monkeypatch, value, message):
    monkeypatch.setenv(BENCHMARK_SESSIONS_ENV, value)
    with pytest.raises(SampleSizeError) as raised:
        MemsqlSettings().benchmark_size()
    assert str(raised.value).startswith(message)
    with pytest.raises(SampleSizeError, match=r"^memsql.benchmark_sessions -1: expected 9 to 300"):
        MemsqlSettings(benchmark_sessions=-1).benchmark_size()


def test_a_size_set_in_the_environment_is_part_of_the_sessions_code_version(monkeypatch):
    monkeypatch.delenv(BENCHMARK_SESSIONS_ENV, raising=False)
    whole = sized_code_version()
    monkeypatch.setenv(BENCHMARK_SESSIONS_ENV, "45")
    assert sized_code_version() == f"{whole}+sessions=45"
