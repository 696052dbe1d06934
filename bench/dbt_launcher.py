"""What dagster-dbt pays before each dbt command: it runs `<dbt executable> --version`. The venv's dbt
starts up and requests pypi.org's latest release (1 s timeout); the launcher
(memsql_assets/lib/report/dbt_launcher.sh) answers from the installed version. Wall time of that
call for both, interleaved so both see the same load; medians over the rounds, and their ratio.

    .venv/bin/python bench/dbt_launcher.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from _common import load_now, machine, median, table, write_json

from memsql_assets.lib.report.dbt_cli import DBT_LAUNCHER, dbt_env, dbt_executable


def _seconds(executable: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([executable, "--version"], env=env, capture_output=True, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memsql-bench-dbt-") as tmp:
        env = dbt_env(Path(tmp))
        variants = {"dbt --version": dbt_executable(), "launcher --version": str(DBT_LAUNCHER)}
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, executable in variants.items():
                times[name].append(_seconds(executable, env))
    medians = {name: median(values) for name, values in times.items()}
    ratio = medians["dbt --version"] / medians["launcher --version"]
    print(table(["call", "median s", "rounds"], [[n, m, args.rounds] for n, m in medians.items()]))
    print(f"ratio dbt / launcher: {ratio:,.0f}x")
    write_json(
        "dbt_launcher",
        {"machine": machine(), "load": load_now(), "rounds": args.rounds, "times_s": times, "median_s": medians,
         "ratio": ratio},
    )


if __name__ == "__main__":
    main()
