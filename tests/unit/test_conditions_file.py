"""Conditions as data: conditions.yaml is the one table the vocabulary, the Dagster partitions and dbt's
accepted values derive from; a user's file adds conditions; every bad input is one error naming the
file and the field, found before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsql_assets.lib import vocabulary
from memsql_assets.lib.conditions import BUILTIN_CONDITIONS_FILE, CONDITIONS, load_conditions
from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.errors import ConfigError
from memsql_assets.lib.history import History, HistoryError, check_history
from memsql_assets.lib.memory.plugins import (
    BUILTIN_MEMORIES,
    NoAnalystsError,
    build_memory,
    check_benchmark,
    check_condition,
    check_conditions,
    condition_fingerprint,
    memory_class,
    memory_params,
)
from memsql_assets.lib.memory.protocol import Memory, Visibility
from memsql_assets.lib.report.dbt_cli import dbt_vars
from memsql_assets.orchestration.selection import main_run_cells


def _file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_every_name_derives_from_the_file():
    import dagster  # noqa: F401  (the partitions module needs it)

    from memsql_assets.defs.evaluation.partitions import condition_partitions

    assert tuple(CONDITIONS) == vocabulary.CONDITION_NAMES
    assert condition_partitions.get_partition_keys() == list(CONDITIONS)
    assert dbt_vars()["conditions"] == list(CONDITIONS)
    assert tuple(n for n, c in CONDITIONS.items() if c.paper) == vocabulary.PAPER_CONDITIONS
    assert {c.implementation for c in CONDITIONS.values()} <= set(BUILTIN_MEMORIES)


def test_every_shipped_condition_builds_its_memory():
    check_conditions()
    for condition in CONDITIONS.values():
        memory = build_memory(condition)
        assert isinstance(memory, Memory), condition.name
    assert build_memory(CONDITIONS["C"]).visibility == Visibility.WAVES
    assert build_memory(CONDITIONS["H"]).visibility == Visibility.SESSION
    assert build_memory(CONDITIONS["H"]).window is None and build_memory(CONDITIONS["B"]).window == 2


def test_a_users_file_adds_conditions_after_the_built_in_ones(tmp_path):
    path = _file(tmp_path, "conditions:\n  W9:\n    description: nine turns\n    memory: {implementation: window, params: {turns: 9}}\n")
    table = load_conditions(path)
    assert list(table) == [*CONDITIONS, "W9"]
    assert table["W9"].file == path and table["W9"].params == {"turns": 9}
    assert build_memory(table["W9"]).window == 9


@pytest.mark.parametrize(
    ("body", "field", "cause"),
    [
        ("conditions:\n  B:\n    memory: {implementation: window, params: {turns: 3}}\n", "conditions.B", "clashes with the built-in condition B"),
        ("conditions:\n  9x:\n    memory: {implementation: none}\n", "conditions.9x", "letters, digits and _"),
        ("conditions:\n  Z:\n    memory: {implementation: none}\n    colour: red\n", "conditions.Z.colour", "unknown field"),
        ("conditions:\n  Z:\n    description: no memory given\n", "conditions.Z.memory", "missing required field"),
        ("conditions:\n  Z:\n    memory: {implementation: none}\n  Z:\n    memory: {implementation: none}\n", "conditions.Z", "duplicate key"),
        ("conditions: {}\n", "conditions", "non-empty mapping"),
        ("models: {}\n", "conditions", "exactly one key"),
        (
            "conditions:\n  Z:\n    memory: {implementation: none}\n    schema_in_prompt: false\n",
            "conditions.Z.schema_in_prompt",
            "false needs tools: true",
        ),
        (
            "conditions:\n  Z:\n    memory: {implementation: none}\n    context_mode: sometimes\n",
            "conditions.Z.context_mode",
            "expected one of annotated|observed, got 'sometimes'",
        ),
        (
            "conditions:\n  Z:\n    memory: {implementation: none}\n    history: teacher\n",
            "conditions.Z.history",
            "expected one of model|gold, got 'teacher'",
        ),
    ],
)
def test_a_malformed_file_names_the_file_and_the_field(tmp_path, body, field, cause):
    path = _file(tmp_path, body)
    with pytest.raises(ConfigError) as raised:
        load_conditions(path)
    assert str(path) in str(raised.value) and f"field '{field}'" in str(raised.value) and cause in str(raised.value)


@pytest.mark.parametrize(
    ("memory", "field", "cause"),
    [
        ("{implementation: nothing-like-it}", "memory.implementation", "unknown memory implementation 'nothing-like-it'"),
        ("{implementation: 'no_such_package.memory:Mine'}", "memory.implementation", "cannot import no_such_package.memory"),
        ("{implementation: 'json:NoSuchClass'}", "memory.implementation", "has no class 'NoSuchClass'"),
        ("{implementation: 'json:JSONDecoder'}", "memory.implementation", "is not a memory: it lacks retrieve, persist"),
        ("{implementation: window, params: {turns: 0}}", "memory.params.turns", "greater than or equal to 1"),
        ("{implementation: window, params: {turns: few}}", "memory.params.turns", "'all'"),
        ("{implementation: window}", "memory.params.turns", "missing required parameter"),
        ("{implementation: episodic, params: {window: 5, top: 3}}", "memory.params.top", "unknown parameter"),
        ("{implementation: none, params: {turns: 3}}", "memory.params.turns", "unknown parameter"),
    ],
)
def test_an_implementation_that_cannot_be_used_is_one_error_before_anything_runs(tmp_path, memory, field, cause):
    path = _file(tmp_path, f"conditions:\n  Z:\n    memory: {memory}\n")
    condition = load_conditions(path)["Z"]
    with pytest.raises(ConfigError) as raised:
        memory_params(condition, memory_class(condition))
    text = str(raised.value)
    assert text.startswith(f"{path}: field 'conditions.Z.{field}'") and cause in text, text


def test_the_fingerprint_follows_what_the_results_depend_on(tmp_path):
    base = "conditions:\n  Z:\n    memory: {implementation: window, params: {turns: %s}}\n"
    three, four = (load_conditions(_file(tmp_path, base % n))["Z"] for n in (3, 4))
    assert condition_fingerprint(three) != condition_fingerprint(four)
    assert condition_fingerprint(three) == condition_fingerprint(load_conditions(_file(tmp_path, base % 3))["Z"])
    observed = load_conditions(_file(tmp_path, base % 3 + "    context_mode: observed\n"))["Z"]
    assert condition_fingerprint(observed) != condition_fingerprint(three), "the mode makes its partitions stale"
    gold = load_conditions(_file(tmp_path, base % 3 + "    history: gold\n"))["Z"]
    assert gold.history == History.GOLD
    assert condition_fingerprint(gold) != condition_fingerprint(three), "the history makes its partitions stale"


def test_a_runs_history_else_the_models():
    assert vocabulary.history("B_wm5") == History.MODEL
    assert vocabulary.history("B_wm5", History.GOLD) == History.GOLD
    with pytest.raises(HistoryError, match=r"^history 'teacher': expected one of model\|gold$"):
        check_history("teacher")


def test_a_conditions_mode_else_the_benchmarks_default(tmp_path):
    assert vocabulary.context_mode("B_wm5", vocabulary.PAPER_BENCHMARK) == ContextMode.ANNOTATED
    assert vocabulary.context_mode("B_wm5", vocabulary.EXTENDED_BENCHMARK) == ContextMode.OBSERVED
    assert set(dbt_vars()["context_modes"]) == set(ContextMode)


def test_the_shipped_file_documents_every_field():
    text = BUILTIN_CONDITIONS_FILE.read_text(encoding="utf-8")
    for name in ("description", "memory", "tools", "paper", "main_run", "context_mode", "history"):
        assert f"#   {name} " in text, name


class DuckMemory:
    """A memory that implements only the two required methods, without memsql's base class."""

    visibility = "session"

    def retrieve(self, turn, vector):
        from memsql_assets.lib.memory.protocol import Retrieval

        return Retrieval()

    def persist(self, payload):
        self.kept = payload


