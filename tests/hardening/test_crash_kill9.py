"""Crash safety: kill -9 at random points of a partition run, many times.

One partition (recall-probe × C: working memory in a private Redis, episodic memory in the
partition's own Chroma, sessions in waves of 4: partition_child.WAVE_SIZE) is started, killed with SIGKILL after a random
delay, resumed, killed again, ... and finally resumed to completion. Runs are forked from a fork
server that has the imports and the embedding model loaded, so a delay of a few hundred
milliseconds already lands inside the run (setup, a session, a Chroma flush, a checkpoint, the
publish). The delays are drawn from a seeded RNG, uniformly over 90 % of a clean run's duration on
this machine (measured by the reference run), so a loaded machine does not push every kill into
the setup. Then aimed kills: at the first checkpoint (a fast run leaves the random delays a narrow
window inside it), and at the publish (as soon as every session is checkpointed), once on the first
pass and once on a re-run over an already published partition, each followed by a resume.

After every kill: the file dbt reads (`results/model=*/condition=*/turn_results.parquet`) either
does not exist or reads completely with every turn exactly once; every checkpoint parses. At the
end the rows equal a clean run's (measurement columns aside).
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

import pyarrow.parquet as pq
from conftest import copy_home, leftover_redis_pids, row_diffs
from partition_child import run_partition

from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, progress_dir, read_results
from memsql_assets.lib.paths import benchmark_dir

MODEL, CONDITION = "recall-probe", "C"
SEED = 20260601
RANDOM_KILLS = 12
MIN_DELAY_S = 0.05
REPORT = os.environ.get("MEMSQL_HARDENING_REPORT")  # optional: where to write the numbers (docs/hardening.md)


def _visible_results(home: Path) -> list[Path]:
    """Exactly what dbt's source glob matches."""
    return sorted((home / "results").glob("model=*/condition=*/turn_results.parquet"))


def _check_consistent(home: Path, n_turns: int) -> dict:
    """Invariants that must hold at any instant, checked right after a kill."""
    published = _visible_results(home)
    for path in published:
        table = pq.read_table(path)  # raises on a truncated file
        keys = set(
            zip(table.column("session_id").to_pylist(), table.column("turn_index").to_pylist(), strict=True)
        )
        assert table.num_rows == len(keys) == n_turns, (path, table.num_rows, len(keys))
    checkpoints = sorted(progress_dir(home, MODEL, CONDITION).glob("*-*.json"))
    for path in checkpoints:
        rows = json.loads(path.read_text(encoding="utf-8"))  # raises on a half-written checkpoint
        assert rows and {r["session_id"] for r in rows} == {path.stem}
        assert len({r["turn_index"] for r in rows}) == len(rows), path
    return {"published": bool(published), "checkpoints": len(checkpoints)}


def _run(forkserver, home: Path, kill_after_s: float | None, aim_at: int | None = None) -> dict:
    """One forked partition run: killed after `kill_after_s`, or as soon as `aim_at` sessions are
    checkpointed (1: mid-run; every session: at the publish); neither: run to completion. Returns
    what happened."""
    proc = forkserver.Process(target=run_partition, args=(str(home), MODEL, CONDITION))
    proc.start()
    if aim_at is not None:
        ckpt, t0 = progress_dir(home, MODEL, CONDITION), time.monotonic()
        while proc.is_alive() and len(list(ckpt.glob("*-*.json"))) < aim_at and time.monotonic() - t0 < 60:
            time.sleep(0.005)
    else:
        proc.join(kill_after_s if kill_after_s is not None else 120)
    killing = aim_at is not None or kill_after_s is not None
    if proc.is_alive() and killing:
        os.kill(proc.pid, signal.SIGKILL)  # it may finish in between: the exit code tells
    proc.join(5)
    if proc.is_alive():
        proc.kill()
    expected = (0, -signal.SIGKILL) if killing else (0,)
    assert proc.exitcode in expected, f"run failed with exit code {proc.exitcode}"
    delay = f"{aim_at} checkpoint(s)" if aim_at is not None else kill_after_s and round(kill_after_s, 3)
    return {"delay_s": delay, "finished": proc.exitcode == 0}


def test_kill_9_at_random_points_then_resume_equals_a_clean_run(small_home, tmp_path, forkserver, clean_c):
    home = copy_home(small_home, tmp_path / "crash")
    turns = read_turns(benchmark_dir(home))
    n_turns, n_sessions = len(turns), len({t["session_id"] for t in turns})
    rng = random.Random(SEED)
    started = time.monotonic()
    kills: list[dict] = []

    def step(kill_after_s: float | None, aim_at: int | None = None) -> dict:
        outcome = {**_run(forkserver, home, kill_after_s, aim_at), **_check_consistent(home, n_turns)}
        kills.append(outcome)
        return outcome

    try:
        while sum(not k["finished"] for k in kills) < RANDOM_KILLS:
            assert len(kills) < 3 * RANDOM_KILLS, ("runs keep finishing before the kill", kills)
            step(rng.uniform(MIN_DELAY_S, 0.9 * clean_c["total_s"]))
        step(None, aim_at=1)  # mid-run
        step(None, aim_at=n_sessions)  # the first publish
        assert step(None)["finished"]  # resume to completion
        # A re-run over the published partition, killed at its publish: the earlier file stays whole.
        assert step(None, aim_at=n_sessions)["published"]
        assert step(None)["finished"]
    finally:
        # The last run's server is an orphan once it is killed (no live lease): the next run would
        # replace it; count what is left, then end it.
        leftover = leftover_redis_pids(home)
        for pid in leftover:
            os.kill(pid, signal.SIGKILL)

    resumed = read_results(partition_dir(home, MODEL, CONDITION) / RESULT_FILE)
    assert len(resumed) == len({(r["session_id"], r["turn_index"]) for r in resumed}) == n_turns
    diffs = row_diffs(resumed, clean_c["rows"])
    assert not diffs, diffs[:5]
    assert not progress_dir(home, MODEL, CONDITION).exists(), "checkpoints are dropped once published"

    killed = [k for k in kills if not k["finished"]]
    assert len(killed) >= RANDOM_KILLS, kills
    assert any(0 < k["checkpoints"] < n_sessions for k in killed), ("some kills must land mid-run", kills)
    summary = {
        "partition": f"{MODEL}/{CONDITION}",
        "turns": n_turns,
        "clean_run_s": round(clean_c["total_s"], 2),
        "clean_run_first_checkpoint_s": round(clean_c["first_checkpoint_s"], 2),
        "runs_started": len(kills),
        "killed": len(killed),
        "checks_with_published_file": sum(k["published"] for k in kills),
        "kills": kills,
        "rows_lost": 0,
        # Temp files of atomic writes cut short by a kill: never matched by dbt's glob, left for cleanup.
        "stale_tmp_files": len(list(home.rglob(".*.tmp"))),
        "duplicate_rows": 0,
        "leftover_redis_servers": len(leftover),
        "wall_s": round(time.monotonic() - started, 1),
    }
    print(json.dumps(summary))
    if REPORT:
        Path(REPORT).write_text(json.dumps(summary, indent=1))
