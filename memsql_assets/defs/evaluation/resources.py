"""The evaluation settings a user may override per run (launchpad, or `memsql eval` as run config)."""

import dagster as dg

from memsql_assets.lib.harness.settings import EvalSettings

SAMPLE_TAG = "memsql/sample"  # on the Dagster run of a sample: its session count
HISTORY_TAG = "memsql/history"  # on the Dagster run of a gold-history evaluation (lib/history.py)


class EvaluationSettings(dg.ConfigurableResource, EvalSettings):
    """Service URLs and harness limits of a `turn_results` partition run: the fields of EvalSettings
    (lib/harness/settings.py), each one this resource's run configuration."""

    def settings(self) -> EvalSettings:
        """The harness's settings of this run: the same fields, without the resource."""
        return EvalSettings(**{name: getattr(self, name) for name in EvalSettings.model_fields})


def evaluation_run_config(**fields: object) -> dict[str, object]:
    """The `resources` run config that sets the evaluation resource's `fields` (a None is left unset)."""
    unknown = set(fields) - set(EvalSettings.model_fields)
    if unknown:
        raise TypeError(f"not a field of EvalSettings: {', '.join(sorted(unknown))}")
    config = {name: value for name, value in fields.items() if value is not None}
    return {"evaluation": {"config": config}} if config else {}
