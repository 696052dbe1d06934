"""turn_results partitions: model (dynamic, synced from the registry) × condition (static: the conditions
file's, so a condition added there is a column of the UI's grid)."""

import dagster as dg
from sqlalchemy.exc import IntegrityError

from memsql_assets.lib.conditions import CONDITIONS

model_partitions = dg.DynamicPartitionsDefinition(name="model")
condition_partitions = dg.StaticPartitionsDefinition(list(CONDITIONS))
evaluation_partitions = dg.MultiPartitionsDefinition(
    {"model": model_partitions, "condition": condition_partitions}
)


def add_model_partition(instance: dg.DagsterInstance, model: str) -> bool:
    """Make `model` a `model` partition; True if it was not one when this call looked (this call or
    one racing it added it). Dagster looks for the key, then inserts it: `memsql eval`s started
    together on one home can both look, and the second insert then breaks the table's unique key,
    having lost only a race."""
    if instance.has_dynamic_partition(model_partitions.name, model):
        return False
    try:
        instance.add_dynamic_partitions(model_partitions.name, [model])
    except IntegrityError:
        if not instance.has_dynamic_partition(model_partitions.name, model):
            raise
        return False
    return True


def partition_key(model: str, condition: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"model": model, "condition": condition})
