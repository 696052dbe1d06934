"""Run as a script: the scale-out tests' cells (local_deployment.CELLS) on the embedded default (a
private Redis, a local Chroma, one process) in the home given as argument, the rows they must equal."""

import sys
from pathlib import Path

import memsql_assets  # noqa: F401  (first: the offline switches)
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.orchestration.local_deployment import CELLS

if __name__ == "__main__":
    for model, condition in CELLS:
        evaluate_partition(Path(sys.argv[1]), model, condition)
        print(f"{model}/{condition} done", flush=True)
