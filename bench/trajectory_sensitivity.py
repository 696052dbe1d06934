"""Sensitivity of AgentSM to θ (composite support) and N (synthetic-question budget), through the agent.

Not a test. Builds the three embedded sources and the benchmark into a temporary home, then runs
the sweep of memsql_assets/lib/harness/trajectory_sensitivity.py (the one definition; `memsql trajectory
sensitivity` runs it over $MEMSQL_HOME): for every (θ, N) a complete store, its statistics (steps
saved by composites, composites found, store size, build time, coverage of the benchmark) and the
reference agent's EX and median steps under E on a sample of sessions, against T. The embedding
model is loaded once before the sweep, so build time is the store's own cost. Results also go to
bench/results/trajectory_sensitivity.json.

    python bench/trajectory_sensitivity.py [--thetas 0.1 0.25 0.5 0.75] [--budgets 30 90 300] [--sessions 30]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from memsql_assets.lib.atomic import write_text_atomic
from memsql_assets.lib.benchmark.pipeline import build_sessions, extract_all_profiles
from memsql_assets.lib.harness.homes import build_home
from memsql_assets.lib.harness.trajectory_sensitivity import (
    DEFAULT_BUDGETS,
    DEFAULT_SESSIONS,
    DEFAULT_THETAS,
    Sweep,
    sweep,
    table_lines,
    theta_arg,
)
from memsql_assets.lib.memory.embeddings import embedding_function
from memsql_assets.lib.sources.build import build_source
from memsql_assets.lib.sources.config import SOURCE_NAMES, load_sources

RESULTS = Path(__file__).resolve().parent / "results" / "trajectory_sensitivity.json"


def base_home(root: Path) -> Path:
    """The embedded sources and the paper benchmark, as `memsql run` lays them out (no semantic memory:
    the sweep's work homes have their own stores)."""
    specs = load_sources(environ={})
    dbs = {n: build_source(specs[n], root / "sources" / f"{n}.sqlite").path for n in SOURCE_NAMES}
    return build_home(root / "home", dbs, build_sessions(extract_all_profiles(dbs)), semantic=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--thetas", nargs="+", type=theta_arg, default=list(DEFAULT_THETAS))
    ap.add_argument("--budgets", nargs="+", type=int, default=list(DEFAULT_BUDGETS))
    ap.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS)
    ap.add_argument("--max-len", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="memsql-traj-bench-") as tmp:
        home = base_home(Path(tmp))
        t0 = time.monotonic()
        embedding_function()(["warm up"])
        print(f"embedding model loaded in {time.monotonic() - t0:.1f} s (excluded from build times)", file=sys.stderr)
        spec = Sweep(args.thetas, args.budgets, args.sessions, args.max_len, args.seed)
        result = sweep(home, Path(tmp) / "stores", spec, say=lambda line: print(line, file=sys.stderr, flush=True))
    print("\n".join(table_lines(result)))
    write_text_atomic(args.out, json.dumps(result, indent=2) + "\n")
    print(f"\nwritten {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
