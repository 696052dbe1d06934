"""The persistent Dagster instance under the data directory, so the UI shows every CLI run."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memsql_assets.defs.scale_out_settings import scale_out_enabled
from memsql_assets.lib.atomic import write_text_atomic
from memsql_assets.lib.paths import dagster_home

INSTANCE_YAML_HEADER = "# Written by memsql"


def dagster_yaml(path: Path) -> str:
    """The instance memsql writes: Dagster's own SQLite storage under `path` (runs, one event log
    database per run under history/runs), telemetry off. `path` is named so that a moved home is
    rewritten."""
    return f"""\
{INSTANCE_YAML_HEADER}: runs, events and asset history live beside the data they describe.
# A file without this first line is yours: memsql leaves it as it is.
# Dagster's default storage for this DAGSTER_HOME: {json.dumps(str(path))}
telemetry:
  enabled: false
"""


def ensure_dagster_home(home: Path) -> Path:
    """Create DAGSTER_HOME under `home` and point the environment at it. memsql's own dagster.yaml is
    rewritten when it differs (an older version, or a home that moved); anyone else's is kept."""
    if scale_out_enabled():  # the shared instance on PostgreSQL; every service is checked before anything runs
        from memsql_assets.defs.scale_out import ensure_scale_out_home

        return ensure_scale_out_home(home)
    path = dagster_home(home)
    path.mkdir(parents=True, exist_ok=True)
    config = path / "dagster.yaml"
    wanted = dagster_yaml(path.resolve())
    current = config.read_text(encoding="utf-8") if config.exists() else None
    if current is None or (current != wanted and current.startswith(INSTANCE_YAML_HEADER)):
        write_text_atomic(config, wanted)
    os.environ["DAGSTER_HOME"] = str(path)
    return path
