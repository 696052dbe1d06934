"""The extended benchmark's reference figures (docs/specification.md §6), on the embedded or the real data:
the build as the extended_sessions asset runs it (the wording check runs on every turn of every session,
and fails the build on the first contradiction), then from its turns:

- the mean `guess_rate` of the memory-critical turns, overall, per source and per phenomenon tag;
- guess-probe's memory-critical EX under A (its SQL, filled with the pool's most common values, against
  the ground truth, strictly, as the harness compares);
- guess-probe's EX on the cross-session turns (CROSS_SESSION_TAGS) alone;
- the share of distractor turns whose twin runs in an earlier wave, at W = 1, 4, 8, 16, 32, and of
  history turns whose session continues one of an earlier wave, at W = 1, 4, 8, 11, 12, 32;
- the memory-critical turns whose farthest value was last stated more than five turns back;
- the detours that open with an explicit marker.

    PYTHONPATH=$PWD .venv/bin/python bench/extended_figures.py --data embedded
    MEMSQL_REAL_DATA=DIR PYTHONPATH=$PWD .venv/bin/python bench/extended_figures.py --data real

The real data is the folder docs/data_sources.md describes (`--real-data`, else $MEMSQL_REAL_DATA).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import _common as c

from memsql_assets.lib.benchmark.extended.template import EXTENDED_DIR
from memsql_assets.lib.benchmark.pipeline import build_measured_extended_sessions, extract_all_profiles
from memsql_assets.lib.harness.schedule import twins_reachable_pct
from memsql_assets.lib.reference.builtins import answer
from memsql_assets.lib.sources.build import build_source
from memsql_assets.lib.sources.config import SOURCE_NAMES, load_sources
from memsql_assets.lib.sql.compare import strict_equal
from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.vocabulary import CROSS_SESSION_TAGS, GUESS_PROBE, SOURCE_BY_PREFIX

WAVE_SIZES = (1, 4, 8, 16, 32)
HISTORY_WAVE_SIZES = (1, 4, 8, 11, 12, 32)  # a history's stride is 11 (extended/layout.py)
WINDOW = 5  # the five-turn working memory (B_wm5): a value from further back is beyond it
GUESS_FIELDS = ("sql_template", "referenced_context_keys", "stated_values", "guess_values")
# Where each source's real files lie under the real-data folder (as tests/realdata reads them).
REAL_LAYOUT = {
    "MEMSQL_SOURCE_BIRD_FINANCIAL": ("bird_financial", "berka_raw"),
    "MEMSQL_SOURCE_SEC_EDGAR": ("sec_edgar", "companyfacts"),
    "MEMSQL_SOURCE_NORTHWIND": ("northwind",),
}


def real_dbs(folder: Path, out: Path) -> dict[str, Path]:
    env = {}
    for var, parts in REAL_LAYOUT.items():
        path = folder.joinpath(*parts)
        if not path.exists():
            sys.exit(f"real data: {path} does not exist (expected the layout of docs/data_sources.md)")
        env[var] = str(path)
    specs = load_sources(environ=env)
    return {name: build_source(specs[name], out / f"{name}.sqlite").path for name in SOURCE_NAMES}


def mean_pct(values: Iterable[float]) -> float:
    values = list(values)
    return 100 * sum(values) / len(values) if values else float("nan")


def guess_probe_correct(turns: list[dict[str, Any]], dbs: dict[str, Path], home: Path) -> int:
    """How many of `turns` guess-probe answers right with no memory (condition A: no prompt)."""
    correct = 0
    with contextlib.ExitStack() as stack:
        conns = {p: stack.enter_context(contextlib.closing(open_readonly(dbs[n]))) for p, n in SOURCE_BY_PREFIX.items()}
        for t in turns:
            sql, _, _ = asyncio.run(answer(GUESS_PROBE, [], {k: t[k] for k in GUESS_FIELDS}, {}, home))
            conn = conns[t["source"]]
            correct += strict_equal(run_query(conn, sql).rows, run_query(conn, t["gt_sql"]).rows)
    return correct


def by(turns: list[dict[str, Any]], key: Callable[[dict[str, Any]], str]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in turns:
        groups[key(t)].append(t)
    return groups


def figures(turns: list[dict[str, Any]], dbs: dict[str, Path], home: Path) -> list[tuple[str, str]]:
    critical = [t for t in turns if t["memory_critical"]]
    guess = mean_pct(t["guess_rate"] for t in critical)
    rows = [
        ("sessions / turns / memory-critical", f"{len({t['session_id'] for t in turns})} / {len(turns)} / {len(critical)}"),
        ("wording check", f"passed on all {len(turns)} turns (the build fails on the first contradiction)"),
        ("mean guess_rate, memory-critical turns", f"{guess:.2f} %"),
    ]  # fmt: skip
    for name, group in sorted(by(critical, lambda t: t["source"]).items()):
        rows.append((f"... {name}", f"{mean_pct(t['guess_rate'] for t in group):.2f} % ({len(group)} turns)"))
    for tag, group in sorted(by(critical, lambda t: t["tag"]).items()):
        mark = " (cross-session)" if tag in CROSS_SESSION_TAGS else ""
        rows.append((f"... {tag}{mark}", f"{mean_pct(t['guess_rate'] for t in group):.2f} % ({len(group)} turns)"))
    right = guess_probe_correct(critical, dbs, home)
    rows.append(("guess-probe under A, memory-critical EX", f"{100 * right / len(critical):.2f} % ({right}/{len(critical)})"))
    cross = [t for t in critical if t["tag"] in CROSS_SESSION_TAGS]
    right = guess_probe_correct(cross, dbs, home)
    rows.append(("guess-probe under A, cross-session EX", f"{100 * right / len(cross):.2f} % ({right}/{len(cross)})"))
    for size in WAVE_SIZES:
        rows.append((f"distractor turns whose twin is reachable, W = {size}", f"{twins_reachable_pct(turns, size)} %"))
    continued = [{**t, "twin_session_id": t.get("continues_session_id")} for t in turns]
    for size in HISTORY_WAVE_SIZES:
        rows.append((f"history turns whose earlier session is reachable, W = {size}", f"{twins_reachable_pct(continued, size)} %"))
    far = sum(t["recall_distance"] > WINDOW for t in critical)
    rows.append((f"memory-critical turns needing a value beyond {WINDOW} turns", f"{far} of {len(critical)}"))
    detours = [t for t in turns if t["tag"] == "detour"]
    rows.append(("detours with an explicit marker", f"{sum(t['explicit_marker'] for t in detours)} of {len(detours)}"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", choices=("embedded", "real"), default="embedded")
    parser.add_argument("--real-data", type=Path, default=os.environ.get("MEMSQL_REAL_DATA"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="extended-figures-") as tmp:
        if args.data == "real":
            if args.real_data is None:
                sys.exit("--data real needs --real-data DIR or $MEMSQL_REAL_DATA")
            dbs = real_dbs(args.real_data.resolve(), Path(tmp))
        else:
            dbs = c.embedded_sources(c.cache_root())
        profiles = extract_all_profiles(dbs, EXTENDED_DIR)
        turns = [dict(t.__dict__) for s in build_measured_extended_sessions(profiles, dbs) for t in s.turns]
        print(f"The extended benchmark on the {args.data} data\n")
        print(c.table(("measure", "figure"), figures(turns, dbs, Path(tmp))))


if __name__ == "__main__":
    main()