def test_a_plugin_without_the_base_class_gets_its_defaults(tmp_path, monkeypatch):
    import sys
    import types

    module = types.ModuleType("duck_memory_for_test")
    module.DuckMemory = DuckMemory
    monkeypatch.setitem(sys.modules, "duck_memory_for_test", module)
    path = _file(tmp_path, "conditions:\n  Q:\n    memory: {implementation: 'duck_memory_for_test:DuckMemory'}\n")
    memory = build_memory(load_conditions(path)["Q"])
    assert isinstance(memory, Memory) and memory.size().entries == 0 and memory.stored_turns() is None
    memory.reset(set())
    memory.forget("S-1")
    memory.persist({"session_id": "S-1"})
    assert memory.inner.kept == {"session_id": "S-1"} and memory.visibility == "session"


def test_agent_conditions_leave_the_schema_out_unless_they_say_so(tmp_path):
    shown = {n: c.schema_in_prompt for n, c in CONDITIONS.items() if c.tools}
    assert shown == {"T": False, "E": False, "T_schema": True, "E_schema": True}
    assert all(c.schema_in_prompt for c in CONDITIONS.values() if not c.tools)
    path = _file(tmp_path, "conditions:\n  Z:\n    memory: {implementation: none}\n    schema_in_prompt: true\n")
    assert load_conditions(path)["Z"].schema_in_prompt


