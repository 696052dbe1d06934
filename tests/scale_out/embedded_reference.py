"""The cells the scale-out tests evaluate, their slow model, and (run as a script) the rows they must equal: those cells
on the embedded default (a private Redis, a local Chroma, one process) in the home given as argument."""

import sys
from pathlib import Path

import memsql_assets  # noqa: F401  (first: the offline switches)
from memsql_assets.lib.vocabulary import REFERENCE_MODELS

# recall-probe answers after a simulated 200 ms (a registry param of the reference models), so that its
# C partition lasts long enough for a worker to be killed in the middle of it.
SLOW_MODEL = "recall-probe"
# gold (every row correct) and recall-probe (rows that depend on the memory condition): six partitions.
MODELS = (REFERENCE_MODELS[0], SLOW_MODEL)
CONDITIONS = ("A", "B", "C")
CELLS = [(m, c) for m in MODELS for c in CONDITIONS]
LATENCY_MS = 200

if __name__ == "__main__":
    from memsql_assets.lib.harness.evaluate import evaluate_partition

    for model, condition in CELLS:
        evaluate_partition(Path(sys.argv[1]), model, condition)
        print(f"{model}/{condition} done", flush=True)
