"""Contamination by value (evaluation/contamination.py) on hand-built BIRD sessions: a failed turn whose
SQL takes a value from another analyst's session that the memory retrieved is contaminated, naming that
session; a value of the turn's own session (the status a correction overwrote), or of an earlier
session of the same analyst, is not. An earlier result (an analyst's ranking query) counts from any
session that returned or re-used it."""

from __future__ import annotations

import dataclasses
import functools
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from memsql_assets.lib.benchmark.generate import Session
from memsql_assets.lib.benchmark.store import write_benchmark
from memsql_assets.lib.evaluation.contamination import SessionValues
from memsql_assets.lib.evaluation.score import score_turn
from memsql_assets.lib.sql.sandbox import open_readonly
from tests.evaluation_runs.hand_sessions import BIRD, session

OWN = {"r1": "Prague", "r2": "south Bohemia", "r3": "north Bohemia", "s1": "A", "s2": "C"}
SAME_ANALYST = {"r1": "central Bohemia", "r2": "west Bohemia", "r3": "north Bohemia", "s1": "B", "s2": "A"}
OTHER_ANALYST = {"r1": "north Moravia", "r2": "east Bohemia", "r3": "east Bohemia", "s1": "D", "s2": "B"}


def _renamed(s: Session, sid: str) -> Session:
    turns = [dataclasses.replace(t, session_id=sid) for t in s.turns]
    return dataclasses.replace(s, session_id=sid, turns=turns)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """BIRD-1-003 (analyst A1) asks; BIRD-1-002 is A1's earlier session, BIRD-1-001 analyst A2's."""
    out = tmp_path_factory.mktemp("by_value") / "benchmark"
    profiles = {"BIRD-1-001": OTHER_ANALYST, "BIRD-1-002": SAME_ANALYST, "BIRD-1-003": OWN}
    sessions = [_renamed(session("bird_financial", "BIRD", BIRD, p), sid) for sid, p in profiles.items()]
    write_benchmark(out, sessions)
    sessions_file = out / "sessions.parquet"
    table = pq.read_table(sessions_file)
    pq.write_table(table.append_column("analyst", pa.array(["A2", "A1", "A1"])), sessions_file)
    return out, {s.session_id: s for s in sessions}


def test_a_value_from_another_analysts_session_is_contamination(bench, embedded_dbs):
    out, sessions = bench
    values = SessionValues(out)
    # Turn 5: back to the region we began with (Prague), with the corrected status C.
    turn = dataclasses.asdict(sessions["BIRD-1-003"].turns[4])
    assert "'Prague'" in turn["gt_sql"] and "'C'" in turn["gt_sql"]
    retrieved = ["BIRD-1-003", "BIRD-1-002", "BIRD-1-001"]
    conn = open_readonly(embedded_dbs["bird_financial"])
    try:

        def scored(sql: str, among: list[str] = retrieved):
            return score_turn(turn, sql, conn, foreign=functools.partial(values.source, turn, sessions=among))

        leaked = scored(turn["gt_sql"].replace("'Prague'", "'north Moravia'"))
        assert not leaked.ex_strict and leaked.contaminated and leaked.contamination_source == "BIRD-1-001"
        # The same value is no contamination when no memory retrieved that session.
        assert not scored(turn["gt_sql"].replace("'Prague'", "'north Moravia'"), retrieved[:2]).contaminated
        # Any filter counts: status D, too, only analyst A2 held.
        assert scored(turn["gt_sql"].replace("'C'", "'D'")).contamination_source == "BIRD-1-001"
        # The turn's own session's overwritten status (A, stale) and its other region are its own.
        stale = scored(turn["gt_sql"].replace("'C'", "'A'"))
        assert not stale.ex_strict and not stale.contaminated
        assert not scored(turn["gt_sql"].replace("'Prague'", "'south Bohemia'")).contaminated
        # The analyst's own earlier session (what a continuing session rightly reads) is never contamination.
        assert not scored(turn["gt_sql"].replace("'Prague'", "'central Bohemia'")).contaminated
        # A value nobody held is a plain error; a correct answer is never contaminated.
        assert not scored(turn["gt_sql"].replace("'Prague'", "'south Moravia'")).contaminated
        assert not scored(turn["gt_sql"]).contaminated
    finally:
        conn.close()


