"""Sensitivity of AgentSM to θ (composite support) and N (synthetic-question budget), through the agent.

For every (θ, N) a complete trajectory store is built in a work home of its own (fresh ChromaDB,
JSON copies, composite tools) beside the benchmark and sources of `home`. Then the reference agent
(`gold-agent`) is evaluated under AgentSM (E) on a fixed sample of sessions (benchmark/sample.py), and
once under the agent baseline (T) on the same sample: per (θ, N) the store's own statistics (steps
saved by composites, composites found, documents, bytes, build time, coverage of the benchmark) and
the agent's EX, median steps and steps saved against T. `memsql trajectory sensitivity` and
bench/trajectory_sensitivity.py both run `sweep`.

The CLI's parser reads the defaults here, so the store, Chroma and the harness load only in a sweep.
"""

from __future__ import annotations

import shutil
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsql_assets.lib.paths import benchmark_dir, source_db_path, trajectories_dir
from memsql_assets.lib.vocabulary import AGENT_BASELINE_CONDITION, AGENTSM_CONDITION, REFERENCE_AGENT

DEFAULT_THETAS: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75)
DEFAULT_BUDGETS: tuple[int, ...] = (30, 90, 300)
DEFAULT_SESSIONS = 30  # the reference agent's sample, as in the main command


@dataclass(frozen=True)
class Sweep:
    thetas: Sequence[float | int] = DEFAULT_THETAS
    budgets: Sequence[int] = DEFAULT_BUDGETS
    sessions: int = DEFAULT_SESSIONS
    max_len: int = 3
    seed: int = 0


def theta_arg(text: str) -> float | int:
    """'3' is a count of trajectories, '0.3' a fraction (trajectories/composites.py)."""
    return float(text) if any(c in text for c in ".eE") else int(text)


def work_home(home: Path, target: Path) -> Path:
    """A home of its own for one store: `home`'s sources (linked, read-only) and benchmark (copied)."""
    from memsql_assets.lib.sources.config import SOURCE_NAMES

    for name in SOURCE_NAMES:
        link = source_db_path(target, name)
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(source_db_path(home, name).resolve())
    if not benchmark_dir(target).exists():
        shutil.copytree(benchmark_dir(home), benchmark_dir(target), ignore=shutil.ignore_patterns("extended"))
    return target


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def build_store(target: Path, n: int, theta: float | int, sweep: Sweep) -> dict[str, Any]:
    """Build the (θ, N) store under `target` as the trajectory_store asset lays it out; its statistics."""
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.memory.chroma import chroma_client, chroma_dir
    from memsql_assets.lib.trajectories.store import StoreSettings, build_home_store, store_coverage

    turns = read_turns(benchmark_dir(target))
    settings = StoreSettings(budget=n, seed=sweep.seed, theta=theta, max_len=sweep.max_len)
    rep = build_home_store(target, settings, frozenset(t["question"] for t in turns))
    client = chroma_client(target)
    cs, cov = rep.composite_stats, store_coverage(client, turns)
    return {
        "theta": theta,
        "N": n,
        "trajectories": len(rep.question_ids),
        "store_steps_saved_pct": cs["steps_saved_pct"],
        "composites_found": len(rep.composites),
        "composites": [c.name for c in rep.composites],
        "documents": rep.documents,
        "store_bytes": _dir_bytes(chroma_dir(target)) + _dir_bytes(trajectories_dir(target)),
        "build_s": round(rep.build_seconds, 2),
        "failed_final_sql": len(rep.failed_final_sql),
        "coverage": cov["coverage"],
        "coverage_by_source": cov["by_source"],
    }


def agent_figures(target: Path, condition: str, sessions: int) -> dict[str, Any]:
    """The reference agent under `condition` on the sample: EX, median steps, explore share."""
    from memsql_assets.lib.harness.evaluate import evaluate_partition
    from memsql_assets.lib.harness.settings import EvalSettings
    from memsql_assets.lib.trajectories.lookup import trajectory_lookup

    out = evaluate_partition(
        target, REFERENCE_AGENT, condition, EvalSettings(sessions=sessions), trajectory_factory=trajectory_lookup
    )
    rows = out.rows
    used = [r["trajectory_tables_used"] for r in rows if r["trajectory_tables_used"] is not None]
    return {
        "ex_pct": out.summary["ex_strict"],
        "turns": len(rows),
        "median_steps": statistics.median(r["steps"] for r in rows) if rows else None,
        "mean_steps": round(statistics.fmean(r["steps"] for r in rows), 3) if rows else None,
        "explore_share": round(statistics.fmean(r["explore_share"] for r in rows), 4) if rows else None,
        "trajectory_tables_used_rate": round(sum(used) / len(used), 4) if used else None,
    }


def sweep(
    home: Path, work_dir: Path, spec: Sweep = Sweep(), say: Callable[[str], None] = lambda _line: None
) -> dict[str, Any]:
    """Every (θ, N): the store's statistics and the reference agent's figures under E, against T."""
    rows: list[dict[str, Any]] = []
    baseline: dict[str, Any] | None = None
    for n in spec.budgets:
        for theta in spec.thetas:
            target = work_home(home, work_dir / f"store-n{n}-t{theta}")
            row = build_store(target, n, theta, spec)
            if baseline is None:  # T reads no trajectory: one run serves every (θ, N)
                baseline = agent_figures(target, AGENT_BASELINE_CONDITION, spec.sessions)
            agent = agent_figures(target, AGENTSM_CONDITION, spec.sessions)
            row.update({f"agent_{k}": v for k, v in agent.items()})
            row["agent_steps_saved"] = _saved(baseline, agent)
            rows.append(row)
            say(f"θ={theta} N={n}: EX {agent['ex_pct']} %, median steps {agent['median_steps']}")
    return {"sessions": spec.sessions, "max_len": spec.max_len, "seed": spec.seed, "baseline": baseline, "rows": rows}


def _saved(baseline: Mapping[str, Any], agent: Mapping[str, Any]) -> float | None:
    if baseline["median_steps"] is None or agent["median_steps"] is None:
        return None
    return baseline["median_steps"] - agent["median_steps"]


SENSITIVITY_COLUMNS = ("θ", "N", "EX E %", "median steps E", "mean steps E", "saved vs T", "tables used", "composites", "docs",
          "store MiB", "build s", "coverage")  # fmt: skip


def table_lines(result: Mapping[str, Any]) -> list[str]:
    """The sweep as a markdown table, the baseline's figures first."""
    base = result["baseline"] or {}
    lines = [f"{AGENT_BASELINE_CONDITION} (no trajectory): EX {base.get('ex_pct')} %, median steps "
             f"{base.get('median_steps')}, mean {base.get('mean_steps')} on {result['sessions']} sessions", "",
             " | ".join(SENSITIVITY_COLUMNS), " | ".join("---" for _ in SENSITIVITY_COLUMNS)]  # fmt: skip
    for r in result["rows"]:
        used = r["agent_trajectory_tables_used_rate"]
        lines.append(
            f"{r['theta']} | {r['N']} | {r['agent_ex_pct']} | {r['agent_median_steps']} | {r['agent_mean_steps']} | "
            f"{r['agent_steps_saved']} | {'-' if used is None else f'{100 * used:.0f} %'} | "
            f"{r['composites_found']} | {r['documents']} | {r['store_bytes'] / 2**20:.1f} | {r['build_s']:.1f} | "
            f"{r['coverage']:.3f}"
        )
    return lines
