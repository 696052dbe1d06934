"""M0's `scope` (mem0_memory.py), on a real mem0 store: per session a session searches only its own
turns; per analyst also those of its analyst's sessions of earlier waves, never another analyst's."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.memory.mem0_memory import Mem0Memory, Mem0Params
from memsql_assets.lib.memory.protocol import MemoryContext, MemoryTurn, Visibility, opened
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK

# SEC-X-039 continues SEC-X-007 (analyst A7); SEC-X-008 is analyst A8's.
ANALYSTS = {"SEC-X-007": "A7", "SEC-X-008": "A8", "SEC-X-039": "A7"}
TAUGHT = {
    "SEC-X-007": "When I say my metric, I mean net income. Show it for Corvantis in 2019.",
    "SEC-X-008": "When I say my metric, I mean total assets. Show it for Larkwell in 2021.",
}


def _ctx(home: Path, scope: str) -> MemoryContext:
    return MemoryContext(
        home=home, run_id=f"r-{scope}", model="m", condition=f"M0-{scope}", benchmark=EXTENDED_BENCHMARK,
        benchmark_version="v", epoch=0, sample=None, store_dir=home / "store" / scope, progress_dir=home / "p",
        questions=[], context_mode=ContextMode.OBSERVED,
    )  # fmt: skip


def _payload(sid: str, question: str) -> dict:
    return {"session_id": sid, "turn_index": 1, "source": "SEC", "question": question, "sql": "SELECT 1"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = benchmark_dir(tmp_path, EXTENDED_BENCHMARK) / "sessions.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.table({"session_id": list(ANALYSTS), "analyst": list(ANALYSTS.values())}), path)
    return tmp_path


def _retrieved(memory: Mem0Memory) -> list[str]:
    """The sessions whose turns SEC-X-039's first turn retrieves."""
    turn = MemoryTurn("SEC-X-039", 1, "SEC", "From last time: my metric for Corvantis in 2020?", ())
    return [p["session_id"] for p in memory.retrieve(turn, None).similar]


def _searched(memory: Mem0Memory) -> list[str]:
    """What SEC-X-039's first turn retrieves after a first wave of SEC-X-007 and SEC-X-008."""
    memory.reset(set())
    for sid, question in TAUGHT.items():
        memory.persist(_payload(sid, question))
    memory.end_wave(list(TAUGHT))
    return _retrieved(memory)


def test_mem0_per_analyst_retrieves_the_analysts_earlier_session_only(home):
    scoped = Mem0Memory(Mem0Params(scope="analyst"))
    assert scoped.visibility == Visibility.WAVES, "it outlives a session: its sessions run in waves"
    with opened(scoped, _ctx(home, "analyst")):
        assert _searched(scoped) == ["SEC-X-007"]
        assert scoped.size().entries == 2
        # The session's own turns come first (most recent first), then its analyst's earlier session's.
        scoped.persist(_payload("SEC-X-039", "Net income of Corvantis in 2020, please."))
        assert _retrieved(scoped) == ["SEC-X-039", "SEC-X-007"]
        scoped.reset({"SEC-X-008"})  # a resume keeps exactly the finished sessions
        assert _retrieved(scoped) == []
    own = Mem0Memory(Mem0Params())
    assert own.params.scope == "session" and own.visibility == Visibility.SESSION
    with opened(own, _ctx(home, "session")):
        assert _searched(own) == []


def test_mem0_scope_is_session_or_analyst():
    with pytest.raises(ValueError, match="scope"):
        Mem0Params(scope="shared")
