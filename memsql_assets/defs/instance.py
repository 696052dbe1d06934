"""The persistent Dagster instance under the data directory, so the UI shows every CLI run."""

from __future__ import annotations

import os
from pathlib import Path

from memsql_assets.lib.paths import dagster_home

DAGSTER_YAML = """\
# Written by memsql: runs, events and asset history live beside the data they describe.
telemetry:
  enabled: false
"""


def ensure_dagster_home(home: Path) -> Path:
    """Create DAGSTER_HOME under `home` (telemetry off) and point the environment at it."""
    path = dagster_home(home)
    path.mkdir(parents=True, exist_ok=True)
    config = path / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(path)
    return path
