"""The scale-out profile end to end: a Dagster daemon on a PostgreSQL instance, two Celery
workers on RabbitMQ, a shared Redis and a `chroma run` server (conftest.py starts them).

A backfill of gold and recall-probe under A, B and C runs through the queue and the workers; one worker
is killed with SIGKILL in the middle of a partition, whose step the broker then hands to the other.
Every partition's rows must equal the embedded default's, runs and events must be in PostgreSQL, and
both workers must have run steps. `memsql eval` goes the same way; a worker without the shared path
fails its step naming the path.
"""

from __future__ import annotations

import json
import time

import pytest

from memsql_assets.defs.evaluation.partitions import partition_key
from memsql_assets.defs.jobs import EVALUATE_JOB
from memsql_assets.lib.harness.results import (
    RESULT_FILE,
    comparable_rows,
    partition_dir,
    progress_dir,
    read_results,
)
from memsql_assets.lib.paths import WORKSPACE_FILE
from memsql_assets.orchestration.local_deployment import BIN, CELLS, SLOW_MODEL, Deployment

RUN_TIMEOUT_S = 600.0
DONE = ("SUCCESS", "FAILURE", "CANCELED")
WORKER_KEY = "Celery worker"  # dagster-celery's engine event: which worker executes a step


def _key(model: str, condition: str) -> str:
    return str(partition_key(model, condition))


def _instance(d: Deployment):
    from dagster import DagsterInstance

    return DagsterInstance.from_config(str(d.dagster_home))


def _runs(instance, key: str) -> list:
    from dagster import RunsFilter

    return list(instance.get_runs(filters=RunsFilter(job_name=EVALUATE_JOB, tags={"dagster/partition": key})))


def _workers(instance, run_id: str) -> list[str]:
    """The workers that executed the run's steps, in order (a step handed on appears twice)."""
    from dagster import DagsterEventType

    names = []
    for record in instance.all_logs(run_id, of_type=DagsterEventType.ENGINE_EVENT):
        metadata = record.dagster_event.engine_event_data.metadata
        if WORKER_KEY in metadata:
            names.append(str(metadata[WORKER_KEY].value).split("@")[0])
    return names


def _wait_for_runs(d: Deployment, keys: list[str], timeout: float = RUN_TIMEOUT_S) -> dict[str, object]:
    """The latest run of each partition, once every one of them has ended."""
    deadline = time.monotonic() + timeout
    with _instance(d) as instance:
        while True:
            latest = {key: (_runs(instance, key) or [None])[0] for key in keys}
            if all(run is not None and run.status.value in DONE for run in latest.values()):
                return latest
            if time.monotonic() > deadline:
                state = {k: r.status.value if r else "not created" for k, r in latest.items()}
                pytest.fail(f"runs did not end within {timeout:.0f} s: {state}\n{d.tail('daemon')}")
            time.sleep(1.0)


