"""`memsql`: the command line over the Dagster definitions and the plain libraries."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.paths import REPO_ROOT, benchmark_dir, memsql_home, source_db_path

# Step-level DEBUG events are for the UI; the terminal gets INFO and above.
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


def _sources_list(args: argparse.Namespace) -> int:
    from memsql_assets.lib.sources.build import describe_source
    from memsql_assets.lib.sources.config import load_sources

    home = memsql_home()
    rows: list[dict[str, Any]] = []
    for name, spec in load_sources().items():
        path = source_db_path(home, name)
        row: dict[str, Any] = {
            "name": name,
            "kind": spec.kind,
            "path": str(path),
            "real_path": str(spec.real_path) if spec.kind == "real" else None,
            "built": path.exists(),
            "row_counts": None,
        }
        if path.exists():
            built = describe_source(name, path)
            row.update(
                built_kind=built.kind,
                synthetic=built.synthetic,
                row_counts=built.row_counts,
                content_hash=built.content_hash,
            )
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            total = sum(r["row_counts"].values()) if r["row_counts"] else None
            state = f"{total:,} rows" if total is not None else "not built (run `memsql run`)"
            print(f"{r['name']:<15} {r['kind']:<9} {state:<22} {r['path']}")
    return 0


def _export_benchmark(args: argparse.Namespace) -> int:
    from memsql_assets.lib.benchmark.store import export_jsonl, read_turns

    n = export_jsonl(read_turns(benchmark_dir(memsql_home())), Path(args.path))
    print(f"wrote {n} turns to {args.path}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from dagster import DagsterInstance

    from memsql_assets.definitions import defs
    from memsql_assets.defs.instance import ensure_dagster_home
    from memsql_assets.defs.jobs import MAIN_JOB

    home = memsql_home()
    ensure_dagster_home(home)
    with DagsterInstance.get() as instance:
        result = defs.resolve_job_def(MAIN_JOB).execute_in_process(
            instance=instance, raise_on_error=False, run_config=QUIET_RUN_CONFIG
        )
        checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    summary = _summary(home, result.run_id, result.success, checks)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        _print_summary(summary)
    return 0 if result.success and all(checks.values()) else 1


def _summary(home: Path, run_id: str, success: bool, checks: dict[str, bool]) -> dict[str, Any]:
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.sources.build import describe_source
    from memsql_assets.lib.sources.config import SOURCE_NAMES

    summary: dict[str, Any] = {"run_id": run_id, "success": success, "home": str(home), "checks": checks}
    sources = {}
    for name in SOURCE_NAMES:
        path = source_db_path(home, name)
        if path.exists():
            b = describe_source(name, path)
            sources[name] = {
                "kind": b.kind,
                "rows": sum(b.row_counts.values()),
                "sha256": b.content_hash[:12],
            }
    summary["sources"] = sources
    bench = benchmark_dir(home)
    if (bench / "turns.jsonl").exists():
        turns = read_turns(bench)
        sessions = {(t["session_id"], t["source"], t["tier"]) for t in turns}
        summary["benchmark"] = {
            "sessions": len(sessions),
            "turns": len(turns),
            "memory_critical": sum(t["memory_critical"] for t in turns),
            "sessions_by_source_tier": {
                f"{s}-T{t}": n for (s, t), n in sorted(Counter((s, t) for _, s, t in sessions).items())
            },
            "turns_by_source_tier": {
                f"{s}-T{t}": n
                for (s, t), n in sorted(Counter((x["source"], x["tier"]) for x in turns).items())
            },
        }
    return summary


def _print_summary(s: dict[str, Any]) -> None:
    print(
        f"\nmemsql main job: {'SUCCESS' if s['success'] else 'FAILED'}  (run {s['run_id']}, data in {s['home']})"
    )
    print("\nsources:")
    for name, info in s["sources"].items():
        print(f"  {name:<15} {info['kind']:<9} {info['rows']:>9,} rows  sha256 {info['sha256']}")
    if "benchmark" in s:
        b = s["benchmark"]
        print(
            f"\nbenchmark: {b['sessions']} sessions, {b['turns']} turns, {b['memory_critical']} memory-critical"
        )
        print(f"  {'source':<6} {'T1':>4} {'T2':>4} {'T3':>4}   turns")
        for src in ("NW", "SEC", "BIRD"):
            cells = [b["sessions_by_source_tier"].get(f"{src}-T{t}", 0) for t in (1, 2, 3)]
            turns = sum(b["turns_by_source_tier"].get(f"{src}-T{t}", 0) for t in (1, 2, 3))
            print(f"  {src:<6} {cells[0]:>4} {cells[1]:>4} {cells[2]:>4}   {turns:>5}")
    print("\nchecks:")
    for name, passed in sorted(s["checks"].items()):
        print(f"  {'PASS' if passed else 'FAIL'}  {name}")
    print("\nBrowse the run: memsql ui  (Dagster on http://127.0.0.1:3333)")


def _ui(args: argparse.Namespace) -> int:
    from memsql_assets.defs.instance import ensure_dagster_home

    ensure_dagster_home(memsql_home())
    cmd = [
        sys.executable,
        "-m",
        "dagster",
        "dev",
        "-w",
        str(REPO_ROOT / "workspace.yaml"),
        "-h",
        args.host,
        "-p",
        str(args.port),
    ]
    return subprocess.call(cmd, cwd=REPO_ROOT, env=os.environ.copy())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memsql", description="Multi-turn text-to-SQL memory benchmark platform."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="materialize the main job (sources -> profiles -> sessions + checks)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=_run)

    p = sub.add_parser("sources", help="inspect the source databases")
    ssub = p.add_subparsers(dest="sources_command", required=True)
    pl = ssub.add_parser("list", help="name, kind, path and row counts of each source")
    pl.add_argument("--json", action="store_true")
    pl.set_defaults(func=_sources_list)

    p = sub.add_parser("export-benchmark", help="write the benchmark as JSONL (one object per turn)")
    p.add_argument("path")
    p.set_defaults(func=_export_benchmark)

    p = sub.add_parser("ui", help="serve the Dagster UI over this project's instance")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=3333)
    p.set_defaults(func=_ui)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except MemsqlError as exc:
        print(f"memsql: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
