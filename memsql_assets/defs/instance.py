"""The persistent Dagster instance under the data directory, so the UI shows every CLI run."""

from __future__ import annotations

import os
from pathlib import Path

from memsql_assets.lib.paths import dagster_home
from memsql_assets.lib.scale_out import scale_out_enabled

DAGSTER_YAML = """\
# Written by memsql: runs, events and asset history live beside the data they describe.
telemetry:
  enabled: false
"""


def ensure_dagster_home(home: Path) -> Path:
    """Create DAGSTER_HOME under `home` (telemetry off) and point the environment at it."""
    if scale_out_enabled():  # the shared instance on PostgreSQL; every service is checked before anything runs
        from memsql_assets.defs.scale_out import ensure_scale_out_home

        return ensure_scale_out_home(home)
    path = dagster_home(home)
    path.mkdir(parents=True, exist_ok=True)
    config = path / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML, encoding="utf-8")
    os.environ["DAGSTER_HOME"] = str(path)
    return path