def test_without_an_analyst_column_each_session_is_its_own_analyst(bench, tmp_path):
    out, sessions = bench
    paper = tmp_path / "benchmark"
    write_benchmark(paper, list(sessions.values()))  # the paper's sessions schema: no analyst
    turn = dataclasses.asdict(sessions["BIRD-1-003"].turns[4])
    sql = turn["gt_sql"].replace("'Prague'", "'central Bohemia'")
    assert SessionValues(paper).source(turn, sql, ["BIRD-1-002"]) == "BIRD-1-002"
    assert SessionValues(out).source(turn, sql, ["BIRD-1-002"]) is None


RANKING = (
    "SELECT l.account_id, l.amount FROM loan l JOIN disp d ON d.account_id = l.account_id AND d.type = 'OWNER' "
    "JOIN client c ON c.client_id = d.client_id JOIN district di ON di.district_id = c.district_id "
    "WHERE di.A3 = '{region}' AND l.status = '{status}' ORDER BY l.amount DESC, l.account_id LIMIT 3"
)
REUSE = "SELECT ROUND(SUM(l.payments), 2) AS total_payments FROM loan l WHERE l.account_id IN (SELECT account_id FROM ({}))"


def _history(analyst: str, region: str, status: str) -> list[dict]:
    """An analyst's teaching session, which binds its region and status and returns its ranking, and the
    later session that re-uses the ranking (an `earlier_result` turn: it binds and states nothing)."""
    ranking = RANKING.format(region=region, status=status)
    teach, later = f"BIRD-X-{analyst}1", f"BIRD-X-{analyst}2"
    return [
        {"session_id": teach, "gt_sql": "SELECT 1", "state_updates": {"region": region, "status": status}},
        {"session_id": teach, "gt_sql": ranking, "state_updates": {"top_accounts": ranking}},
        {"session_id": later, "gt_sql": REUSE.format(ranking), "state_updates": {}},
    ]


@pytest.fixture
def histories(tmp_path):
    """Analyst A's teaching and later sessions, and analyst B's (another region and status)."""
    turns = _history("A", "south Bohemia", "C") + _history("B", "north Moravia", "D")
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    sids = list(dict.fromkeys(t["session_id"] for t in turns))
    pq.write_table(pa.table({"session_id": sids, "analyst": [s[-2] for s in sids]}), tmp_path / "sessions.parquet")
    return tmp_path, {t["session_id"]: t for t in turns}


def test_a_ranking_from_another_analysts_session_that_reused_it_is_contamination(histories):
    bench, last_turn = histories
    turn = last_turn["BIRD-X-A2"]  # analyst A's later session asks for its own ranking's payments
    values = SessionValues(bench)
    theirs = REUSE.format(RANKING.format(region="north Moravia", status="D"))
    # B's ranking from B's later session, which re-used it without binding its values, or from the
    # session that returned it.
    assert values.source(turn, theirs, ["BIRD-X-B2"]) == "BIRD-X-B2"
    assert values.source(turn, theirs, ["BIRD-X-A1", "BIRD-X-B2", "BIRD-X-B1"]) == "BIRD-X-B2"
    assert values.source(turn, theirs, ["BIRD-X-B1"]) == "BIRD-X-B1"
    # A's own ranking, read from either of A's sessions, with another amount is a plain error.
    own = REUSE.format(RANKING.format(region="south Bohemia", status="C")).replace("payments", "amount")
    assert values.source(turn, own, ["BIRD-X-A1", "BIRD-X-B2"]) is None
    # Without a retrieved session of B, B's ranking came from none of B's sessions.
    assert values.source(turn, theirs, ["BIRD-X-A1"]) is None
    # A turn that re-uses no result reads only what sessions bound or stated: B's later session, none.
    first = {**last_turn["BIRD-X-A1"], "gt_sql": "SELECT 1 FROM district di WHERE di.A3 = 'south Bohemia'"}
    other_region = first["gt_sql"].replace("south Bohemia", "north Moravia")
    assert values.source(first, other_region, ["BIRD-X-B2"]) is None
    assert values.source(first, other_region, ["BIRD-X-B2", "BIRD-X-B1"]) == "BIRD-X-B1"
