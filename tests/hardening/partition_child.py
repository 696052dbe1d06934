"""The target of a forked partition run (kept import-light: the fork server has the heavy modules)."""

from __future__ import annotations

import os
from pathlib import Path


def run_partition(home: str, model: str, condition: str, env: dict[str, str] | None = None) -> None:
    os.environ.update(env or {})
    from memsql_assets.lib.harness.evaluate import evaluate_partition

    evaluate_partition(Path(home), model, condition)
