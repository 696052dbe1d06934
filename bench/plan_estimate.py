"""The cost estimate's time (lib/harness/plan.py plan_partition) on the full 300-session / 1,400-turn
paper partition, for the registry's claude-sonnet-4.5 (priced, its prompts counted by litellm's
tokenizer for the model).

Not a test. The home is _common.bench_home(every=1) with an empty request store (every cell a
call). One untimed plan per condition first fills the home's persistent SQL result cache with the
ground truths' results, as the benchmark's checks of `memsql run` do; then `--rounds` timed plans
per condition in the same process. Printed and written (bench/results/plan_estimate_<label>.json):
each condition's median seconds, prompt tokens and estimate.

    .venv/bin/python bench/plan_estimate.py [--rounds 3] [--conditions H,C] [--label after]
"""

from __future__ import annotations

import argparse
import time

import _common as c

from memsql_assets.lib.harness.plan import plan_partition
from memsql_assets.lib.models.registry import load_registry

MODEL = "claude-sonnet-4.5"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--conditions", default="H,C")
    parser.add_argument("--label", default="after", help="the result file's suffix: plan_estimate_<label>.json")
    args = parser.parse_args()
    home = c.bench_home(every=1)
    entry = load_registry().get(MODEL)
    rows, out = [], {}
    for condition in args.conditions.split(","):
        plan_partition(home, entry, condition)  # untimed: the ground truths' results into the cache
        times, plan = [], None
        for _ in range(args.rounds):
            started = time.perf_counter()
            plan = plan_partition(home, entry, condition)
            times.append(time.perf_counter() - started)
        assert plan is not None and plan.estimate is not None
        out[condition] = {
            "median_s": round(c.median(times), 3),
            "times_s": [round(t, 3) for t in times],
            "cells": plan.cells,
            "prompt_tokens": plan.estimate.prompt_tokens,
            "estimate_usd": round(plan.estimate.usd, 2),
            "describe": plan.describe(),
        }
        rows.append([condition, plan.cells, f"{c.median(times):.2f}", f"{plan.estimate.prompt_tokens:,}", f"${plan.estimate.usd:,.2f}"])
    print(c.table(["condition", "cells", "median s", "prompt tokens", "estimate"], rows))
    c.write_json(f"plan_estimate_{args.label}", {"model": MODEL, "rounds": args.rounds, "conditions": out})


if __name__ == "__main__":
    main()
