"""Episodic and semantic memory on a real persistent ChromaDB with the real all-MiniLM-L6-v2 embeddings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from memtest_helpers import payload

from memsql_assets.lib.memory.chroma import chroma_client, collection_name
from memsql_assets.lib.memory.episodic import EpisodicMemory
from memsql_assets.lib.memory.errors import MemoryServiceError
from memsql_assets.lib.memory.semantic import SEMANTIC_HINTS, SemanticMemory, seed_semantic_memory
from memsql_assets.lib.paths import REPO_ROOT

SEED_PAPER = REPO_ROOT.parent / "shared" / "seeds" / "000_ab8d5b23f27591b8.txt"


def turn(session_id: str, turn_index: int, question: str, sql: str, **state: object) -> dict:
    p = payload(session_id, turn_index, **state)
    p.update(question=question, sql=sql)
    return p


APPLE = turn(
    "SEC-2-001",
    1,
    "Show Apple revenue for 2022 and 2023.",
    "SELECT fiscal_year, value_billions FROM annual_financials WHERE ticker='AAPL' AND metric='revenue'",
    ticker="AAPL",
)
LOANS = turn(
    "BIRD-2-001",
    1,
    "How many loans with status A are there in the Prague region?",
    "SELECT COUNT(*) FROM loan WHERE status='A'",
    region="Prague",
)
NW_SALES = turn(
    "NW-2-001",
    1,
    "What were total sales for customer Around the Horn in 1997?",
    "SELECT ROUND(SUM(UnitPrice*Quantity*(1-Discount)),2) FROM [Order Details]",
    customer="AROUT",
)
MSFT = turn(
    "SEC-2-002",
    1,
    "Show Microsoft net income for 2020 and 2021.",
    "SELECT fiscal_year, value_billions FROM annual_financials WHERE ticker='MSFT' AND metric='net_income'",
    ticker="MSFT",
)


@pytest.fixture
def episodic(chroma) -> EpisodicMemory:
    memory = EpisodicMemory(chroma, collection_name("episodic", "gold", "C", "v1"))
    memory.reset()
    for p in (APPLE, LOANS, NW_SALES, MSFT):
        memory.add(p)
    memory.publish([p["session_id"] for p in (APPLE, LOANS, NW_SALES, MSFT)])  # their wave has finished
    return memory


def test_similar_question_ranks_first(episodic: EpisodicMemory) -> None:
    hits = episodic.query("What was Apple's revenue in 2021?", k=3)
    assert [h["session_id"] for h in hits][0] == "SEC-2-001"
    assert len(hits) == 3
    assert [h["distance"] for h in hits] == sorted(h["distance"] for h in hits)
    first = {k: v for k, v in hits[0].items() if k not in ("distance", "source")}
    assert first == APPLE


def test_source_filter_and_exclude_session(episodic: EpisodicMemory) -> None:
    hits = episodic.query("What was Apple's revenue in 2021?", k=3, source="BIRD")
    assert [h["session_id"] for h in hits] == ["BIRD-2-001"]
    hits = episodic.query("What was Apple's revenue in 2021?", k=3, source="SEC", exclude_session="SEC-2-001")
    assert [h["session_id"] for h in hits] == ["SEC-2-002"]


APPLE_2 = turn(
    "SEC-2-003",
    2,
    "And Apple's revenue for 2021?",
    "SELECT value_billions FROM annual_financials WHERE ticker='AAPL' AND fiscal_year=2021",
    ticker="AAPL",
)
APPLE_1 = turn("SEC-2-003", 1, APPLE["question"], APPLE["sql"], ticker="AAPL")
WAVE_MATE = turn("SEC-2-004", 1, APPLE["question"], "SELECT 'wave mate'", ticker="AAPL")


def test_a_session_sees_its_own_turns_and_earlier_waves_never_a_wave_mate(episodic: EpisodicMemory) -> None:
    """The wave rule (DESIGN decision 6): SEC-2-003 and SEC-2-004 run in one wave after the fixture's."""
    for p in (APPLE_1, APPLE_2, WAVE_MATE):
        episodic.add(p)
    question = "What was Apple's revenue in 2022?"
    seen = [(h["session_id"], h["turn_index"]) for h in episodic.query(question, k=10, session_id="SEC-2-003")]
    assert ("SEC-2-004", 1) not in seen and {("SEC-2-003", 1), ("SEC-2-003", 2), ("SEC-2-001", 1)} <= set(seen)
    # Its own turn ties with the earlier wave's identical one: its own, the most recent, wins.
    same = episodic.query(f"{APPLE['question']}\n{APPLE['sql']}", k=2, session_id="SEC-2-003")
    assert [(h["session_id"], h["turn_index"]) for h in same] == [("SEC-2-003", 1), ("SEC-2-001", 1)]
    mate = [h["session_id"] for h in episodic.query(question, k=10, session_id="SEC-2-004")]
    assert "SEC-2-003" not in mate and mate[0] == "SEC-2-004"
    assert {h["session_id"] for h in episodic.query(question, k=10)} == {"SEC-2-001", "SEC-2-002", "BIRD-2-001", "NW-2-001"}
    episodic.forget_session("SEC-2-004")  # a redone session starts from a clean slate
    assert "SEC-2-004" not in [h["session_id"] for h in episodic.query(question, k=10, session_id="SEC-2-004")]
    other = turn("NW-2-009", 1, "Total sales for Around the Horn in 1998?", "SELECT 'other chain'", customer="AROUT")
    episodic.add(other)  # a session of another source's wave, still running
    episodic.publish(["SEC-2-003", "SEC-2-004"])  # the wave ends: the next wave sees both of its sessions' turns
    later = {h["session_id"] for h in episodic.query(question, k=10, session_id="SEC-2-005")}
    assert {"SEC-2-003", "SEC-2-001"} <= later and "SEC-2-004" not in later
    assert "NW-2-009" not in {h["session_id"] for h in episodic.query(other["question"], k=10, session_id="NW-2-010")}
    episodic.publish(["NW-2-009"])
    assert "NW-2-009" in {h["session_id"] for h in episodic.query(other["question"], k=10, session_id="NW-2-010")}
    assert episodic.count() == 7


