"""Working memory against a real private redis-server: window, order, clearing, restarts."""

from __future__ import annotations

import pytest
import redis
from memtest_helpers import payload

from memsql_assets.lib.memory.errors import MemoryPayloadError, MemoryServiceError
from memsql_assets.lib.memory.redis_service import RedisServer
from memsql_assets.lib.memory.working import WorkingMemory


def test_window_trimming_and_recall_order(redis_client: redis.Redis) -> None:
    wm = WorkingMemory(redis_client, "run1")
    for turn in range(1, 8):
        wm.append("SEC-3-001", payload("SEC-3-001", turn), window=5)
    got = wm.recall("SEC-3-001", window=5)
    assert [p["turn_index"] for p in got] == [7, 6, 5, 4, 3]
    assert [p["turn_index"] for p in wm.recall("SEC-3-001", window=2)] == [7, 6]
    assert redis_client.llen(wm.key("SEC-3-001")) == 5
    assert got[0] == payload("SEC-3-001", 7)


def test_binding_of_turn_1_falls_out_of_window_2_after_turn_3(redis_client: redis.Redis) -> None:
    wm = WorkingMemory(redis_client, "run-b")
    sid = "SEC-2-001"

    def visible_keys() -> set[str]:
        return {k for p in wm.recall(sid, window=2) for k in p["state_updates"]}

    wm.append(sid, payload(sid, 1, ticker="AAPL"), window=2)
    wm.append(sid, payload(sid, 2, year=2023), window=2)
    assert visible_keys() == {"ticker", "year"}
    wm.append(sid, payload(sid, 3), window=2)
    assert visible_keys() == {"year"}  # not cumulative: turn 1 left the window, and its binding with it


def test_clear_one_session_and_one_run_only(redis_client: redis.Redis) -> None:
    run_a, run_b = WorkingMemory(redis_client, "runA"), WorkingMemory(redis_client, "runA2")
    for wm in (run_a, run_b):
        for sid in ("NW-2-001", "NW-2-002"):
            wm.append(sid, payload(sid, 1), window=2)
    redis_client.set("unrelated", "x")
    run_a.clear("NW-2-001")
    assert run_a.recall("NW-2-001", 2) == [] and len(run_a.recall("NW-2-002", 2)) == 1
    assert len(run_b.recall("NW-2-001", 2)) == 1
    assert run_a.clear_run() == 1
    assert run_a.recall("NW-2-002", 2) == []
    assert len(run_b.recall("NW-2-001", 2)) == 1 and len(run_b.recall("NW-2-002", 2)) == 1
    assert redis_client.get("unrelated") == "x"


def test_run_id_with_glob_characters_clears_only_itself(redis_client: redis.Redis) -> None:
    star, plain = WorkingMemory(redis_client, "m*"), WorkingMemory(redis_client, "mx")
    star.append("BIRD-1-001", payload("BIRD-1-001", 1), window=2)
    plain.append("BIRD-1-001", payload("BIRD-1-001", 1), window=2)
    assert star.clear_run() == 1
    assert len(plain.recall("BIRD-1-001", 2)) == 1


def test_repeated_append_of_same_payload_is_idempotent(redis_client: redis.Redis) -> None:
    wm = WorkingMemory(redis_client, "idem")
    wm.append("NW-3-001", payload("NW-3-001", 1), window=5)
    wm.append("NW-3-001", payload("NW-3-001", 1), window=5)
    assert len(wm.recall("NW-3-001", 5)) == 1
    assert 0 < redis_client.ttl(wm.key("NW-3-001")) <= wm.ttl_s  # a crashed run's keys expire


def test_bad_payload_and_window_are_rejected_clearly(redis_client: redis.Redis) -> None:
    wm = WorkingMemory(redis_client, "bad")
    broken = payload("NW-2-001", 2)
    del broken["sql"]
    with pytest.raises(MemoryPayloadError, match=r"'NW-2-001' turn 2.*'sql'"):
        wm.append("NW-2-001", broken, window=2)
    with pytest.raises(MemoryPayloadError, match="another session"):
        wm.append("NW-2-002", payload("NW-2-001", 1), window=2)
    with pytest.raises(MemoryPayloadError, match="window"):
        wm.append("NW-2-001", payload("NW-2-001", 1), window=0)
    with pytest.raises(MemoryPayloadError, match="run_id"):
        WorkingMemory(redis_client, "a:b")


def test_redis_restart_between_two_appends(redis_server: RedisServer) -> None:
    wm = WorkingMemory(redis_server.client(), "restart")
    wm.append("SEC-3-002", payload("SEC-3-002", 1), window=5)
    redis_server.restart()
    wm.append("SEC-3-002", payload("SEC-3-002", 2), window=5)  # reconnects; turn 1 was lost (--save "")
    assert [p["turn_index"] for p in wm.recall("SEC-3-002", 5)] == [2]


def test_redis_gone_raises_naming_the_operation(redis_server: RedisServer) -> None:
    wm = WorkingMemory(redis_server.client(), "gone", attempts=2, backoff_s=0.01)
    redis_server.stop()
    with pytest.raises(MemoryServiceError, match=r"working memory recall .*'gone'.* 2 attempts"):
        wm.recall("SEC-1-001", 2)


def test_append_replies_with_the_window_that_recall_reads(redis_client: redis.Redis) -> None:
    wm = WorkingMemory(redis_client, "reply")
    for turn in range(1, 5):
        window = wm.append("SEC-3-002", payload("SEC-3-002", turn), window=2)
        assert window == wm.recall("SEC-3-002", window=2)
    assert [p["turn_index"] for p in window] == [4, 3]
