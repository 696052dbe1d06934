"""Contamination by provenance on the embedded benchmark: a turn answered with another session's
values is flagged with that session, and recall-probe under C and D shows the cross-session
failures that episodic retrieval causes (SEC-3-001 turn 7 takes `ticker` from SEC-2-021#1)."""

from __future__ import annotations

import json
import shutil

import pytest

from memsql_assets.lib.benchmark.generate import instantiate
from memsql_assets.lib.benchmark.store import write_benchmark
from memsql_assets.lib.benchmark.templates import load_tier_template
from memsql_assets.lib.evaluation.contamination import OtherProfileSQL
from memsql_assets.lib.evaluation.score import score_turn
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.memory.chroma import chroma_client
from memsql_assets.lib.memory.semantic import seed_semantic_memory
from memsql_assets.lib.paths import benchmark_dir, source_db_path
from memsql_assets.lib.sql.sandbox import open_readonly

# Failures recall-probe shows under C on the embedded data, each with the session that supplied the
# keys (found by running it; the reason the provenance check exists).
KNOWN_C = {
    ("SEC-3-001", 7): "SEC-2-031",
    ("SEC-3-001", 9): "SEC-2-043",
    ("SEC-3-002", 9): "SEC-2-043",
}


@pytest.fixture(scope="module")
def sec_home(tmp_path_factory, embedded_dbs, embedded_sessions):
    """Every SEC session of the embedded benchmark (episodic retrieval never crosses sources, so
    these turns retrieve exactly what they retrieve in the whole benchmark)."""
    home = tmp_path_factory.mktemp("sec_home")
    for name, path in embedded_dbs.items():
        target = source_db_path(home, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    write_benchmark(benchmark_dir(home), [s for s in embedded_sessions if s.source == "SEC"])
    seed_semantic_memory(chroma_client(home))
    return home


def turn_of(embedded_turns, session_id: str, turn_index: int) -> dict:
    return next(t for t in embedded_turns if (t["session_id"], t["turn_index"]) == (session_id, turn_index))


def test_a_turn_answered_with_another_sessions_values_is_contaminated(
    sec_home, embedded_dbs, embedded_turns, embedded_sessions
):
    turn = turn_of(embedded_turns, "SEC-3-001", 7)
    provenance = OtherProfileSQL(benchmark_dir(sec_home)).for_turn(turn, ["SEC-3-001", "SEC-2-021"])
    assert list(provenance) == ["SEC-2-021"]  # the turn's own session is never a candidate
    leaked = provenance["SEC-2-021"]
    assert leaked != turn["gt_sql"]
    # Written with the benchmark: the turn's variant walked with the other session's profile.
    own, other = (next(s for s in embedded_sessions if s.session_id == sid) for sid in ("SEC-3-001", "SEC-2-021"))
    variant = next(v for v in load_tier_template("sec_edgar", 3).variants if v.id == own.variant_id)
    assert leaked == instantiate(variant, other.profile, 7)[-1].sql
    conn = open_readonly(embedded_dbs["sec_edgar"])
    try:
        s = score_turn(turn, leaked, conn, provenance=provenance)
        assert not s.ex_strict and s.contaminated and s.contamination_source == "SEC-2-021"
        # The next session's profile is another one: the paper's check does not see this leak.
        assert not s.fallback_match
        assert not score_turn(turn, turn["gt_sql"], conn, provenance=provenance).contaminated
    finally:
        conn.close()


def test_profile_without_the_variants_keys_has_no_instantiation(sec_home, embedded_turns):
    # Tier-2 SEC variants use `metric`, which the tier-3 profile query (ticker_years) does not give.
    turn = turn_of(embedded_turns, "SEC-2-001", 2)
    assert OtherProfileSQL(benchmark_dir(sec_home)).for_turn(turn, ["SEC-3-001"]) == {}


@pytest.mark.parametrize("condition", ["C", "D"])
def test_recall_probe_shows_cross_session_contamination(sec_home, condition):
    # W = 1, the paper's sequential order: which session supplies a key depends on the wave size.
    outcome = evaluate_partition(sec_home, "recall-probe", condition, settings=EvalSettings(wave_size=1))
    flagged = {(r["session_id"], r["turn_index"]): r for r in outcome.rows if r["contaminated"]}
    assert outcome.summary["contaminated"] == len(flagged) >= 3
    assert outcome.summary["fallback_match"] == sum(r["fallback_match"] for r in outcome.rows)
    for (sid, _), r in flagged.items():
        assert not r["ex_strict"] and r["contamination_source"] != sid
        assert r["contamination_source"] in json.loads(r["supplying_sessions"])
        assert set(json.loads(r["supplying_sessions"])) <= set(json.loads(r["retrieved_sessions"]))
    if condition == "C":
        assert {k: r["contamination_source"] for k, r in flagged.items()} == KNOWN_C
    first = flagged[("SEC-3-001", 7)]
    assert json.loads(first["resolved_keys"])["ticker"] == "episodic:SEC-2-031#1"