def test_upsert_is_idempotent_and_reset_empties(episodic: EpisodicMemory, chroma) -> None:
    episodic.add(APPLE)
    episodic.add(dict(APPLE))
    assert episodic.count() == 4
    assert EpisodicMemory(chroma, episodic.name).count() == 0, "new turns reach Chroma at flush"
    assert episodic.flush() == 4 and episodic.flush() == 0
    reopened = EpisodicMemory(chroma, episodic.name)  # reopened with our embedding function
    assert reopened.count() == 4
    assert reopened.query("Apple revenue", k=1)[0]["session_id"] == "SEC-2-001"
    reopened.reset()
    assert reopened.count() == 0 and reopened.query("anything") == []


def test_semantic_seed_is_six_hints_and_sales_question_gets_the_formula(chroma) -> None:
    assert seed_semantic_memory(chroma) == 6
    assert seed_semantic_memory(chroma) == 6  # idempotent
    memory = SemanticMemory(chroma)
    top = memory.query("What were the total sales for the customer Around the Horn in 1997?", source="NW")
    assert len(top) == 1 and top[0]["id"] == "NW-2" and "UnitPrice * Quantity" in top[0]["text"]
    assert memory.query("Which year was revenue higher?", source="SEC")[0]["source"] == "SEC"
    assert not hasattr(memory, "add")


def test_semantic_memory_unseeded_says_to_materialize(chroma) -> None:
    with pytest.raises(MemoryServiceError, match="semantic_memory"):
        SemanticMemory(chroma, "memsql-semantic-missing")


def _normalise_seed_text(text: str) -> str:
    # Undo the HTML extraction's typesetting (see semantic.py's docstring): escapes, quote glyphs.
    text = re.sub(r"\\(.)", r"\1", text)
    return text.replace("\u201c", "").replace("\u201d", "").replace("\u2019", "'").replace("\u2018", "'")


