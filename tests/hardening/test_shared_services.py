"""One home, many users: four `memsql eval` processes and a fifth killed with -9 share the private
redis-server. It stays up while any of them uses it (the first to finish used to stop it under the
others) and stops when the last one is done; the survivors' rows equal the same partitions run one
after another."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import copy_home, leftover_redis_pids, row_diffs

from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.results import RESULT_FILE, output_dir, read_results
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.memory.redis_service import LEASES_DIR, redis_dir
from memsql_assets.lib.paths import REPO_ROOT

# (model, condition, sessions): Redis-backed conditions, sample sizes that end at different times.
SURVIVORS = [("gold", "B", 9), ("recall-probe", "B", 14), ("reader-probe", "C", 20), ("gold", "C", 30)]
KILLED = ("guess-probe", "B", 30)


def memsql_eval(home: Path, model: str, condition: str, sessions: int) -> subprocess.Popen:
    env = {**os.environ, "MEMSQL_HOME": str(home)}
    env.pop("DAGSTER_HOME", None)
    cmd = [sys.executable, "-m", "memsql_assets.cli", "eval", "--model", model, "--condition", condition]
    return subprocess.Popen(
        [*cmd, "--sessions", str(sessions)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for_lease(home: Path, proc: subprocess.Popen, timeout_s: float = 240) -> bool:
    """True once `proc` holds a lease on the home's private Redis; False if it ended first, having
    succeeded (a short partition can take and return its lease between two looks)."""
    deadline = time.monotonic() + timeout_s
    while not list((redis_dir(home) / LEASES_DIR).glob(f"{proc.pid}-*")):
        if proc.poll() is not None:
            assert proc.returncode == 0, f"memsql eval failed before taking a lease: {proc.stdout.read()[-3000:]}"
            return False
        assert time.monotonic() < deadline, "the run never took a lease on the private Redis"
        time.sleep(0.05)
    return True


def rows_of(home: Path, model: str, condition: str, sessions: int) -> list[dict]:
    return read_results(output_dir(home, model, condition, sessions) / RESULT_FILE)


def test_four_evals_and_one_killed_share_one_redis_and_match_sequential_runs(small_home, tmp_path):
    sequential = copy_home(small_home, tmp_path / "sequential")
    for model, condition, n in SURVIVORS:
        evaluate_partition(sequential, model, condition, EvalSettings(sessions=n))

    home = copy_home(small_home, tmp_path / "parallel")
    killed = memsql_eval(home, *KILLED)
    assert wait_for_lease(home, killed), "the run to kill holds a lease"
    killed.kill()  # -9 while it holds its lease: the server it started stays up, its lease stale
    killed.wait()
    assert killed.returncode == -9
    runs = {cell: memsql_eval(home, *cell) for cell in SURVIVORS}
    for proc in runs.values():
        wait_for_lease(home, proc)
    ended_while_others_ran = False
    while any(p.poll() is None for p in runs.values()):
        finished = [p for p in runs.values() if p.poll() is not None]
        ended_while_others_ran |= bool(finished)
        time.sleep(0.1)
    outputs = {cell: p.communicate()[0] for cell, p in runs.items()}
    for cell, proc in runs.items():
        assert proc.returncode == 0, (cell, outputs[cell][-3000:])
    assert ended_while_others_ran, "the runs' ends were staggered"
    for cell in SURVIVORS:
        diffs = row_diffs(rows_of(home, *cell), rows_of(sequential, *cell))
        assert not diffs, (cell, diffs[:5])
    assert not leftover_redis_pids(home), "the last user stopped the server"
    assert not list((redis_dir(home) / LEASES_DIR).iterdir()), "no lease is left, the killed run's included"
