"""The target of a forked partition run (kept import-light: the fork server has the heavy modules)."""

from __future__ import annotations

import os
from pathlib import Path

# C and D run in waves of this many sessions here (the reference models' default would be one wave of
# all 30): several waves and commits, so kills land between checkpoints and inside waves.
WAVE_SIZE = 4


def run_partition(
    home: str, model: str, condition: str, env: dict[str, str] | None = None, trajectories: bool = False
) -> None:
    """`trajectories`: the run reads the home's trajectory store (conditions E and E_prompt)."""
    os.environ.update(env or {})
    from memsql_assets.lib.harness.evaluate import evaluate_partition
    from memsql_assets.lib.harness.settings import EvalSettings
    from memsql_assets.lib.trajectories.lookup import trajectory_lookup

    factory = trajectory_lookup if trajectories else None
    evaluate_partition(
        Path(home), model, condition, settings=EvalSettings(wave_size=WAVE_SIZE), trajectory_factory=factory
    )
