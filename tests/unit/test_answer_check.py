"""The answers check: paraphrase agrees with the ground truth, requirements are present, and no
LIMIT 1 ground truth rests on a tie-break; each failure names turn, template file, variant and results."""

from __future__ import annotations

import copy

import pytest

from memsql_assets.lib.benchmark.answer_check import check_answers
from memsql_assets.lib.benchmark.ties import tie_probe_sql

# The district question as it was before it stated its tie rule: the alphabetical tie-break decided.
DISTRICT_LIMIT_1 = (
    "SELECT di.A2 AS district_name FROM loan l JOIN account a ON a.account_id = l.account_id "
    "JOIN disp d ON d.account_id = a.account_id AND d.type = 'OWNER' "
    "JOIN client c ON c.client_id = d.client_id JOIN district di ON di.district_id = c.district_id "
    "WHERE di.A3 = {region} AND l.status = {loan_status} "
    "GROUP BY di.district_id, di.A2 ORDER BY COUNT(*) DESC, di.A2 LIMIT 1"
)


def _one(turns, session_id, turn_index):
    return next(t for t in turns if t["session_id"] == session_id and t["turn_index"] == turn_index)


@pytest.mark.slow
def test_shipped_benchmark_passes_on_the_embedded_databases(embedded_turns, embedded_dbs):
    report = check_answers(embedded_turns, embedded_dbs)
    assert report.ok, report.failures[:5]
    assert report.checked == 1400
    # "which year was higher" / "which product" / "which category": LIMIT 1 ground truths and fallbacks
    queries = [t[k] for t in embedded_turns for k in ("gt_sql", "fallback_sql") if t[k]]
    assert report.limit_one == sum(tie_probe_sql(q) is not None for q in queries) > 400


def test_disagreeing_paraphrase_names_turn_template_variant_and_both_results(embedded_turns, embedded_dbs):
    turn = copy.deepcopy(_one(embedded_turns, "NW-2-001", 3))
    turn["paraphrase_sql"] = turn["gt_sql"].replace("COUNT(*)", "COUNT(*) + 1")
    (failure,) = check_answers([turn], embedded_dbs).failures
    assert failure["turn"] == "NW-2-001#3"
    assert failure["template"] == "memsql_assets/lib/benchmark/templates/northwind.t2.yaml"
    assert failure["variant"] == turn["variant_id"] == "nw-t2-year-switch"
    assert failure["problem"] == "paraphrase result differs from the ground truth"
    assert failure["gt_sql_result"].startswith("1 row [order_count]: (")
    assert failure["paraphrase_sql_result"].startswith("1 row [order_count]: (")
    assert failure["gt_sql_result"] != failure["paraphrase_sql_result"]


def test_missing_requirement_or_paraphrase_fails(embedded_turns, embedded_dbs):
    turn = copy.deepcopy(_one(embedded_turns, "SEC-3-001", 2))
    turn["output_requirements"] = ""
    turn["paraphrase_sql"] = None
    failures = check_answers([turn], embedded_dbs).failures
    assert [f["problem"] for f in failures] == ["no output_requirements", "no paraphrase SQL"]
    assert {f["template"] for f in failures} == {"memsql_assets/lib/benchmark/templates/sec_edgar.t3.yaml"}


@pytest.mark.slow
def test_limit_1_ground_truth_with_a_tie_fails_the_check(embedded_turns, embedded_dbs):
    broken = []
    for t in embedded_turns:
        if t["variant_id"] == "bird-t3-portfolio" and t["turn_index"] == 4:
            state = _one(embedded_turns, t["session_id"], 1)["state_updates"]
            region, status = (f"'{state[k]}'" for k in ("region", "loan_status"))
            t = {**t, "gt_sql": DISTRICT_LIMIT_1.format(region=region, loan_status=status)}
            t["paraphrase_sql"] = t["gt_sql"]
            broken.append(t)
    report = check_answers(broken, embedded_dbs)
    assert report.limit_one == len(broken) == 24
    tied = [f for f in report.failures if f["problem"].startswith("LIMIT 1 gt_sql: the top two rows tie")]
    assert 0 < len(tied) < len(broken)  # some districts win outright, others tie
    assert all(f["variant"] == "bird-t3-portfolio" and f["tied_rows"].startswith("2 rows") for f in tied)


def test_tie_probe_reads_only_order_by_limit_1_queries():
    assert tie_probe_sql("SELECT a FROM t ORDER BY a") is None
    assert tie_probe_sql("SELECT a FROM t ORDER BY a LIMIT 2") is None
    probe = tie_probe_sql("SELECT a AS x FROM t GROUP BY a ORDER BY COUNT(*) DESC, a LIMIT 1")
    assert probe == (
        "SELECT a AS x, COUNT(*) AS memsql_tie_key FROM t GROUP BY a ORDER BY COUNT(*) DESC, a LIMIT 2"
    )
