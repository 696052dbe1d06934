"""The README's main command end to end, cold and warm, split into phases, with peak RSS.

Not a test, and slow (the cold run is the whole main command: several minutes). Runs
`.venv/bin/memsql run --json` in a subprocess under `/usr/bin/time -v`, on one fresh
MEMSQL_HOME: cold (empty data directory), then warm (the same directory again, nothing changed:
the main job, the partitions and the metrics build are up to date and skipped). Phases come from the
Dagster instance the command records runs in (<home>/dagster_home): the main job's step start/end
times (sources, profiles + sessions, the blocking checks, semantic memory, synthetic questions +
trajectory store), each partition run of either benchmark (`evaluate`, `evaluate_extended`), the
metrics run (dbt build + report), and what lies between (process start-up and imports before the
first run, Dagster run launches between runs, exit). Peak RSS is /usr/bin/time's maximum resident
set size: the largest single process of the tree (memsql itself, or dbt).

A third pass, forced, runs `memsql run --json --force` on the same directory: nothing is skipped,
every asset and partition is recomputed, and every model call is a request-store hit. It shows
what the request store alone saves; the warm pass shows what skipping up-to-date work saves.

Targets: warm <= 10 % of cold; cold <= 90 s on a 2-core machine after install.

    .venv/bin/python bench/e2e.py [--home DIR] [--keep] [--passes cold warm forced]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import _common as c

MEMSQL = c.REPO / ".venv" / "bin" / "memsql"
SOURCE_STEPS = ("bird_financial", "sec_edgar", "northwind")
SESSION_STEPS = ("profiles", "sessions")
TRAJ_STEPS = ("synthetic_questions", "trajectory_store")


PASS_ARGS = {"cold": [], "warm": [], "forced": ["--force"]}


def run_pass(home: Path, log_dir: Path, name: str, extra: list[str]) -> dict[str, Any]:
    env = dict(os.environ, MEMSQL_HOME=str(home))
    env.pop("DAGSTER_HOME", None)
    started = time.time()
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-v", str(MEMSQL), "run", "--json", *PASS_ARGS[name], *extra],
        cwd=c.REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    ended = time.time()
    (log_dir / f"{name}.stdout").write_text(proc.stdout)
    (log_dir / f"{name}.stderr").write_text(proc.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    user = re.search(r"User time \(seconds\): ([\d.]+)", proc.stderr)
    system = re.search(r"System time \(seconds\): ([\d.]+)", proc.stderr)
    summary: dict[str, Any] = {}
    with contextlib.suppress(ValueError):
        summary = json.loads(proc.stdout[proc.stdout.index("{") :])
    return {
        "pass": name,
        "exit_code": proc.returncode,
        "wall_s": round(wall, 2),
        "cpu_user_s": float(user.group(1)) if user else None,
        "cpu_sys_s": float(system.group(1)) if system else None,
        "peak_rss_mib": round(int(rss.group(1)) / 1024, 1) if rss else None,
        "started": started,
        "ended": ended,
        "success": summary.get("success"),
        "evaluations": [
            {
                k: e.get(k)
                for k in (
                    "model",
                    "condition",
                    "ex_strict",
                    "calls",
                    "cache_hits",
                    "wall_s",
                    "success",
                    "skipped",
                )
            }
            for e in summary.get("evaluations", [])
        ],
        "report_success": (summary.get("report") or {}).get("success"),
        "main_job_skipped": summary.get("main_job_skipped"),
        "report_skipped": (summary.get("report") or {}).get("skipped"),
    }


def phases(home: Path, started: float, ended: float) -> list[tuple[str, float]]:
    """(phase, seconds) in order, from the Dagster runs that began within [started, ended]."""
    os.environ["DAGSTER_HOME"] = str(home / "dagster_home")
    from dagster import DagsterInstance

    with DagsterInstance.get() as inst:
        records = [
            r for r in inst.get_run_records() if r.start_time and started - 1 <= r.start_time <= ended + 1
        ]
        records.sort(key=lambda r: r.start_time or 0.0)
        if not records:  # everything was up to date: no Dagster run at all
            return [("start-up, up-to-date checks, summary (no Dagster run)", ended - started)]
        out: list[tuple[str, float]] = []
        spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
        cursor = started
        gaps = 0.0
        for i, rec in enumerate(records):
            run = rec.dagster_run
            start, end = rec.start_time or started, rec.end_time or ended
            if i == 0:
                out.append(("start-up (imports, definitions)", start - cursor))
            else:
                gaps += max(0.0, start - cursor)  # runs in flight together leave no gap
            cursor = max(cursor, end)
            if "dagster/partition" in run.tags:  # a partition of either benchmark: concurrent, so spans
                spans[run.job_name].append((start, end))
                continue
            steps = {
                s.step_key: (s.end_time or end) - (s.start_time or start)
                for s in inst.get_run_step_stats(run.run_id)
            }
            if run.job_name == "memsql_main":
                grouped: dict[str, float] = defaultdict(float)
                for key, dt in steps.items():
                    if key in SOURCE_STEPS:
                        grouped["sources"] += dt
                    elif key in SESSION_STEPS:
                        grouped["profiles + sessions"] += dt
                    elif key.startswith("sessions_"):
                        grouped["checks (GX suites, GT executes)"] += dt
                    elif key in TRAJ_STEPS:
                        grouped["synthetic questions + trajectory store"] += dt
                    else:
                        grouped[key] += dt
                out += list(grouped.items())
                out.append(("main job: Dagster overhead", (end - start) - sum(steps.values())))
            else:
                for key, dt in steps.items():
                    out.append((f"{run.job_name}: {key}", dt))
                out.append((f"{run.job_name}: Dagster overhead", (end - start) - sum(steps.values())))
        for job, runs in spans.items():
            out.append(
                (
                    f"{job}: {len(runs)} partitions, first start to last end",
                    max(e for _, e in runs) - min(b for b, _ in runs),
                )
            )
            out.append((f"{job}: {len(runs)} partitions, sum of run times", sum(e - b for b, e in runs)))
        out.append(("between runs (run launch)", gaps))
        out.append(("exit (summary, shutdown)", ended - cursor))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, default=None, help="data directory (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the data directory")
    ap.add_argument(
        "--passes",
        nargs="+",
        default=["cold", "warm", "forced"],
        choices=list(PASS_ARGS),
        help="cold: empty home; warm: again (up-to-date work skipped); forced: again with --force "
        "(everything recomputed, model calls answered by the request store)",
    )
    ap.add_argument("--skip-eval", action="store_true", help="only the main job (`memsql run --skip-eval`)")
    ap.add_argument("--out", default="e2e")
    args = ap.parse_args(argv)
    info = c.machine()
    home = args.home or Path(tempfile.mkdtemp(prefix="memsql-bench-e2e-"))
    if home.exists() and any(home.iterdir()) and "cold" in args.passes:
        raise SystemExit(f"{home} is not empty: a cold pass needs a fresh data directory")
    home.mkdir(parents=True, exist_ok=True)
    print(f"MEMSQL_HOME {home}", file=sys.stderr)
    log_dir = Path(tempfile.gettempdir()) / "memsql-bench-e2e-logs"  # stdout/stderr of each pass
    log_dir.mkdir(parents=True, exist_ok=True)
    passes, split = [], {}
    try:
        for name in args.passes:
            print(f"{name} pass: memsql run --json ...", file=sys.stderr)
            p = run_pass(home, log_dir, name, ["--skip-eval"] if args.skip_eval else [])
            passes.append(p)
            split[name] = phases(home, p["started"], p["ended"])
            print(
                f"{name}: {p['wall_s']:.1f} s, exit {p['exit_code']}, peak RSS {p['peak_rss_mib']} MiB",
                file=sys.stderr,
            )
    finally:
        if not args.keep and args.home is None:
            shutil.rmtree(home, ignore_errors=True)

    names = [p["pass"] for p in passes]
    order: list[str] = []
    for n in names:
        for ph, _ in split[n]:
            if ph not in order:
                order.append(ph)

    def ratio(value: float | None, cold: float | None) -> str:
        return f"{100 * value / cold:.0f} %" if value is not None and cold else ""

    rows = []
    for ph in order:
        vals = [dict(split[n]).get(ph) for n in names]
        rows.append(
            [
                ph,
                *(round(v, 2) if v is not None else "" for v in vals),
                *(ratio(v, vals[0]) for v in vals[1:]),
            ]
        )
    totals = [p["wall_s"] for p in passes]
    rows.append(["TOTAL (wall)", *totals, *(ratio(v, totals[0]) for v in totals[1:])])
    rows.append(
        ["CPU user+sys s", *(round((p["cpu_user_s"] or 0) + (p["cpu_sys_s"] or 0), 1) for p in passes)]
        + [""] * (len(names) - 1)
    )
    rows.append(
        ["peak RSS MiB (largest process)", *(p["peak_rss_mib"] for p in passes)] + [""] * (len(names) - 1)
    )
    print("\n`memsql run --json` (the README main command) by phase, seconds\n")
    print(c.table(["phase", *names, *(f"{n}/{names[0]}" for n in names[1:])], rows))
    wall = dict(zip(names, totals, strict=True))
    targets = {"cold <= 90 s": wall["cold"] <= 90} if "cold" in wall else {}
    if "cold" in wall and "warm" in wall:
        targets["warm <= 10 % of cold"] = wall["warm"] <= 0.1 * wall["cold"]
    print("\ntargets: " + ", ".join(f"{k}: {'met' if v else 'MISSED'}" for k, v in targets.items()))
    info["loadavg_at_end"] = c.load_now()
    path = c.write_json(
        args.out,
        {
            "machine": info,
            "logs": str(log_dir),
            "passes": passes,
            "phases_s": {n: [[ph, round(v, 3)] for ph, v in split[n]] for n in names},
            "targets": targets,
        },
    )
    print(f"\nwritten {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
