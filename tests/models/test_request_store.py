"""Request store: key stability, layout, atomic records, and that no secret ever reaches disk."""

from __future__ import annotations

import json

from model_fakes import FAKE_SECRET

from memsql_assets.lib.models.request_store import SHARDS, RequestStore, request_key, scrub

MSGS = [{"role": "system", "content": "You write SQLite."}, {"role": "user", "content": "How many orders?"}]


def test_key_is_stable_and_order_insensitive_for_params():
    a = request_key("openai/gpt-5-mini", {"max_tokens": 5, "reasoning_effort": "low"}, MSGS)
    b = request_key("openai/gpt-5-mini", {"reasoning_effort": "low", "max_tokens": 5}, MSGS)
    assert a == b and len(a) == 64
    # Pinned: a change here invalidates every stored request (bump deliberately, never by accident).
    pinned = "ac2b7c2a61a1aabcb47a0db21f1046e765e8a1ce4596b7b2f15a4529d866f92b"
    assert request_key("m/x", {}, [{"role": "user", "content": "q"}]) == pinned


def test_key_changes_with_what_determines_the_answer():
    base = request_key("openai/gpt-5-mini", {"max_tokens": 5}, MSGS)
    assert request_key("openai/gpt-5.2", {"max_tokens": 5}, MSGS) != base
    assert request_key("openai/gpt-5-mini", {"max_tokens": 6}, MSGS) != base
    assert request_key("openai/gpt-5-mini", {"max_tokens": 5}, MSGS[:1]) != base
    assert request_key("openai/gpt-5-mini", {"max_tokens": 5}, MSGS, {"gt_sql": "SELECT 1"}) != base
    # A built-in's code version: a changed reference model never replays its old code's answers.
    builtin = request_key("memsql/gold", {}, MSGS, {"gt_sql": "SELECT 1"}, None, "v1")
    assert builtin != request_key("memsql/gold", {}, MSGS, {"gt_sql": "SELECT 1"}, None, "v2")


def test_secrets_do_not_enter_the_key():
    with_secrets = {
        "max_tokens": 5,
        "api_key": FAKE_SECRET,
        "extra_headers": {"Authorization": f"Bearer {FAKE_SECRET}", "x-api-key": FAKE_SECRET, "X-Trace": "t"},
        "client_secret": FAKE_SECRET,
        "access_token": FAKE_SECRET,
    }
    without = {"max_tokens": 5, "extra_headers": {"X-Trace": "t"}}
    assert request_key("m/x", with_secrets, MSGS) == request_key("m/x", without, MSGS)
    assert scrub({"max_tokens": 1, "budget_tokens": 2, "thinking": {"budget_tokens": 3}}) == {
        "max_tokens": 1,
        "budget_tokens": 2,
        "thinking": {"budget_tokens": 3},
    }


def test_put_get_layout_and_secret_redaction(tmp_path):
    store = RequestStore.at_home(tmp_path, secret_values=[FAKE_SECRET])
    params = {"max_tokens": 5, "api_key": FAKE_SECRET, "extra_headers": {"authorization": FAKE_SECRET}}
    key = request_key("m/x", params, MSGS)
    assert store.get(key) is None
    path = store.put(
        key,
        {
            "request": {"params": params, "messages": MSGS, "headers": {"X-Api-Key": FAKE_SECRET}},
            "response": {"text": "SELECT 1", "reasoning": ""},
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
            "error": {"type": "auth_error", "message": f"Incorrect API key provided: {FAKE_SECRET}"},
        },
    )
    assert path == tmp_path / "requests" / key[:2] / f"{key}.json"
    record = store.get(key)
    assert record["key"] == key and record["usage"] == {"prompt_tokens": 3, "completion_tokens": 2}
    assert record["request"]["params"] == {"max_tokens": 5, "extra_headers": {}}
    assert "[redacted]" in record["error"]["message"]
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert FAKE_SECRET not in file.read_text(encoding="utf-8")
    assert not list(path.parent.glob(".*.tmp")), "atomic write left a temp file"
    assert store.count() == 1 and key in store


def test_unreadable_record_is_a_miss(tmp_path):
    store = RequestStore(tmp_path)
    key = request_key("m/x", {}, MSGS)
    store.path_for(key).parent.mkdir(parents=True)
    store.path_for(key).write_text("{not json", encoding="utf-8")
    assert store.get(key) is None
    store.put(key, {"response": {"text": "ok"}})
    assert json.loads(store.path_for(key).read_text())["response"]["text"] == "ok"


def test_make_shards_creates_every_folder_once_and_writes_land_in_them(tmp_path):
    store = RequestStore(tmp_path / "requests")
    store.make_shards()
    assert sorted(p.name for p in store.root.iterdir()) == list(SHARDS)
    (store.root / "00").rmdir()
    store.make_shards()  # the set is marked done by its last folder: nothing is checked or made again
    assert not (store.root / "00").exists()
    key = "00" + "a" * 62
    store.put(key, {"response": {"text": "SELECT 1"}})  # a missing folder is still made on demand
    assert store.get(key)["response"] == {"text": "SELECT 1"}
