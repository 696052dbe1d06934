"""A whole partition under injected faults: flaky provider, permanent errors, a Redis restart."""

from __future__ import annotations

import shutil

import pyarrow.parquet as pq
from model_fakes import FAKE_KEY_ENV, FAKE_SECRET

from memsql_assets.lib.harness.evaluate import EvalSettings, evaluate_partition
from memsql_assets.lib.harness.results import comparable_rows, partition_dir
from memsql_assets.lib.memory.redis_service import RedisServer
from memsql_assets.lib.models.failures import ENDPOINT_FAILURES
from memsql_assets.lib.models.gateway import ModelGateway, RetryPolicy
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.models.request_store import RequestStore

FAST_RETRY = RetryPolicy(jitter=False, base_delay_s=0.001, max_delay_s=0.005, max_retry_after_s=0.005)


def _home(small_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "requests", "redis"))
    return home


def test_flaky_provider_loses_no_turn_and_leaks_no_key(
    small_home, tmp_path, fake_provider, test_registry, monkeypatch
):
    home = _home(small_home, tmp_path)
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    fake_provider.fail_rate = 0.3  # 429 / 500 / timeout in turn
    fake_provider.script("flaky", "400")  # the first call fails permanently
    gateway = ModelGateway(test_registry, RequestStore(home / "requests"), home=home, retry=FAST_RETRY)
    out = evaluate_partition(home, "flaky", "B", registry=test_registry, gateway=gateway)

    turns = out.summary["turns"]
    assert turns == len({(r["session_id"], r["turn_index"]) for r in out.rows}) == 132
    # Identical prompts (same follow-up, same window) are answered once and then from the store.
    assert out.summary["calls"] == len(fake_provider.calls) > turns - out.summary["cache_hits"], (
        "retries happened"
    )
    assert out.summary["model_errors"].get("bad_request") == 1, (
        "the permanent failure is a typed error on its turn"
    )
    errored = [r for r in out.rows if r["model_error_type"]]
    assert all(r["error_class"] == "model_error" and "model error" in r["error_message"] for r in errored)
    answered = {r["error_class"] for r in out.rows if not r["model_error_type"]}
    assert answered <= {"wrong_result", "correct"}  # it always answers SELECT 1 (right when the GT is 1)

    for path in [*home.joinpath("requests").rglob("*.json"), *partition_dir(home, "flaky", "B").rglob("*")]:
        if path.is_file():
            assert FAKE_SECRET.encode() not in path.read_bytes(), path
    table = pq.read_table(partition_dir(home, "flaky", "B") / "turn_results.parquet")
    assert table.num_rows == turns

    fake_provider.fail_rate = 0.0  # the endpoint recovers
    again = evaluate_partition(home, "flaky", "B", registry=test_registry, gateway=gateway)
    # Successes and permanent failures come from the request store; asked again are the transient
    # failures and the later turns of their sessions, whose window now holds the recovered answer.
    first = {(r["session_id"], r["turn_index"]): r for r in out.rows}
    reasked = [r for r in again.rows if not r["cache_hit"]]
    for r in reasked:
        before = first[(r["session_id"], r["turn_index"])]
        assert before["model_error_type"] in ENDPOINT_FAILURES or before["request_key"] != r["request_key"], r
    transient = {k for k, r in first.items() if r["model_error_type"] in ENDPOINT_FAILURES}
    assert transient <= {(r["session_id"], r["turn_index"]) for r in reasked}
    assert again.summary["calls"] == len(reasked)
    assert again.summary["model_errors"] == {"bad_request": 1}


class RestartingGateway(ModelGateway):
    """Restarts the Redis server once, after `after` model calls: working memory vanishes mid-session."""

    def __init__(self, *args, server: RedisServer, after: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.server, self.after, self.seen, self.restarted = server, after, 0, False

    async def acomplete(self, *args, **kwargs):
        self.seen += 1
        if self.seen == self.after and not self.restarted:
            self.server.restart()
            self.restarted = True
        return await super().acomplete(*args, **kwargs)


def test_redis_restart_mid_run_gives_identical_results(small_home, tmp_path):
    clean = evaluate_partition(small_home, "recall-probe", "B_wm5")
    home = _home(small_home, tmp_path)
    registry = load_registry()
    with RedisServer(tmp_path / "r.sock") as server:
        settings = EvalSettings(redis_url=f"unix://{server.socket_path}")
        gateway = RestartingGateway(
            registry, RequestStore(home / "requests"), home=home, server=server, after=40
        )
        out = evaluate_partition(
            home, "recall-probe", "B_wm5", settings=settings, registry=registry, gateway=gateway
        )
    assert gateway.restarted and out.summary["redone_sessions"] >= 1
    assert comparable_rows(out.rows) == comparable_rows(clean.rows)
