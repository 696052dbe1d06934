"""`memsql view` on a home of at least 10,000 evaluated turns: how long its pages take to load.

The home is README command 1's (`memsql run`: four reference models x six conditions x 1,400 turns,
33,600 turn rows), built once under $MEMSQL_BENCH_CACHE, or `--home` of your own. Each round starts
`memsql view` in its own process on a free port and times, over HTTP:
- the first list page of the fresh server (it joins every result file with the benchmark first),
- the same page again (warm), a filtered page (one model and condition, failed turns), a text
  search, one turn's page, and a comparison of two partitions.
Medians over the rounds; the fresh page is what a user waits for after opening the viewer.

    .venv/bin/python bench/viewer.py [--home H] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from _common import bench_home, cache_root, fresh_copy, load_now, machine, median, smoke, table, write_json

PAGES = {
    "warm list": "/",
    "filtered list (recall-probe B, failed)": "/?model=recall-probe&condition=B&failed=yes",
    "text search": "/?q=district",
    "compare (recall-probe B vs B_wm5)": "/compare?left=recall-probe/B&right=recall-probe/B_wm5",
}


def _run_home() -> Path:
    home = cache_root() / "viewer_home"
    if not (home / "_done").exists():
        env = {**os.environ, "MEMSQL_HOME": str(home), "DAGSTER_HOME": str(home / "dagster_home")}
        subprocess.run([sys.executable, "-m", "memsql_assets.cli", "run", "--json"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        (home / "_done").write_text("ok")
    return home


def _smoke_home() -> Path:
    """A smoke pass's home: the smallest bench home with the pages' two partitions evaluated."""
    from memsql_assets.lib.harness.evaluate import evaluate_partition

    home = fresh_copy(bench_home(), cache_root() / "viewer-smoke")
    for condition in ("B", "B_wm5"):
        evaluate_partition(home, "recall-probe", condition)
    return home


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as r:
        body = r.read()
    return time.perf_counter() - t0, body


def _wait_up(url: str, proc: subprocess.Popen) -> None:
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"memsql view exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1].strip("/"))), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("memsql view did not start within 30 s")


def _turn_path(body: bytes) -> str:
    text = body.decode()
    start = text.index('href="/turn/') + len('href="')
    return text[start : text.index('"', start)]


def one_round(home: Path) -> dict[str, float]:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "MEMSQL_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "memsql_assets.cli", "view", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_up(base, proc)
        times = {}
        times["fresh server: first list page"], body = _get(base + "/")
        turn = _turn_path(body)  # a failed turn's page below, where the filtered list has one
        for name, path in PAGES.items():
            times[name], body2 = _get(base + path)
            if name.startswith("filtered") and b'href="/turn/' in body2:  # a smoke home may fail no turn
                turn = _turn_path(body2)
        times["one turn"], _ = _get(base + turn)
        return times
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def turn_rows(home: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.read_metadata(p).num_rows for p in (home / "results").glob("model=*/condition=*/*.parquet"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, help="a home with results (default: README command 1's, built once)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    info = machine()
    home = args.home or (_smoke_home() if smoke() else _run_home())
    n = turn_rows(home)
    rounds = [one_round(home) for _ in range(args.rounds)]
    medians = {k: round(median(r[k] for r in rounds), 3) for k in rounds[0]}
    print(f"memsql view over {n:,} turn rows ({home}), medians of {args.rounds} rounds (s):")
    print(table(["page", "median s", "max s"], [(k, v, max(r[k] for r in rounds)) for k, v in medians.items()]))
    path = write_json("viewer", {"machine": {**info, "loadavg_at_end": load_now()}, "turn_rows": n,
                                 "rounds": rounds, "median_s": medians, "target": "list of 10,000 turns < 2 s"})
    print(f"written {path}")


if __name__ == "__main__":
    main()
