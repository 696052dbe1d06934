"""What `memsql run` materializes: what Dagster's own records say is missing or stale.

A materialization is stale, as in the UI's "Stale" badge and its causes, when its code version differs
from the loaded definitions' or an input's data version differs from the one it was computed from.
Both sides come from Dagster's public API: the definitions' asset specs (code versions, dependencies,
partition mappings) and the data provenance Dagster records on every materialization
(`DataProvenance`), read through `DagsterInstance.fetch_materializations` / `fetch_observations`.
memsql keeps no staleness state of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import dagster as dg

from memsql_assets.lib.errors import MemsqlError

# The tag under which Dagster records an event's data version (shown in the UI's asset page).
DATA_VERSION_TAG = "dagster/data_version"
# Dagster's data version of an external asset that was never observed: assumed to have a value.
DEFAULT_DATA_VERSION = "INITIAL"


class StaleStatus:
    """The staleness of the definitions' assets over the instance as it is now (build a new one after
    each run: it caches what it read)."""

    def __init__(self, instance: dg.DagsterInstance, defs: dg.Definitions):
        self.instance = instance
        self.defs = defs
        self.specs = {spec.key: spec for spec in defs.resolve_all_asset_specs()}

    @functools.cache  # noqa: B019 (one resolver per plan: the cache lives as long as it does)
    def is_external(self, key: dg.AssetKey) -> bool:
        return not self.defs.resolve_assets_def(key).is_materializable

    @functools.cache  # noqa: B019
    def latest(self, key: dg.AssetKey, partition: str | None) -> dg.EventLogRecord | None:
        """The event carrying the current data version: the latest observation of an external asset,
        else the latest materialization."""
        records_filter = dg.AssetRecordsFilter(asset_key=key, asset_partitions=[partition] if partition else None)
        fetch = self.instance.fetch_observations if self.is_external(key) else self.instance.fetch_materializations
        records = fetch(records_filter, limit=1).records
        return records[0] if records else None

    def data_version(self, key: dg.AssetKey, partition: str | None) -> str | None:
        record = self.latest(key, partition)
        if record is None:
            return DEFAULT_DATA_VERSION if self.is_external(key) else None
        return _tags(record).get(DATA_VERSION_TAG)

    def causes(self, key: dg.AssetKey, partition: str | None = None) -> list[str]:
        """["missing"], Dagster's stale causes in its order (code, data, dependencies), or [] when current."""
        record = self.latest(key, partition)
        if record is None:
            return ["missing"]
        provenance = dg.DataProvenance.from_tags(_tags(record))
        if provenance is None:  # recorded before Dagster kept provenance: nothing to compare
            return []
        spec = self.specs[key]
        code = ["has a new code version"] if spec.code_version and spec.code_version != provenance.code_version else []
        data, deps = [], []
        for dep in sorted(spec.deps, key=lambda d: d.asset_key.to_user_string()):
            name = dep.asset_key.to_user_string()
            if dep.asset_key not in provenance.input_data_versions:
                deps.append(f"has a new dependency on {name}")
            elif self._dep_changed(provenance, dep, spec, partition):
                data.append(f"has a new dependency {self._changed_what(dep.asset_key)}: {name}")
        declared = {d.asset_key for d in spec.deps}
        deps += [f"removed dependency on {k.to_user_string()}" for k in provenance.input_data_versions if k not in declared]
        return code + data + deps

    def _dep_changed(
        self, provenance: dg.DataProvenance, dep: dg.AssetDep, spec: dg.AssetSpec, partition: str | None
    ) -> bool:
        used = provenance.input_data_versions[dep.asset_key].value
        if self.specs[dep.asset_key].partitions_def is not None:  # Dagster compares the partitions' events
            return self._partitions_changed(dep.asset_key, provenance.input_storage_ids.get(dep.asset_key),
                                            self._dep_partition(dep, spec, partition))  # fmt: skip
        current = self.data_version(dep.asset_key, None)
        if used == DEFAULT_DATA_VERSION and current is None:  # Dagster's rule: never materialized is unchanged
            return False
        return used != current

    def _partitions_changed(self, key: dg.AssetKey, cursor: int | None, partition: str | None) -> bool:
        """Whether a partition of `key` (only `partition`, when given) got a new data version in an
        event after `cursor`, the storage id the materialization read it at."""
        fetch = self.instance.fetch_observations if self.is_external(key) else self.instance.fetch_materializations
        parts = [partition] if partition is not None else None
        newer = fetch(dg.AssetRecordsFilter(asset_key=key, asset_partitions=parts, after_storage_id=cursor), limit=1000)
        seen: set[str | None] = set()
        for record in newer.records:  # newest first: the first event of a partition is its current version
            if record.partition_key in seen:
                continue
            seen.add(record.partition_key)
            before = fetch(
                dg.AssetRecordsFilter(
                    asset_key=key,
                    asset_partitions=[record.partition_key] if record.partition_key else None,
                    before_storage_id=cursor + 1 if cursor is not None else None,
                ),
                limit=1,
            ).records
            previous = _tags(before[0]).get(DATA_VERSION_TAG) if before else None
            if previous != _tags(record).get(DATA_VERSION_TAG):
                return True
        return False

    def _dep_partition(self, dep: dg.AssetDep, spec: dg.AssetSpec, partition: str | None) -> str | None:
        """The partition of `dep` that `partition` of `spec` reads (None: every partition of `dep`)."""
        mapping = dep.partition_mapping
        multi = spec.partitions_def
        if partition is None:
            return None
        if not isinstance(multi, dg.MultiPartitionsDefinition) or not isinstance(
            mapping, dg.MultiToSingleDimensionPartitionMapping
        ):
            raise MemsqlError(
                f"{spec.key.to_user_string()} <- {dep.asset_key.to_user_string()}: memsql plans a partitioned "
                f"dependency of a partitioned asset through a MultiToSingleDimensionPartitionMapping (got {mapping!r})"
            )
        return multi.get_partition_key_from_str(partition).keys_by_dimension[mapping.partition_dimension_name]

    def _changed_what(self, key: dg.AssetKey) -> str:
        """Dagster's wording: an input without a code version gets a new data version at every
        materialization, so only its materialization is reported new."""
        return "data version" if self.specs[key].code_version or self.is_external(key) else "materialization"


def _tags(record: dg.EventLogRecord) -> dict[str, str]:
    event = record.asset_materialization or record.asset_observation
    return dict(event.tags or {}) if event is not None else {}


def stale_status(instance: dg.DagsterInstance, defs: dg.Definitions) -> StaleStatus:
    return StaleStatus(instance, defs)


def why_out_of_date(resolver: StaleStatus, key: dg.AssetKey, partition: str | None = None) -> str | None:
    """None when current; else "missing" or Dagster's first stale cause, e.g. "has a new code version" or
    "has a new dependency data version: model_registry"."""
    causes = resolver.causes(key, partition)
    return causes[0] if causes else None


def out_of_date(
    instance: dg.DagsterInstance, defs: dg.Definitions, keys: Iterable[dg.AssetKey]
) -> dict[dg.AssetKey, str]:
    resolver = stale_status(instance, defs)
    return {k: why for k in keys if (why := why_out_of_date(resolver, k)) is not None}
