"""kill -9 of a whole agent partition: the reference agent under E (AgentSM: the agent loop, the
retrieved trajectory, a request-store record per step) is killed with SIGKILL once its first
sessions are checkpointed and others are mid-way, then run again. The rerun's rows and traces equal
a clean run's, and the model is asked only for the steps that were not stored before the kill.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import dagster as dg
import pytest
from conftest import copy_home, row_diffs
from partition_child import run_partition

from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.defs.trajectories.assets import synthetic_questions, trajectory_store
from memsql_assets.defs.trajectories.resources import TrajectorySettings
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, progress_dir, read_results
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.trajectories.lookup import trajectory_lookup
from memsql_assets.lib.vocabulary import AGENTSM_CONDITION, REFERENCE_AGENT

MODEL, CONDITION = REFERENCE_AGENT, AGENTSM_CONDITION


@pytest.fixture(scope="module")
def store_home(small_home, tmp_path_factory) -> Path:
    """The small home with its own trajectory store and composite tools, copied by each run."""
    home = copy_home(small_home, tmp_path_factory.mktemp("agent_kill9") / "store")
    with dg.instance_for_test() as instance:
        resources = {"memsql": MemsqlSettings(home=str(home)), "trajectories": TrajectorySettings(budget=12)}
        assert dg.materialize([synthetic_questions, trajectory_store], instance=instance, resources=resources).success
    return home


def _killed_mid_way(forkserver, home: Path) -> int:
    """Run the partition in a forked process and SIGKILL it once a session is checkpointed; the
    sessions checkpointed by then."""
    checkpoints = progress_dir(home, MODEL, CONDITION)
    proc = forkserver.Process(target=run_partition, args=(str(home), MODEL, CONDITION, None, True))
    proc.start()
    started = time.monotonic()
    while proc.is_alive() and not any(checkpoints.glob("*-*.json")) and time.monotonic() - started < 120:
        time.sleep(0.002)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(30)
    assert proc.exitcode == -signal.SIGKILL, f"the run ended before the kill (exit code {proc.exitcode})"
    return len(list(checkpoints.glob("*-*.json")))


def test_an_agent_partition_killed_mid_way_resumes_to_a_clean_runs_rows_and_traces(
    store_home, tmp_path, forkserver
):
    clean_home = tmp_path / "clean"
    shutil.copytree(store_home, clean_home)
    clean = evaluate_partition(clean_home, MODEL, CONDITION, trajectory_factory=trajectory_lookup)
    steps = sum(r["steps"] for r in clean.rows)
    assert clean.summary["ex_strict"] == 100.0 and clean.summary["model_calls_this_run"] == steps

    home = tmp_path / "killed"
    shutil.copytree(store_home, home)
    checkpointed = _killed_mid_way(forkserver, home)
    stored = RequestStore.at_home(home).count()
    sessions = len({r["session_id"] for r in clean.rows})
    assert 0 < checkpointed < sessions and 0 < stored < steps, (checkpointed, stored)
    assert not (partition_dir(home, MODEL, CONDITION) / RESULT_FILE).exists()

    resumed = evaluate_partition(home, MODEL, CONDITION, trajectory_factory=trajectory_lookup)
    assert resumed.summary["model_calls_this_run"] == steps - stored, "a stored step was asked again"
    assert RequestStore.at_home(home).count() == steps
    rows = read_results(partition_dir(home, MODEL, CONDITION) / RESULT_FILE)
    assert not row_diffs(rows, clean.rows)
    traces = [json.loads(r["agent_trace"]) for r in rows]
    assert traces == [json.loads(r["agent_trace"]) for r in clean.rows]
    assert all(t["outcome"] == "submitted" for t in traces)
