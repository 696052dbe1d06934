"""Sensitivity of the trajectory store to θ (composite support) and N (synthetic-question budget).

Not a test. Builds the three embedded sources into a temporary directory, then for every (θ, N)
builds a complete store (fresh ChromaDB directory) and prints: mean steps saved by composites
(absolute and %), composites found, store size (Chroma documents and bytes on disk incl. JSON
copies), build time and the store's coverage of the benchmark (share of distinct benchmark questions
whose top-1 trajectory's final SQL reads every ground-truth table, overall and per source). The embedding model is loaded once before the sweep, so build time is the
store's own cost. Results also go to bench/results/trajectory_sensitivity.json.

    python bench/trajectory_sensitivity.py [--thetas 0.1 0.25 0.5 0.75] [--budgets 30 90 300]
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
from memsql_assets.lib.memory.chroma import chroma_client
from memsql_assets.lib.memory.embeddings import embedding_function
from memsql_assets.lib.sources.build import build_source
from memsql_assets.lib.sources.config import SOURCE_NAMES, load_sources
from memsql_assets.lib.trajectories.store import build_trajectory_store, store_coverage

RESULTS = Path(__file__).resolve().parent / "results" / "trajectory_sensitivity.json"


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def theta_arg(text: str) -> float | int:
    """'3' is a count of trajectories, '0.3' a fraction (see composites.py)."""
    return float(text) if any(c in text for c in ".eE") else int(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--thetas", nargs="+", type=theta_arg, default=[0.1, 0.25, 0.5, 0.75])
    ap.add_argument("--budgets", nargs="+", type=int, default=[30, 90, 300])
    ap.add_argument("--max-len", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)

    rows = []
    with tempfile.TemporaryDirectory(prefix="memsql-traj-bench-") as tmp:
        root = Path(tmp)
        specs = load_sources(environ={})
        dbs = {n: build_source(specs[n], root / "sources" / f"{n}.sqlite").path for n in SOURCE_NAMES}
        turns = [dict(t.__dict__) for s in build_sessions(extract_all_profiles(dbs)) for t in s.turns]
        bench_questions = {t["question"] for t in turns}
        t0 = time.monotonic()
        embedding_function()(["warm up"])
        print(
            f"embedding model loaded in {time.monotonic() - t0:.1f} s (excluded from build times)",
            file=sys.stderr,
        )
        for n in args.budgets:
            for theta in args.thetas:
                home = root / f"store-n{n}-t{theta}"
                client = chroma_client(home)
                rep = build_trajectory_store(
                    dbs, n, args.seed, theta, args.max_len, bench_questions, client, json_dir=home / "json"
                )
                cs = rep.composite_stats
                cov = store_coverage(client, turns)
                rows.append(
                    {
                        "theta": theta,
                        "N": n,
                        "trajectories": len(rep.question_ids),
                        "mean_steps_without": cs["without_composites"]["mean_steps"],
                        "mean_steps_with": cs["with_composites"]["mean_steps"],
                        "steps_saved": cs["mean_steps_saved"],
                        "steps_saved_pct": cs["steps_saved_pct"],
                        "median_without": cs["without_composites"]["median_steps"],
                        "median_with": cs["with_composites"]["median_steps"],
                        "calls_per_step_with": cs["with_composites"]["tool_calls_per_step"],
                        "explore_exec_without": cs["without_composites"]["exploration_execution"],
                        "explore_exec_with": cs["with_composites"]["exploration_execution"],
                        "composites_found": len(rep.composites),
                        "composites": [c.name for c in rep.composites],
                        "documents": rep.documents,
                        "store_bytes": dir_bytes(home),
                        "build_s": round(rep.build_seconds, 2),
                        "allocation": rep.allocation,
                        "shortfall": rep.plan["shortfall"],
                        "failed_final_sql": len(rep.failed_final_sql),
                        "coverage": cov["coverage"],
                        "coverage_by_source": cov["by_source"],
                        "mean_jaccard": cov["mean_jaccard"],
                        "mean_similarity": cov["mean_similarity_overall"],
                    }
                )
                print(f"done θ={theta} N={n}", file=sys.stderr)

    header = (
        "θ",
        "N",
        "steps w/o",
        "steps w/",
        "saved",
        "saved %",
        "exp:exe w/o",
        "exp:exe w/",
        "composites",
        "docs",
        "store MiB",
        "build s",
        "coverage",
        "min per source",
        "similarity",
    )
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for r in rows:
        print(
            f"{r['theta']} | {r['N']} | {r['mean_steps_without']:.2f} | {r['mean_steps_with']:.2f} | "
            f"{r['steps_saved']:.2f} | {r['steps_saved_pct']:.1f} | {r['explore_exec_without']} | "
            f"{r['explore_exec_with']} | {r['composites_found']} | {r['documents']} | "
            f"{r['store_bytes'] / 2**20:.1f} | {r['build_s']:.1f} | {r['coverage']:.3f} | "
            f"{min(r['coverage_by_source'].values()):.3f} | {r['mean_similarity']:.3f}"
        )
    write_text_atomic(
        args.out, json.dumps({"max_len": args.max_len, "seed": args.seed, "rows": rows}, indent=2) + "\n"
    )
    print(f"\nwritten {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
