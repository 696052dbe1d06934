"""Template instantiation: literals, state carrying, fallbacks, ten-turn spread, any profile count."""

from __future__ import annotations

import hashlib

import pytest

from memsql_assets.lib.benchmark.generate import SESSIONS_PER_TIER, instantiate, ten_turn_indices
from memsql_assets.lib.benchmark.invariants import violations
from memsql_assets.lib.benchmark.pipeline import build_sessions
from memsql_assets.lib.benchmark.store import EXPORT_FIELDS, export_jsonl, write_benchmark
from memsql_assets.lib.benchmark.templates import load_tier_template
from memsql_assets.lib.sql.syntax import sql_literal


def test_sql_literal_quotes_strings_and_keeps_numbers():
    assert sql_literal("B's Beverages") == "'B''s Beverages'"
    assert sql_literal(2023) == "2023"
    assert sql_literal("2023") == "'2023'"
    with pytest.raises(TypeError):
        sql_literal(None)


def test_ten_turn_sessions_are_spread_evenly():
    assert ten_turn_indices(30, 7) == {0, 4, 8, 12, 17, 21, 25}
    assert len(ten_turn_indices(36, 9)) == 9
    assert len(ten_turn_indices(24, 4)) == 4


def test_references_resolve_from_session_state_not_profile():
    variant = load_tier_template("sec_edgar", 3).variants[0]
    profile = {"ticker": "QRVX", "company_name": "Quarvex Corp", "older_year": 2021, "newer_year": 2022}
    turns = instantiate(variant, profile, 9)
    assert turns[0].state_updates == {
        "ticker": "QRVX",
        "metric": "revenue",
        "older_year": 2021,
        "newer_year": 2022,
    }
    assert "af.metric = 'net_income'" in turns[3].sql  # turn 4 reads the metric that turn 3 re-bound
    assert turns[8].question == "And total liabilities?"
    assert "'QRVX'" in turns[8].sql and "(2021, 2022)" in turns[8].sql
    assert turns[2].stated_values == {"metric": "net_income"}


def _tiny_profiles(n: int) -> dict:
    """n synthetic profiles per profile query (shape only; no database needed)."""
    sec = [
        {
            "ticker": f"T{i}",
            "company_name": f"Co {i}",
            "metric": "revenue",
            "metric_label": "revenue",
            "older_year": 2020,
            "newer_year": 2021,
            "n_years": 2,
        }
        for i in range(n)
    ]
    return {
        "sec_edgar": {
            "ticker_metric": sec,
            "ticker_metric_with_net_income": sec,
            "ticker_years": [
                {k: p[k] for k in ("ticker", "company_name", "older_year", "newer_year")} for p in sec
            ],
        },
        "bird_financial": {
            "region_status": [{"region": f"r{i}", "loan_status": "A", "n_loans": 1} for i in range(n)]
        },
        "northwind": {
            "customer_years": [
                {
                    "customer_id": f"C{i}",
                    "company_name": f"Cust {i}",
                    "older_year": "2016",
                    "newer_year": "2017",
                }
                for i in range(n)
            ]
        },
    }


@pytest.mark.parametrize("n_profiles", [1, 2, 7, 500])
def test_any_number_of_profiles_gives_300_sessions_1400_turns(n_profiles):
    sessions = build_sessions(_tiny_profiles(n_profiles))
    turns = [t.__dict__ for s in sessions for t in s.turns]
    assert len(sessions) == 300 and len(turns) == 1400
    assert violations(turns) == []
    assert sum(t["memory_critical"] for t in turns) == 1100


def test_fallback_is_the_next_sessions_ground_truth():
    sessions = {s.session_id: s for s in build_sessions(_tiny_profiles(500))}
    first, second = sessions["NW-2-001"], sessions["NW-2-002"]
    assert second.variant_id != first.variant_id  # variants alternate, so render the same variant...
    for turn in first.turns[1:]:
        assert turn.fallback_sql is not None
        assert (
            repr(second.profile["customer_id"]).strip('"') in turn.fallback_sql
        )  # ...with the neighbour's profile
        assert first.profile["customer_id"] not in turn.fallback_sql
    assert first.turns[0].fallback_sql is None
    last = sessions[f"NW-2-{SESSIONS_PER_TIER['northwind'][2]:03d}"]
    assert sessions["NW-2-001"].profile["customer_id"] in last.turns[1].fallback_sql  # wraps within the tier


def test_output_is_byte_identical_across_runs(tmp_path):
    digests = []
    for run in ("a", "b"):
        paths = write_benchmark(tmp_path / run, build_sessions(_tiny_profiles(13)))
        digests.append({k: hashlib.sha256(p.read_bytes()).hexdigest() for k, p in paths.items()})
    assert digests[0] == digests[1]


def test_export_has_exactly_the_spec_fields(tmp_path):
    sessions = build_sessions(_tiny_profiles(3))
    target = tmp_path / "bench.jsonl"
    n = export_jsonl([t.__dict__ for s in sessions for t in s.turns], target)
    import json

    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert n == len(rows) == 1400
    assert all(tuple(r) == tuple(sorted(EXPORT_FIELDS)) for r in rows)