def test_memories_scoped_to_the_analyst_run_only_where_sessions_name_their_analyst():
    """Command 1 runs C_analyst, M0_analyst and M0 on the extended benchmark beside C and D, never on
    the paper's, whose sessions name no analyst (M0 by its `main_run: [extended]`)."""
    scoped = {"C_analyst", "M0_analyst", "M0"}
    paper = {c for _, c in main_run_cells(vocabulary.PAPER_BENCHMARK, CONDITIONS)}
    extended = {(m, c) for m, c in main_run_cells(vocabulary.EXTENDED_BENCHMARK, CONDITIONS)}
    assert not scoped & paper and {"C", "D"} <= paper
    assert {("reader-probe", c) for c in scoped | {"C", "D"}} <= extended
    assert CONDITIONS["M0"].main_run == (vocabulary.EXTENDED_BENCHMARK,)
    assert CONDITIONS["C_analyst"].description and CONDITIONS["M0_analyst"].description


@pytest.mark.parametrize("name", ["C_analyst", "M0_analyst"])
def test_scope_analyst_on_a_benchmark_without_analysts_is_one_line_naming_the_condition(name):
    with pytest.raises(NoAnalystsError) as raised:
        check_benchmark(CONDITIONS[name], vocabulary.PAPER_BENCHMARK)
    text = str(raised.value)
    assert text.startswith(f"condition {name} (") and "scope: analyst" in text and "\n" not in text, text
    check_benchmark(CONDITIONS[name], vocabulary.EXTENDED_BENCHMARK)


def test_main_run_names_benchmarks_the_condition_applies_to(tmp_path):
    scoped = "conditions:\n  Z:\n    memory: {implementation: episodic, params: {window: 5, scope: analyst}}\n"
    with pytest.raises(NoAnalystsError, match="^condition Z .*the paper benchmark's sessions name no analyst"):
        check_condition(load_conditions(_file(tmp_path, scoped + "    main_run: [paper]\n"))["Z"])
    path = _file(tmp_path, scoped + "    main_run: [extended, papers]\n")
    with pytest.raises(ConfigError, match=r"field 'conditions.Z.main_run': expected true, false or a list .* got 'papers'"):
        check_condition(load_conditions(path)["Z"])
    with pytest.raises(ConfigError, match=r"field 'conditions.Z.main_run'"):
        load_conditions(_file(tmp_path, scoped + "    main_run: []\n"))
    check_condition(load_conditions(_file(tmp_path, scoped + "    main_run: [extended]\n"))["Z"])
