"""EX verdicts per second of the strict, set and bag comparators (memsql_assets/lib/sql/compare.py).

Not a test. Two workloads, each judged by all three comparators side by side:

- benchmark mix: the ground-truth result of every turn of the 300-session benchmark on the
  embedded sources (1-row aggregates up to a few hundred rows), paired four ways the harness sees:
  the same rows (what gold produces), the rows in reverse order (a model's ORDER BY differs), every
  float perturbed by 1e-9 relative (float noise: strict says no, bag/set take the tolerance path),
  and one value changed (a wrong answer).
- large result sets: synthetic 10,000- and 100,000-row results (int, float, text, NULL columns)
  paired as identical (a copy), shuffled, float noise and one row changed.

A verdict's time includes everything the comparator does (stringifying for strict, hashing, the
sort-based tolerance matching). Each cell is the median of 3 timed batches after one warm-up.

    .venv/bin/python bench/comparator.py [--sizes 10000 100000] [--min-batch-s 0.3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import _common as c

from memsql_assets.lib.sql.compare import COMPARATORS
from memsql_assets.lib.sql.execute import run_query
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.vocabulary import SOURCE_BY_PREFIX

Rows = list[tuple[Any, ...]]
ORDER = ("strict", "set", "bag")


def noisy(rows: Rows, rel: float = 1e-9) -> Rows:
    return [tuple(v * (1 + rel) if type(v) is float else v for v in r) for r in rows]


def one_changed(rows: Rows) -> Rows:
    if not rows:
        return [(1,)]
    out = list(rows)
    r = list(out[len(out) // 2])
    v = r[-1]
    r[-1] = (v + 1) if isinstance(v, int | float) and not isinstance(v, bool) else f"{v}x"
    out[len(out) // 2] = tuple(r)
    return out


def pairs_for(rows: Rows, rng: random.Random, shuffle: bool) -> dict[str, tuple[Rows, Rows]]:
    reordered = list(rows)
    if shuffle:
        rng.shuffle(reordered)
    else:
        reordered.reverse()
    return {
        "same": (list(rows), rows),
        "reordered": (reordered, rows),
        "float noise": (noisy(rows), rows),
        "one changed": (one_changed(rows), rows),
    }


def synthetic(n: int, rng: random.Random) -> Rows:
    words = [f"name-{i}" for i in range(5000)]
    return [
        (
            i,
            round(rng.uniform(-1e6, 1e6), 4),
            words[rng.randrange(len(words))],
            None if i % 97 == 0 else rng.randrange(1000),
        )
        for i in range(n)
    ]


def benchmark_results() -> list[Rows]:
    """GT result rows of every turn of the full benchmark (distinct SQL texts only once)."""
    sessions = c.all_sessions()
    dbs = {p: c.cache_root() / "embedded_sources" / f"{name}.sqlite" for p, name in SOURCE_BY_PREFIX.items()}
    conns = {p: open_readonly(path) for p, path in dbs.items()}
    seen: dict[str, Rows] = {}
    out = []
    try:
        for s in sessions:
            for t in s.turns:
                if t.gt_sql not in seen:
                    res = run_query(conns[t.source], t.gt_sql)
                    seen[t.gt_sql] = list(res.rows or [])
                out.append(seen[t.gt_sql])
    finally:
        for conn in conns.values():
            conn.close()
    return out


def rate(
    fn: Callable[[Any, Any], bool], work: Sequence[tuple[Rows, Rows]], min_s: float
) -> tuple[float, bool]:
    """Verdicts per second over `work` (median of 3 batches), and the verdict of the first pair."""
    verdict = fn(*work[0])
    reps = 1
    t0 = time.perf_counter()
    for a, b in work:
        fn(a, b)
    one = time.perf_counter() - t0
    reps = max(1, int(min_s / max(one, 1e-9)))
    batches = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            for a, b in work:
                fn(a, b)
        batches.append((time.perf_counter() - t0) / (reps * len(work)))
    return 1.0 / c.median(batches), verdict


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    ap.add_argument("--min-batch-s", type=float, default=0.3)
    ap.add_argument("--out", default="comparator")
    args = ap.parse_args(argv)
    info = c.machine()
    rng = random.Random(0)

    results: list[dict[str, Any]] = []
    gt = benchmark_results()
    sizes = [len(r) for r in gt]
    print(
        f"benchmark mix: {len(gt)} GT results, rows median {c.median(sizes):.0f}, max {max(sizes)}",
        file=sys.stderr,
    )
    mix: dict[str, list[tuple[Rows, Rows]]] = {}
    for rows in gt:
        for case, pair in pairs_for(rows, rng, shuffle=False).items():
            mix.setdefault(case, []).append(pair)
    for case, work in mix.items():
        row: dict[str, Any] = {
            "workload": f"benchmark mix ({len(gt)} turns)",
            "rows": "1-" + str(max(sizes)),
            "case": case,
        }
        for name in ORDER:
            per_s, _ = rate(COMPARATORS[name], work, args.min_batch_s)
            row[name] = per_s
            row[f"{name}_equal_share"] = round(sum(COMPARATORS[name](a, b) for a, b in work) / len(work), 3)
        results.append(row)
    all_pairs = [p for work in mix.values() for p in work]
    row = {"workload": f"benchmark mix ({len(gt)} turns)", "rows": "1-" + str(max(sizes)), "case": "all four"}
    for name in ORDER:
        row[name], _ = rate(COMPARATORS[name], all_pairs, args.min_batch_s)
    results.append(row)

    for n in args.sizes:
        base = synthetic(n, rng)
        for case, pair in pairs_for(base, rng, shuffle=True).items():
            row = {"workload": "synthetic", "rows": n, "case": case}
            for name in ORDER:
                per_s, verdict = rate(COMPARATORS[name], [pair], args.min_batch_s / 3)
                row[name] = per_s
                row[f"{name}_verdict"] = verdict
                row[f"{name}_ms_per_verdict"] = round(1000 / per_s, 3)
            results.append(row)
        print(f"done {n} rows", file=sys.stderr)

    header = ["workload", "rows", "case", *(f"{n} verdicts/s" for n in ORDER), *(f"{n} ms" for n in ORDER)]
    table_rows: list[list[Any]] = [
        [
            r["workload"],
            r["rows"],
            r["case"],
            *(round(r[n], 1) for n in ORDER),
            *(round(1000 / r[n], 4) for n in ORDER),
        ]
        for r in results
    ]
    print("\nEX comparators, verdicts per second (median of 3 batches; ms = per verdict)\n")
    print(c.table(header, table_rows))
    info["loadavg_at_end"] = c.load_now()
    path = c.write_json(
        args.out,
        {
            "machine": info,
            "settings": {"sizes": args.sizes, "min_batch_s": args.min_batch_s},
            "benchmark_mix": {"turns": len(gt), "rows_median": c.median(sizes), "rows_max": max(sizes)},
            "results": results,
        },
    )
    print(f"\nwritten {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