def test_hints_are_verbatim_from_the_paper() -> None:
    if not SEED_PAPER.exists():
        pytest.skip(f"seed paper not available at {SEED_PAPER}")
    raw = SEED_PAPER.read_text(encoding="utf-8")
    section = raw[
        raw.index("Semantic Memory Seed") : raw.index("Per-Condition Prompt Composition".replace("-", "\\-"))
    ]
    seed = _normalise_seed_text(section)
    assert len(SEMANTIC_HINTS) == 6
    assert [(h.source, h.index) for h in SEMANTIC_HINTS] == [
        ("NW", 1),
        ("NW", 2),
        ("SEC", 1),
        ("SEC", 2),
        ("BIRD", 1),
        ("BIRD", 2),
    ]
    for hint in SEMANTIC_HINTS:
        assert f"({hint.index}) {hint.text}" in seed, hint


def test_collection_names_are_valid_and_deterministic() -> None:
    assert collection_name("episodic", "gold", "C", "v1") == "episodic-gold-C-v1"
    odd = collection_name("episodic", "openai/gpt-5-mini", "B_wm5", "sha:abc")
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]", odd) and ".." not in odd
    assert odd == collection_name("episodic", "openai/gpt-5-mini", "B_wm5", "sha:abc")
    assert odd != collection_name("episodic", "openai_gpt-5-mini", "B_wm5", "sha_abc")
    assert len(collection_name("a")) >= 3 and len(collection_name("x" * 600)) <= 512
    assert collection_name("..a..b..") != "a.b"
    assert not re.fullmatch(r"[\d.]+", collection_name("1.2.3.4"))
    with pytest.raises(MemoryServiceError):
        collection_name("")


def test_corrupt_persistent_directory_is_named(tmp_path: Path) -> None:
    home = tmp_path / "corrupt_home"
    (home / "chroma").mkdir(parents=True)
    (home / "chroma" / "chroma.sqlite3").write_bytes(b"this is not a database" * 100)
    with pytest.raises(MemoryServiceError, match=r"corrupt_home/chroma.*delete the directory"):
        chroma_client(home)


def test_unreachable_chroma_server_fails_fast(tmp_path: Path) -> None:
    with pytest.raises(MemoryServiceError, match=r"127\.0\.0\.1:1 is unreachable"):
        chroma_client(tmp_path, server_url="http://127.0.0.1:1")
    with pytest.raises(MemoryServiceError, match="malformed|http://host:port"):
        chroma_client(tmp_path, server_url="ftp://x:1")


def test_analyst_scope_retrieves_only_the_askers_analysts_sessions(episodic: EpisodicMemory, tmp_path: Path) -> None:
    """SEC-2-005 continues SEC-2-002 (analyst A2): scoped, it never retrieves analyst A1's Apple turn."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from memsql_assets.lib.memory.episodic import analyst_peers

    path = tmp_path / "sessions.parquet"
    pq.write_table(
        pa.table({"session_id": ["SEC-2-001", "SEC-2-002", "SEC-2-005"], "analyst": ["A1", "A2", "A2"]}), path
    )
    peers = analyst_peers(path)
    assert peers["SEC-2-005"] == {"SEC-2-002", "SEC-2-005"} and peers["SEC-2-001"] == {"SEC-2-001"}
    question = "Show Apple revenue for 2022 and 2023 again."
    shared = episodic.query(question, k=2, source="SEC", session_id="SEC-2-005")
    assert [h["session_id"] for h in shared] == ["SEC-2-001", "SEC-2-002"]
    scoped = episodic.query(question, k=2, source="SEC", session_id="SEC-2-005", among=peers["SEC-2-005"])
    assert [h["session_id"] for h in scoped] == ["SEC-2-002"]


def test_analyst_scope_needs_sessions_that_name_their_analyst(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from memsql_assets.lib.errors import SourceError
    from memsql_assets.lib.memory.builtin import EpisodicParams
    from memsql_assets.lib.memory.episodic import analyst_peers

    path = tmp_path / "sessions.parquet"
    pq.write_table(pa.table({"session_id": ["SEC-2-001"]}), path)
    with pytest.raises(SourceError, match="sessions.parquet.*has no analyst column"):
        analyst_peers(path)
    assert EpisodicParams(window=5).scope == "shared"
    with pytest.raises(ValueError, match="scope"):
        EpisodicParams(window=5, scope="team")
