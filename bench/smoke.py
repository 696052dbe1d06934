"""Every bench script once, on the smallest home and the fewest rounds, so that one that crashes fails
CI (.ci/run). Its figures mean nothing and are thrown away: a smoke pass ($MEMSQL_BENCH_SMOKE) takes
every 100th session, a 12-question trajectory store, and writes its JSON under a private cache folder,
never bench/results/. A script without an entry below fails the pass.

    .venv/bin/python bench/smoke.py [SCRIPT ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as c

BENCH = Path(__file__).resolve().parent
PER_SCRIPT_TIMEOUT_S = 600
# Each script's arguments for the pass: one round, the least work that still runs every code path.
SMOKE_ARGS: dict[str, list[str]] = {
    "adaptive_concurrency.py": ["--repeats", "1", "--latency", "0.01"],
    "comparator.py": ["--sizes", "1000", "--min-batch-s", "0.01"],
    "concurrency.py": ["--levels", "1", "2", "--conditions", "A", "--latency", "0.01", "--capacity-level", "2"],
    "dbt_fact_table.py": ["--rounds", "1"],
    "dbt_intervals.py": ["--rounds", "1"],
    "dbt_launcher.py": ["--rounds", "1"],
    "e2e.py": ["--passes", "cold", "--skip-eval"],
    "extended_figures.py": ["--data", "embedded"],
    "harness.py": ["--rounds", "1", "--conditions", "A", "E"],
    "plan_estimate.py": ["--rounds", "1", "--conditions", "A"],
    "probe_failures.py": ["B_wm5"],
    "scale_out.py": ["--rounds", "1"],
    "trajectory_sensitivity.py": ["--thetas", "0.5", "--budgets", "6", "--sessions", "9"],
    "viewer.py": ["--rounds", "1"],
    "waves.py": ["--rounds", "1", "--latency-ms", "1", "--concurrency", "2"],
}


def scripts() -> list[str]:
    return sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_") and p.name != "smoke.py")


def run(name: str, env: dict[str, str], out: Path) -> tuple[int, float, str]:
    args = [*SMOKE_ARGS[name], *(["--out", str(out / "sensitivity.json")] if name == "trajectory_sensitivity.py" else [])]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, str(BENCH / name), *args],
            cwd=c.REPO, env=env, capture_output=True, text=True, timeout=PER_SCRIPT_TIMEOUT_S,
        )  # fmt: skip
        rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired as exc:
        rc, tail = 124, f"timed out after {PER_SCRIPT_TIMEOUT_S} s\n{(exc.stderr or b'')[-2000:]!r}"
    return rc, time.monotonic() - t0, tail


def main(argv: list[str]) -> int:
    names = argv or scripts()
    missing = [n for n in names if n not in SMOKE_ARGS]
    if missing:
        print(f"bench smoke: no smoke arguments for {', '.join(missing)} (bench/smoke.py SMOKE_ARGS)", file=sys.stderr)
        return 1
    failed, started = [], time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memsql-bench-smoke-") as tmp:
        env = {**os.environ, c.SMOKE_ENV: "1", c.CACHE_ENV: tmp, "MEMSQL_BENCHMARK_SESSIONS": "9"}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(c.REPO), os.environ.get("PYTHONPATH", "")) if p)
        for name in names:
            rc, seconds, tail = run(name, env, Path(tmp))
            print(f"bench smoke: bench/{name} {'ok' if rc == 0 else f'FAILED (exit {rc})'} in {seconds:.1f} s", flush=True)
            if rc:
                failed.append(name)
                print(tail, file=sys.stderr, flush=True)
    print(f"bench smoke: {len(names) - len(failed)} of {len(names)} scripts ran in {time.monotonic() - started:.0f} s")
    if failed:
        print(f"bench smoke: failed: {', '.join(f'bench/{n}' for n in failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