def _backfill(d: Deployment, keys: list[str]) -> None:
    done = d.run(
        [str(BIN / "dagster"), "job", "backfill", "-w", str(WORKSPACE_FILE), "-j", EVALUATE_JOB]
        + ["--partitions", ",".join(keys), "--noprompt"]
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _rows(home, model: str, condition: str) -> list[dict]:
    return comparable_rows(read_results(partition_dir(home, model, condition) / RESULT_FILE))


def _query(d: Deployment, sql: str, *params) -> list[tuple]:
    import psycopg2

    with psycopg2.connect(d.settings.postgres_url.replace("+psycopg2", "", 1)) as conn, conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def test_without_a_daemon_memsql_eval_fails_at_start_in_one_line(services: Deployment) -> None:
    done = services.memsql("eval", "--model", "gold", "--condition", "A", "--json")
    assert done.returncode == 2 and not done.stdout
    (line,) = [ln for ln in done.stderr.splitlines() if ln.startswith("memsql")]
    assert line.startswith("memsql: error: no Dagster daemon is running for the instance at ")
    assert services.database in line and "dagster-daemon run" in line


def test_backfill_runs_on_both_workers_and_survives_a_killed_worker(cluster: Deployment) -> None:
    d = cluster
    keys = [_key(m, c) for m, c in CELLS]
    _backfill(d, keys)

    # kill -9 the worker that runs the slow model's C partition, once its first wave is checkpointed
    victim = _key(SLOW_MODEL, "C")
    checkpoints = progress_dir(d.home, SLOW_MODEL, "C")
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not any(checkpoints.glob("*-*.json")):  # a session's checkpoint (not _meta.json)
        assert time.monotonic() < deadline, f"{victim} wrote no checkpoint\n{d.tail('w1')}\n{d.tail('w2')}"
        time.sleep(0.1)
    assert not (partition_dir(d.home, SLOW_MODEL, "C") / RESULT_FILE).exists(), (
        "the partition ended before the kill"
    )
    with _instance(d) as instance:
        (run,) = _runs(instance, victim)
        killed = _workers(instance, run.run_id)[-1]
    d.kill(killed)

    runs = _wait_for_runs(d, keys)
    assert {k: r.status.value for k, r in runs.items()} == dict.fromkeys(keys, "SUCCESS")

    # the rows are the embedded default's, the killed partition's included
    assert d.procs["reference"].wait(timeout=RUN_TIMEOUT_S) == 0, d.tail("reference")
    for model, condition in CELLS:
        assert _rows(d.home, model, condition) == _rows(d.reference, model, condition), (model, condition)
    summary = json.loads((partition_dir(d.home, SLOW_MODEL, "C") / "summary.json").read_text())
    assert summary["resumed_sessions"] > 0  # the second worker went on from the killed one's checkpoints

    with _instance(d) as instance:
        workers = {key: _workers(instance, run.run_id) for key, run in runs.items()}
    # the killed step was handed to the other worker, and both workers ran steps
    assert workers[victim][0] == killed and workers[victim][-1] != killed, workers[victim]
    assert {"w1", "w2"} <= {w for names in workers.values() for w in names}, workers

    # runs and events are in PostgreSQL
    run_ids = [r.run_id for r in runs.values()]
    stored = _query(d, "SELECT run_id, status FROM runs WHERE run_id = ANY(%s)", run_ids)
    assert sorted(stored) == sorted((i, "SUCCESS") for i in run_ids)
    materialized = _query(
        d,
        "SELECT DISTINCT partition FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION' "
        "AND asset_key = %s AND run_id = ANY(%s)",
        json.dumps(["turn_results"]),
        run_ids,
    )
    assert sorted(p for (p,) in materialized) == sorted(keys)


def test_memsql_eval_takes_the_benchmark_and_sample_size_to_the_workers(cluster: Deployment) -> None:
    """`memsql eval --benchmark extended --sessions N` under the scale-out profile: the extended
    benchmark's sample of N sessions, run by the extended job on a Celery worker, as the embedded default
    does, its summary printed and its run in PostgreSQL."""
    import dagster as dg

    from memsql_assets.defs.benchmark.extended import extended_sessions
    from memsql_assets.defs.evaluation.resources import SAMPLE_TAG
    from memsql_assets.defs.jobs import EVALUATE_JOBS
    from memsql_assets.defs.resources import MemsqlSettings
    from memsql_assets.lib.benchmark.sample import allowed_range
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.harness.results import sample_dir
    from memsql_assets.lib.harness.summary import read_summary
    from memsql_assets.lib.paths import benchmark_dir
    from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK

    resources = {"memsql": MemsqlSettings(home=str(cluster.home))}
    assert dg.materialize([extended_sessions], resources=resources).success
    turns = read_turns(benchmark_dir(cluster.home, EXTENDED_BENCHMARK))
    n = allowed_range(turns)[0]
    done = cluster.memsql(
        "eval", "--model", "gold", "--condition", "A", "--benchmark", EXTENDED_BENCHMARK, "--sessions", str(n), "--json"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["success"] and out["benchmark"] == EXTENDED_BENCHMARK and out["complete"] is False
    assert out["checks"] == {"harness_integrity": True}
    assert _query(cluster, "SELECT status FROM runs WHERE run_id = %s", out["run_id"]) == [("SUCCESS",)]
    # A sample takes each analyst's history whole, so it may hold a few sessions more than asked.
    assert out["sessions"] == len(out["sample_sessions"]) >= n and out["ex_strict"] == 100.0
    assert set(out["sample_sessions"]) <= {t["session_id"] for t in turns}
    published = read_summary(sample_dir(cluster.home, "gold", "A", n, EXTENDED_BENCHMARK))
    assert published is not None and published.sample_sessions == out["sample_sessions"]
    with _instance(cluster) as instance:
        run = instance.get_run_by_id(out["run_id"])
        assert run.job_name == EVALUATE_JOBS[EXTENDED_BENCHMARK] and run.tags[SAMPLE_TAG] == str(n)
        assert _workers(instance, out["run_id"]), "the step ran on no Celery worker"


def test_a_worker_without_the_shared_path_fails_its_step_naming_it(cluster: Deployment) -> None:
    d = cluster
    for name in [n for n in d.procs if n.startswith("w")]:
        d.stop(name)
    missing = d.root / "not-mounted"
    d.start_worker("w3", MEMSQL_HOME=str(missing))
    d.wait_for_workers(["w3"])
    key = _key("gold", "A")
    with _instance(d) as instance:
        before = {r.run_id for r in _runs(instance, key)}
    _backfill(d, [key])
    run = _wait_for_runs(d, [key])[key]
    assert run.run_id not in before and run.status.value == "FAILURE"
    from dagster import DagsterEventType

    with _instance(d) as instance:
        (failure,) = instance.all_logs(run.run_id, of_type=DagsterEventType.STEP_FAILURE)
    error = failure.dagster_event.event_specific_data.error
    message = (error.cause or error).message
    assert f"the shared path {missing} (MEMSQL_HOME) is missing" in message, message
