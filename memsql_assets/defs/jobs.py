"""Jobs a user launches from the UI or `memsql run`."""

from __future__ import annotations

import dagster as dg

MAIN_JOB = "memsql_main"

# The README's main command: every unpartitioned asset of the lineage with its blocking checks.
main_job = dg.define_asset_job(
    MAIN_JOB,
    selection=dg.AssetSelection.groups("sources", "benchmark"),
    description="Sources -> profiles -> sessions with their blocking data-quality checks.",
)
