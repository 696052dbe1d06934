"""Runaway SQL from a model through a whole partition.

A scripted API model answers its first turns with hostile statements: an instr() per row, which a
time limit checked by a progress handler would let run for hours, and json_group_array, which grows
to ~1.3 GB and, without the heap cap, raises an uncaught MemoryError (the second variant, with
200 KB values, reaches the 512 MiB heap cap in about 2 s on an idle machine, so it ends either
way; tests/unit/test_sql_execute.py checks the memory limit itself). Every other turn gets "SELECT 1". The
partition must complete with every turn, each hostile turn a runtime_error whose message says
"timeout" or "memory limit", and each of those statements must end within the limit + 1 s.
"""

from __future__ import annotations

import threading
import time
from collections import deque

import litellm
import pytest
from model_fakes import FAKE_KEY_ENV, FAKE_PROVIDER, FAKE_SECRET, TEST_REGISTRY, ScriptedProvider

import memsql_assets.lib.sql.result_cache as result_cache_mod
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.evaluate import EvalSettings, evaluate_partition
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, read_results
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.paths import benchmark_dir

LIMIT_S = 3.0  # the partition's SQL time limit (EvalSettings.sql_timeout_s; 10 s by default)
RUNAWAY = [
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c "
    "WHERE instr(hex(zeroblob(131000)) || x, hex(zeroblob(65000)) || 'y') > 0",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
    "SELECT json_group_array(hex(randomblob(100))) FROM c",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
    "SELECT json_group_array(hex(randomblob(100000))) FROM c",
]
PARTITION_BOUND_S = 600  # a run that has not ended by then is reported as hung, not waited for


class RunawaySqlProvider(ScriptedProvider):
    """The scripted provider of tests/models, answering with `answers` first, then "SELECT 1"."""

    def __init__(self, answers: list[str]):
        super().__init__()
        self.answers = deque(answers)

    async def acompletion(self, model, messages, *args, **kwargs):
        response = await super().acompletion(model, messages, *args, **kwargs)
        if self.answers:
            response.choices[0].message.content = self.answers.popleft()
        return response


@pytest.fixture
def runaway_provider(monkeypatch):
    provider = RunawaySqlProvider(RUNAWAY)
    others = [p for p in litellm.custom_provider_map if p.get("provider") != FAKE_PROVIDER]
    monkeypatch.setattr(
        litellm, "custom_provider_map", [*others, {"provider": FAKE_PROVIDER, "custom_handler": provider}]
    )
    return provider


@pytest.fixture
def timed_queries(monkeypatch) -> list[tuple[str, float, str | None]]:
    """(sql, seconds, error) of every query the scorer executes (through the result cache)."""
    log: list[tuple[str, float, str | None]] = []
    lock = threading.Lock()
    real = result_cache_mod.run_query

    def timed(conn, sql, *args, **kwargs):
        started = time.monotonic()
        result = real(conn, sql, *args, **kwargs)
        with lock:
            log.append((sql, time.monotonic() - started, result.error))
        return result

    monkeypatch.setattr(result_cache_mod, "run_query", timed)
    return log


def test_runaway_sql_ends_at_its_bounds_and_the_partition_completes(
    home, tmp_path, runaway_provider, timed_queries, monkeypatch
):
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    registry_file = tmp_path / "models.yaml"
    registry_file.write_text(
        TEST_REGISTRY.replace("max_concurrency: 3", "max_concurrency: 1"), encoding="utf-8"
    )
    registry = load_registry(registry_file)
    gateway = ModelGateway(registry, RequestStore(home / "requests"), home=home)
    box: dict = {}

    def run() -> None:
        try:
            box["out"] = evaluate_partition(
                home,
                "flaky",
                "A",
                settings=EvalSettings(sql_timeout_s=LIMIT_S),
                registry=registry,
                gateway=gateway,
            )
        except BaseException as exc:  # reported below: a crash is what this test is about
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(PARTITION_BOUND_S)
    assert not worker.is_alive(), f"the partition was still running after {PARTITION_BOUND_S} s"
    assert "error" not in box, f"the partition crashed: {box.get('error')!r}"
    out = box["out"]

    assert not runaway_provider.answers, "every runaway statement was answered"
    turns = read_turns(benchmark_dir(home))
    on_disk = read_results(partition_dir(home, "flaky", "A") / RESULT_FILE)
    assert len(out.rows) == len(on_disk) == len(turns), "every turn has its row"

    by_sql = {r["extracted_sql"]: r for r in out.rows}
    for sql in RUNAWAY:
        row = by_sql[sql]
        assert row["error_class"] == "runtime_error", (sql[-60:], row["error_class"], row["error_message"])
        assert row["error_message"].startswith(("timeout:", "memory limit:")), row["error_message"]

    runs = [(sql, seconds) for sql, seconds, _ in timed_queries if sql in RUNAWAY]
    assert len(runs) == len(RUNAWAY)
    # an interrupted statement ends near its limit; an uninterrupted one would run for minutes. The
    # slack is for a loaded machine, where the interrupt's check comes late.
    assert all(seconds < 2 * LIMIT_S for _, seconds in runs), [(sql[-50:], round(t, 2)) for sql, t in runs]
    # the other turns ran normally after them (SELECT 1 is right where the answer is the number 1)
    rest = {r["error_class"] for r in out.rows if r["extracted_sql"] == "SELECT 1"}
    assert rest <= {"wrong_result", "correct"} and len(out.rows) - len(RUNAWAY) == sum(
        r["extracted_sql"] == "SELECT 1" for r in out.rows
    )
