"""The one Definitions object of the project (workspace.yaml loads this module)."""

from __future__ import annotations

import dagster as dg

from memsql_assets.defs.benchmark.assets import profiles, sessions
from memsql_assets.defs.benchmark.checks import benchmark_checks
from memsql_assets.defs.jobs import main_job
from memsql_assets.defs.resources import MemsqlSettings
from memsql_assets.defs.sources.assets import source_assets

defs = dg.Definitions(
    assets=[*source_assets, profiles, sessions],
    asset_checks=benchmark_checks,
    jobs=[main_job],
    resources={"memsql": MemsqlSettings()},
)
