"""`memsql run`'s live cost cap: the orchestration function that evaluates out-of-date partitions,
each a Dagster run in a run worker, against the fault server (its own process) with fixed token
counts. `--max-cost` stops a partition once its run's recorded spend reaches it, as does the
registry's `max_cost_usd` without the flag; each stop is resumable, and nothing is asked twice."""

from __future__ import annotations

import dagster as dg

from memsql_assets.defs.instance import ensure_dagster_home
from memsql_assets.lib.harness.plan import plan_partition
from memsql_assets.lib.models.fault_server import MODEL, fault_registry, fault_server
from memsql_assets.orchestration.evaluations import evaluate_out_of_date

CELL = (MODEL, "A")
# Every answer reports 1,000 prompt and 3,000 output tokens: $0.007 a call at the entry's prices,
# above the plan's estimate (the prompt counted, a typical answer's output), so that a cap between
# the two lets the run start and then stops it.
USAGE = [1000, 3000]
CALL_USD = (1000 * 1.0 + 3000 * 2.0) / 1e6


def write_registry(path, url: str, max_cost_usd: float | None = None):
    return fault_registry(path, url, max_concurrency=4, max_cost_usd=max_cost_usd)


def run_partition(instance: dg.DagsterInstance, max_cost: float | None = None):
    """`memsql run`'s evaluation stage for the one partition (run_main calls it with --max-cost)."""
    return evaluate_out_of_date(instance, [CELL], {CELL: "missing"}, max_cost, say=lambda line: None)[0]


def test_memsql_run_stops_at_its_cap_and_the_registry_cap_and_resumes_asking_nothing_twice(
    home, tmp_path, monkeypatch
):
    registry_path = tmp_path / "models.yaml"
    monkeypatch.setenv("MEMSQL_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster_home"))
    monkeypatch.setenv("MEMSQL_MODELS_FILE", str(registry_path))
    ensure_dagster_home(home)
    with fault_server(tmp_path, usage=USAGE) as server, dg.DagsterInstance.get() as instance:
        plan = plan_partition(home, write_registry(registry_path, server.url).get(MODEL), "A")
        cost = plan.calls * CALL_USD
        assert plan.estimate is not None and plan.estimate.usd < cost / 4, "the caps below let the run start"

        flag = run_partition(instance, max_cost=cost / 2)
        by_flag = len(server.log())
        write_registry(registry_path, server.url, max_cost_usd=cost / 4)
        by_registry = run_partition(instance)
        after_registry = len(server.log()) - by_flag
        resumed = run_partition(instance, max_cost=cost * 2)
        last = len(server.log()) - by_flag - after_registry
    print(f"{flag.error}\n{by_registry.error}\ncalls {by_flag} + {after_registry} + {last} of {plan.calls}")
    for stopped in (flag, by_registry):
        assert not stopped.success and "\n" not in stopped.error
        assert "cost cap" in stopped.error and "re-run with a higher cap" in stopped.error
    assert cost / 2 <= by_flag * CALL_USD < cost, "--max-cost stopped it at the cap, not before, not at the end"
    assert cost / 4 <= after_registry * CALL_USD < cost / 2, "the registry's cap is live without the flag"
    assert resumed.success and resumed.summary is not None and resumed.summary.model_calls_this_run == last
    assert by_flag + after_registry + last == plan.calls == resumed.summary.turns, "nothing asked twice"
