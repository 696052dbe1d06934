"""turn_results partitions: model (dynamic, synced from the registry) × condition (static: the conditions
file's, so a condition added there is a column of the UI's grid)."""

import dagster as dg

from memsql_assets.lib.agent.conditions import CONDITIONS

model_partitions = dg.DynamicPartitionsDefinition(name="model")
condition_partitions = dg.StaticPartitionsDefinition(list(CONDITIONS))
evaluation_partitions = dg.MultiPartitionsDefinition(
    {"model": model_partitions, "condition": condition_partitions}
)


def partition_key(model: str, condition: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"model": model, "condition": condition})
