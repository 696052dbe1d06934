"""The reference agent over the wide variant of every source (sources.yaml `variant: wide`), with its
trajectory store built over it: without the schema in its prompt it explores (median steps >= 3 per
source under T) and the retrieved trajectory saves some of it (lower under E); with the schema in its
prompt it submits at once."""

from __future__ import annotations

import statistics

import pytest

from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.trajectories.lookup import trajectory_lookup
from memsql_assets.lib.vocabulary import REFERENCE_AGENT, SOURCE_PREFIXES

SAMPLE = EvalSettings(sessions=9)  # one session of each source x tier


@pytest.fixture(scope="module")
def wide_home(trajectory_home, wide_dbs):
    """small_home's benchmark over the wide sources, with a trajectory store built over them."""
    return trajectory_home("wide_home", wide_dbs)


def median_steps(home, condition: str) -> dict[str, float]:
    result = evaluate_partition(home, REFERENCE_AGENT, condition, SAMPLE, trajectory_factory=trajectory_lookup)
    assert result.summary["ex_strict"] == 100.0, result.summary["error_classes"]
    by_source: dict[str, list[int]] = {}
    for row in result.rows:
        by_source.setdefault(row["source"], []).append(row["steps"])
    assert set(by_source) == set(SOURCE_PREFIXES.values())
    return {source: statistics.median(steps) for source, steps in by_source.items()}


@pytest.mark.slow
def test_on_wide_schemas_the_reference_agent_explores_and_the_trajectory_saves_steps(wide_home):
    t, e, t_schema = (median_steps(wide_home, c) for c in ("T", "E", "T_schema"))
    assert all(t[s] >= 3 and e[s] < t[s] for s in t), (t, e)
    assert set(t_schema.values()) == {1}
