"""Adaptive concurrency under a provider's in-flight cap: a model configured at 16 against a server
that takes 4 requests at once (429 with Retry-After beyond), against the same model configured at 4
from the start.

Not a test. The server is lib/models/fault_server.py (its own process, `latency` per answer); the
partition runs the whole real path (evaluate_partition, litellm, request store fresh per run,
scoring) under condition A, with the hardening tests' quick retries, after one warm-up run (the
first pays litellm's import). Reported: wall time of each run, their medians and the ratio, and the
adaptive run's limit range, retries and backoff time (the summary's `concurrency`).

    .venv/bin/python bench/adaptive_concurrency.py [--repeats 5] [--every 10] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import _common as c

from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.harness.settings import EvalSettings
from memsql_assets.lib.models.fault_server import MODEL, QUICK_RETRY, fault_registry, fault_server
from memsql_assets.lib.models.gateway import ModelGateway
from memsql_assets.lib.models.request_store import RequestStore

CAP = 4


def one_run(home: Path, folder: Path, max_concurrency: int, latency: float) -> dict:
    folder.mkdir()
    with fault_server(folder, max_in_flight=CAP, retry_after_s=latency, latency_s=latency) as server:
        registry = fault_registry(folder / "models.yaml", server.url, max_concurrency)
        gateway = ModelGateway(registry, RequestStore.at_home(home), home=home, retry=QUICK_RETRY)
        started = time.monotonic()
        out = evaluate_partition(home, MODEL, "A", EvalSettings(), registry=registry, gateway=gateway)
        wall = time.monotonic() - started
    failed = sum(1 for r in out.rows if r["model_error_type"])
    return {"max_concurrency": max_concurrency, "wall_s": round(wall, 3), "turns": len(out.rows), "failed": failed, **out.summary["concurrency"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--every", type=int, default=10, help="every k-th session (10: the tests' 30 sessions)")
    ap.add_argument("--latency", type=float, default=0.05, help="seconds per answer")
    args = ap.parse_args()
    home = c.bench_home(every=args.every)
    runs: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        one_run(c.fresh_copy(home, Path(tmp) / "home"), Path(tmp) / "warm-up", CAP, args.latency)  # litellm's import
        for i in range(args.repeats):
            for level in (16, CAP):  # alternated, so load drifts hit both alike
                copy = c.fresh_copy(home, Path(tmp) / "home")
                runs.append(one_run(copy, Path(tmp) / f"server-{i}-{level}", level, args.latency) | {"repeat": i})
    medians = {level: c.median(r["wall_s"] for r in runs if r["max_concurrency"] == level) for level in (16, CAP)}
    print(c.table(list(runs[0]), [list(r.values()) for r in runs]))
    ratio = medians[16] / medians[CAP]
    print(f"median wall: adaptive from 16 {medians[16]:.2f} s, fixed at {CAP} {medians[CAP]:.2f} s, ratio {ratio:.2f}")
    c.write_json(
        "adaptive_concurrency" if args.every == 10 else f"adaptive_concurrency_every{args.every}",
        {"machine": c.machine(), "args": vars(args), "runs": runs, "median_wall_s": medians, "ratio": round(ratio, 3)},
    )


if __name__ == "__main__":
    main()
