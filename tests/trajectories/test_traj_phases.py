"""Phase classification: rules are data, accuracy on the hand-labelled set, clear config errors."""

from __future__ import annotations

from collections import Counter

import pytest

from memsql_assets.lib.errors import ConfigError
from memsql_assets.lib.trajectories.phases import (
    LABELLED_STEPS,
    classifier_accuracy,
    classify,
    load_rules,
    read_labelled,
)
from memsql_assets.lib.trajectories.trace import Step


def test_labelled_set_is_large_and_varied():
    labelled = read_labelled(LABELLED_STEPS)
    assert len(labelled) >= 40
    counts = Counter(phase for _, phase in labelled)
    assert min(counts.values()) >= 8
    assert len({s.tool for s, _ in labelled}) >= 15
    assert any(s.calls for s, _ in labelled)  # composite steps
    assert any(s.error for s, _ in labelled)


def test_accuracy_at_least_090():
    report = classifier_accuracy()
    print(report.as_json())
    assert report.n >= 40
    assert report.accuracy >= 0.9, report.mistakes


def test_by_what_a_step_does_not_where_it_stands():
    assert classify(Step("get_ddl", {"table": "district"}, "", None)) == "explore"
    assert classify(Step("execute_sql", {"sql": "WITH a AS (SELECT 1) SELECT * FROM a"}, "")) == "execute"
    assert classify(Step("execute_sql", {"sql": "SELECT COUNT(*) AS n FROM (SELECT 1)"}, "")) == "validate"
    assert classify(Step("execute_sql", {"sql": "PRAGMA table_info(loan)"}, "")) == "explore"
    assert classify(Step("validate_result", {"sql": "SELECT 1"}, "", "result is empty")) == "validate"


def test_rule_file_errors_name_the_field(tmp_path):
    bad = tmp_path / "rules.yaml"
    bad.write_text("rules:\n  - name: x\n    phase: explor\n    tool: get_ddl\n")
    with pytest.raises(ConfigError, match=r"rules\[0\]\.phase"):
        load_rules(bad)
    bad.write_text("rules:\n  - name: x\n    phase: explore\n    sql: '(unclosed'\n")
    with pytest.raises(ConfigError, match=r"rules\[0\]\.sql"):
        load_rules(bad)
    bad.write_text("rules:\n  - name: x\n    phase: explore\n    tools: get_ddl\n")
    with pytest.raises(ConfigError, match=r"rules\[0\]\.tools"):
        load_rules(bad)


def test_custom_rules_file(tmp_path):
    f = tmp_path / "rules.yaml"
    f.write_text("default: execute\nrules:\n  - name: ddl\n    phase: explore\n    tool: get_ddl\n")
    rules = load_rules(f)
    assert classify(Step("get_ddl", {}, ""), rules) == "explore"
    assert classify(Step("anything", {}, ""), rules) == "execute"
