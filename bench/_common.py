"""Shared pieces of the benchmarks: a reduced benchmark home, statistics, tables, JSON, the machine.

Not a test module. A bench home is built by lib/harness/homes.py, as the tests' `small_home` is: the three embedded
sources, a subset of the 300 sessions (every k-th, so all sources and tiers are present), the
seeded semantic memory and, when asked, the trajectory store with the default settings (condition
E). Homes are cached under $MEMSQL_BENCH_CACHE (default: /tmp/memsql-bench-cache) and keyed by
their content, so a second benchmark run does not rebuild them; delete the folder to start over.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import memsql_assets  # noqa: F401  - applies the offline switches before litellm / chroma / HF load

REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = Path(__file__).resolve().parent / "results"
CACHE_ENV = "MEMSQL_BENCH_CACHE"
# bench/smoke.py's pass (CI): every script on the smallest home, its figures written beside the cache.
SMOKE_ENV = "MEMSQL_BENCH_SMOKE"
SMOKE_EVERY = 100  # every 100th session: 3 sessions, one per source
SMOKE_STORE_BUDGET = 12  # synthetic questions of a smoke home's trajectory store, as the tests' homes


def smoke() -> bool:
    return os.environ.get(SMOKE_ENV) == "1"


def store_settings() -> Any:
    """The trajectory store of a bench home: the asset's defaults, a smaller budget in a smoke pass."""
    from memsql_assets.lib.trajectories.store import StoreSettings

    return StoreSettings(budget=SMOKE_STORE_BUDGET) if smoke() else StoreSettings()


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or "/tmp/memsql-bench-cache")


# ---------------------------------------------------------------- bench homes


def embedded_sources(root: Path) -> dict[str, Path]:
    from memsql_assets.lib.sources.build import build_source
    from memsql_assets.lib.sources.config import SOURCE_NAMES, load_sources

    out = root / "embedded_sources"
    done = out / "_done"
    specs = load_sources(environ={})
    if not done.exists():
        out.mkdir(parents=True, exist_ok=True)
        for name in SOURCE_NAMES:
            build_source(specs[name], out / f"{name}.sqlite")
        done.write_text("ok")
    return {name: out / f"{name}.sqlite" for name in SOURCE_NAMES}


def all_sessions() -> list[Any]:
    """The full 300-session benchmark on the embedded sources (deterministic)."""
    from memsql_assets.lib.benchmark.pipeline import build_measured_sessions, extract_all_profiles

    dbs = embedded_sources(cache_root())
    return build_measured_sessions(extract_all_profiles(dbs), dbs)


def bench_home(every: int = 10, limit: int | None = None, trajectories: bool = False) -> Path:
    """A data directory holding every `every`-th session (at most `limit`), ready for evaluate_partition;
    with `trajectories`, the trajectory store and composite tools at the asset's defaults (condition E).

    every=10 gives the 30 sessions of tests' small_home; every=3 gives 100 sessions. A smoke pass
    takes every SMOKE_EVERY-th session at most, and a store of SMOKE_STORE_BUDGET questions.
    """
    from memsql_assets.lib.harness.homes import build_home, every_kth

    every = max(every, SMOKE_EVERY) if smoke() else every
    home = cache_root() / f"home-every{every}-limit{limit or 'all'}{'-traj' if trajectories else ''}"
    if (home / "_ready").exists():
        return home
    if home.exists():
        shutil.rmtree(home)
    sessions = all_sessions()
    build_home(
        home,
        embedded_sources(cache_root()),
        every_kth(sessions, every, limit),
        store=store_settings() if trajectories else None,
        exclude_questions=frozenset(t.question for s in sessions for t in s.turns),
    )
    (home / "_ready").write_text("ok")
    return home


_copies = itertools.count(1)


def fresh_copy(home: Path, dest: Path) -> Path:
    """A private copy of a cached home (partitions write results, checkpoints and Chroma files).

    Always a new directory (`dest` plus a counter): Chroma keeps one client per path in the
    process, so re-creating a directory at a path used before would hand back a stale client.
    """
    dest = dest.with_name(f"{dest.name}-{next(_copies)}")
    shutil.copytree(home, dest, ignore=shutil.ignore_patterns("redis", "results", "requests"))
    return dest


# ---------------------------------------------------------------- statistics and output


def ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def median(values: Iterable[float]) -> float:
    vals = list(values)
    return statistics.median(vals) if vals else float("nan")


def quantile(values: Sequence[float], q: float) -> float:
    vals = sorted(values)
    if not vals:
        return float("nan")
    pos = q * (len(vals) - 1)
    lo, hi = int(pos), min(int(pos) + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-markdown table (also readable in a terminal)."""

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.3f}" if abs(v) < 10 else f"{v:,.1f}"
        return str(v)

    cells = [[fmt(v) for v in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(header)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    lines.append("| " + " | ".join("-" * w for w in widths) + " |")
    lines += ["| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells]
    return "\n".join(lines)


def load_now() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def disk_write_ms(files: int = 200) -> float:
    """Median ms to write one request-store-sized record (7 KB, atomically, no fsync) beside the
    bench homes. This VM's disk moves between ~0.05 and ~1 ms a file within minutes; every figure
    that writes files per turn moves with it, so the benches record it."""
    from memsql_assets.lib.atomic import write_text_atomic

    text = "x" * 7000
    samples = []
    cache_root().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_root(), prefix="disk-probe-") as tmp:
        for i in range(files):
            path = Path(tmp) / f"{i % 16:02x}" / f"{i}.json"
            t0 = time.perf_counter()
            write_text_atomic(path, text, durable=False)
            samples.append(time.perf_counter() - t0)
    return round(statistics.median(samples) * 1000, 3)


def machine() -> dict[str, Any]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        mem = subprocess.run(["free", "-h"], capture_output=True, text=True, check=False).stdout.splitlines()[
            1
        ]
        mem = " ".join(mem.split()[1:2])
    except (OSError, IndexError):
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory_total": mem,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "loadavg_at_start": load_now(),
        "disk_write_ms_at_start": disk_write_ms(),
    }


def write_json(name: str, payload: Mapping[str, Any]) -> Path:
    from memsql_assets.lib.atomic import write_text_atomic

    path = (cache_root() / "smoke-results" if smoke() else RESULTS_DIR) / f"{name}.json"
    body = {"benchmark": name, "written_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **payload}
    write_text_atomic(path, json.dumps(body, indent=2, sort_keys=False, default=str) + "\n")
    return path
