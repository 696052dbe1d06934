"""End-to-end store build on the embedded sources (N=30, real Chroma in a tmp dir) and retrieval."""

from __future__ import annotations

import json

import pytest

from memsql_assets.lib.memory.chroma import chroma_client
from memsql_assets.lib.trajectories.leakage import normalize_question
from memsql_assets.lib.trajectories.store import (
    FULL,
    STORE_REPORT_FILE,
    QuestionPlan,
    build_trajectory_store,
    plan_questions,
    retrieve,
    search,
)

N = 30


# Every test here builds or reads the default store over the whole benchmark.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def store(embedded_dbs, embedded_turns, tmp_path_factory):
    home = tmp_path_factory.mktemp("traj_store")
    client = chroma_client(home)
    bench = {t["question"] for t in embedded_turns}
    json_dir = home / "trajectories"
    (json_dir).mkdir()
    (json_dir / "northwind-ffffffffffff.json").write_text("{}")  # stale file of an earlier build
    report = build_trajectory_store(
        embedded_dbs,
        N,
        seed=0,
        theta=0.3,
        max_len=3,
        exclude_questions=bench,
        chroma_client=client,
        collection="test-trajectories",
        json_dir=json_dir,
    )
    return client, report, json_dir, bench


def test_report(store, embedded_dbs):
    _, report, json_dir, bench = store
    assert sum(report.allocation.values()) == N
    assert report.questions_per_db == report.allocation
    assert report.all_final_sql_ok and report.failed_final_sql == []
    assert report.composites and all(c.support >= 0.3 for c in report.composites)
    stats = report.composite_stats
    assert stats["mean_steps_saved"] > 0
    assert stats["with_composites"]["tool_calls_per_step"] > 1.0
    assert set(report.phase_distribution) == {"explore", "execute", "validate"}
    saved = json.loads((json_dir / STORE_REPORT_FILE).read_text())
    assert saved["allocation"] == report.allocation and saved["trajectories"] == N
    bench_norm = {normalize_question(b) for b in bench}
    assert not any(
        normalize_question(json.loads((json_dir / f"{q}.json").read_text())["question"]["text"]) in bench_norm
        for q in report.question_ids
    )


def test_json_copies(store):
    _, report, json_dir, _ = store
    files = sorted(p.name for p in json_dir.glob("*-*.json"))
    assert files == sorted(f"{q}.json" for q in report.question_ids)  # stale file removed
    doc = json.loads((json_dir / files[0]).read_text())
    assert {"question", "trajectory", "markdown"} <= set(doc)
    assert all(s["phase"] in ("explore", "execute", "validate") for s in doc["trajectory"]["steps"])
    assert doc["markdown"][FULL].startswith("# Trajectory: ")


def test_chroma_documents(store):
    client, report, _, _ = store
    col = client.get_collection("test-trajectories")
    assert col.count() == report.documents
    got = col.get(where={"phase": FULL}, include=["metadatas"])
    assert len(got["ids"]) == N
    meta = got["metadatas"][0]
    assert {"db", "phase", "question_id", "step_count", "final_sql_ok"} <= set(meta)


def test_retrieval_is_scoped_to_one_database(store):
    client, _, _, _ = store
    # a question that reads like SEC data must still only return Northwind trajectories
    for q in (
        "What was Apple revenue in fiscal year 2022 in annual_financials?",
        "How many Orders did each customer place?",
    ):
        hits = search(client, "northwind", q, k=10, collection="test-trajectories")
        assert hits and all(h.db == "northwind" and h.question_id.startswith("northwind-") for h in hits)
    sec = retrieve(
        client, "sec_edgar", "How many Orders did each customer place?", collection="test-trajectories"
    )
    assert sec is not None and sec.db == "sec_edgar"
    assert retrieve(client, "no_such_db", "anything", collection="test-trajectories") is None


def test_retrieve_most_similar_whole_or_phase(store):
    client, report, json_dir, _ = store
    qid = next(q for q in report.question_ids if q.startswith("bird_financial-"))
    text = json.loads((json_dir / f"{qid}.json").read_text())["question"]["text"]
    whole = retrieve(client, "bird_financial", text, collection="test-trajectories")
    assert whole.question_id == qid and whole.similarity == pytest.approx(1.0, abs=1e-3)
    assert whole.markdown.startswith(f"# Trajectory: {text}") and "## Final SQL" in whole.markdown
    explore = retrieve(client, "bird_financial", text, phase="explore", collection="test-trajectories")
    assert explore.markdown.startswith("# Explore steps for:") and "## Execute" not in explore.markdown
    with pytest.raises(ValueError):
        retrieve(client, "bird_financial", text, phase="plan", collection="test-trajectories")


def test_plan_is_deterministic(embedded_dbs, store):
    _, report, _, bench = store
    plan = plan_questions(embedded_dbs, N, 0, bench)
    assert sorted(q.id for qs in plan.questions.values() for q in qs) == sorted(report.question_ids)


def test_plan_round_trips_through_json(embedded_dbs):
    plan = plan_questions(embedded_dbs, 9, 0, set())
    again = QuestionPlan.from_file_json(json.loads(json.dumps(plan.to_file_json())), embedded_dbs)
    assert again.questions == plan.questions and again.allocation == plan.allocation
