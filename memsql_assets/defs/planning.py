"""What `memsql run` materializes: what Dagster itself reports as missing or stale.

The stale status is Dagster's (the UI's "Stale" badge and its causes): a materialization is stale when
its code version differs from the loaded definitions' or an input's data version differs from the one
it was computed from. memsql keeps no staleness state of its own.
"""

from __future__ import annotations

from collections.abc import Iterable

import dagster as dg
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._time import get_current_datetime

OUT_OF_DATE = (StaleStatus.MISSING, StaleStatus.STALE)


def stale_status(instance: dg.DagsterInstance, defs: dg.Definitions) -> CachingStaleStatusResolver:
    """A resolver over the instance as it is now (build a new one after each run: it caches)."""
    graph = defs.resolve_asset_graph()
    view = AssetGraphView(
        temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
        instance=instance,
        asset_graph=graph,
    )
    return CachingStaleStatusResolver(instance=instance, asset_graph=graph, loading_context=view)


def why_out_of_date(
    resolver: CachingStaleStatusResolver, key: dg.AssetKey, partition: str | None = None
) -> str | None:
    """None when current; else "missing" or Dagster's first stale cause, e.g. "has a new code version" or
    "has a new dependency data version: model_registry"."""
    status = resolver.get_status(key, partition)
    if status == StaleStatus.MISSING:
        return "missing"
    if status != StaleStatus.STALE:
        return None
    causes = resolver.get_stale_causes(key, partition)
    if not causes:
        return "stale"
    cause = causes[0]
    return cause.reason + (f": {cause.dependency.asset_key.to_user_string()}" if cause.dependency else "")


def out_of_date(
    instance: dg.DagsterInstance, defs: dg.Definitions, keys: Iterable[dg.AssetKey]
) -> dict[dg.AssetKey, str]:
    resolver = stale_status(instance, defs)
    return {k: why for k in keys if (why := why_out_of_date(resolver, k)) is not None}
