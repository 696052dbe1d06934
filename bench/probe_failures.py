"""reader-probe on the extended benchmark, embedded data: memory-critical and all-turn EX per
condition, EX per phenomenon tag, the stale and contaminated counts, and the memory-critical turns it
fails, grouped by tag and template turn (variant, turn index), each with its question and the SQL the
probe wrote against the ground truth.

    PYTHONPATH=$PWD .venv/bin/python bench/probe_failures.py H B_wm5 [--show N] [--home DIR]

The home (embedded sources, the whole extended benchmark as the extended_sessions asset builds it,
without the guess-rate measurement, which no score here uses) is cached under $MEMSQL_BENCH_CACHE
and keyed by the templates' content, so a changed template builds a new one. Each condition runs
through `evaluate_partition` in the context mode its conditions entry names (observed by default on
this benchmark); a condition of a `MEMSQL_CONDITIONS_FILE` runs the same way.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import _common as c

from memsql_assets.lib.benchmark.extended.build import build_extended_sessions
from memsql_assets.lib.benchmark.extended.template import EXTENDED_DIR
from memsql_assets.lib.benchmark.profiles import extract_profiles
from memsql_assets.lib.benchmark.store import read_turns
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.homes import build_home
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.paths import benchmark_dir
from memsql_assets.lib.trajectories.lookup import trajectory_lookup
from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK

MODEL = "reader-probe"
SMOKE_SESSIONS = 9  # a smoke pass evaluates a sample (the smallest `memsql eval --sessions` takes)


def templates_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(Path(EXTENDED_DIR).glob("*.yaml")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def extended_home(trajectories: bool) -> Path:
    """A cached home holding the embedded sources and the whole extended benchmark, and the trajectory
    store (E, E_prompt) when asked for."""
    root = c.cache_root()
    home = root / f"extended-home-{templates_digest()}{'-traj' if trajectories else ''}"
    if (home / "_ready").exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    dbs = c.embedded_sources(root)
    profiles = {s: extract_profiles(s, p, EXTENDED_DIR) for s, p in dbs.items()}
    sessions = build_extended_sessions(profiles)
    build_home(home, dbs, sessions, benchmark=EXTENDED_BENCHMARK, store=c.store_settings() if trajectories else None)
    (home / "_ready").write_text("ok")
    return home


def answer(home: Path, row: dict[str, Any]) -> str:
    record = RequestStore.at_home(home).get(row["request_key"]) or {}
    response = record.get("response") or {}
    choices = response.get("choices") or [{}]
    return str((choices[0].get("message") or {}).get("content") or response)


def report(home: Path, condition: str, turns: dict[tuple[str, int], dict[str, Any]], show: int) -> None:
    outcome = evaluate_partition(
        home,
        MODEL,
        condition,
        EvalSettings(sessions=SMOKE_SESSIONS if c.smoke() else None),
        trajectory_factory=trajectory_lookup,
        benchmark=EXTENDED_BENCHMARK,
    )
    rows = outcome.rows
    critical = [r for r in rows if r["memory_critical"]]
    right = sum(bool(r["ex_strict"]) for r in critical)
    share = f"{100 * right / len(critical):.1f} % ({right}/{len(critical)})"
    share += f", all turns {100 * sum(bool(r['ex_strict']) for r in rows) / len(rows):.1f} % of {len(rows)}"
    stale = sum(bool(r.get("stale_state")) for r in rows)
    contaminated = sum(bool(r.get("contaminated")) for r in rows)
    mode = outcome.summary.get("context_mode")
    print(
        f"\n== {condition} ({mode}): memory-critical EX {share}, stale {stale}, contaminated {contaminated}"
    )
    by_tag: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in critical:
        by_tag[turns[(r["session_id"], r["turn_index"])]["tag"]].append(r)
    if stale:
        print(
            "  stale: "
            + ", ".join(f"{r['session_id']} turn {r['turn_index']}" for r in rows if r.get("stale_state"))
        )
    for tag, group in sorted(by_tag.items()):
        ok = sum(bool(r["ex_strict"]) for r in group)
        print(f"  {tag:<18} {100 * ok / len(group):5.1f} % ({ok}/{len(group)})")
    failed: dict[tuple[str, str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in critical:
        if not r["ex_strict"]:
            t = turns[(r["session_id"], r["turn_index"])]
            failed[(t["tag"], f"{t['source']}/{t['variant_id']}", r["turn_index"])].append(r)
    for (tag, variant, index), group in sorted(failed.items()):
        print(f"\n  [{tag}] {variant} turn {index}: {len(group)} failed")
        for r in group[:show]:
            t = turns[(r["session_id"], r["turn_index"])]
            print(f"    {r['session_id']}: {t['question']}")
            print(f"      wrote: {' '.join(answer(home, r).split())[:400]}")
            print(f"      truth: {' '.join(t['gt_sql'].split())[:400]}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("conditions", nargs="+")
    parser.add_argument("--show", type=int, default=1, help="failed sessions shown per template turn")
    parser.add_argument("--home", type=Path, help="an existing home with the extended benchmark")
    parser.add_argument(
        "--trajectories", action="store_true", help="build the trajectory store (E, E_prompt)"
    )
    args = parser.parse_args()
    source = args.home or extended_home(args.trajectories)
    turns = {
        (t["session_id"], t["turn_index"]): t for t in read_turns(benchmark_dir(source, EXTENDED_BENCHMARK))
    }
    with tempfile.TemporaryDirectory(prefix="probe-failures-") as tmp:
        home = Path(tmp) / "home"  # results, checkpoints and memories of this run only
        shutil.copytree(source, home, ignore=shutil.ignore_patterns("redis", "results", "requests"))
        for condition in args.conditions:
            report(home, condition, turns, args.show)


if __name__ == "__main__":
    main()
