"""Dagster jobs run in this process: the observations, the main job's rounds and the checks' state."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import dagster as dg
from pydantic import BaseModel, ConfigDict

from memsql_assets.defs.evaluation.automation import observe_conditions, sync_model_partitions
from memsql_assets.defs.jobs import (
    MAIN_GROUP_WORDS,
    MAIN_GROUPS,
    MAIN_JOB,
    OBSERVE_MODELS_JOB,
    OBSERVE_SOURCES_JOB,
    unchosen_assets,
)
from memsql_assets.defs.planning import out_of_date
from memsql_assets.defs.without_metrics import defs as evaluation_defs
from memsql_assets.lib.models.registry import load_registry
from memsql_assets.lib.vocabulary import BENCHMARKS

# Step-level DEBUG events are for the UI; the terminal gets INFO and above.
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
# A passed check execution, as the instance records it (Dagster exports no enum of these statuses).
CHECK_SUCCEEDED = "SUCCEEDED"


def observe_inputs(instance: dg.DagsterInstance) -> None:
    """Observe the source configurations and the conditions, so that Dagster sees a changed setting,
    real file or condition."""
    job = evaluation_defs.resolve_job_def(OBSERVE_SOURCES_JOB)
    job.execute_in_process(instance=instance, run_config=QUIET_RUN_CONFIG)
    observe_conditions(instance)


def observe_models(instance: dg.DagsterInstance) -> None:
    job = evaluation_defs.resolve_job_def(OBSERVE_MODELS_JOB)
    job.execute_in_process(instance=instance, run_config=QUIET_RUN_CONFIG)


def sync_models(instance: dg.DagsterInstance) -> None:
    """The `model` partitions become the runnable registry models; their configurations are observed."""
    sync_model_partitions(instance, load_registry())
    observe_models(instance)


def group_keys(defs: dg.Definitions, groups: Iterable[str]) -> list[dg.AssetKey]:
    """The materializable assets of `groups`."""
    graph = defs.resolve_asset_graph()
    return [k for k in graph.get_all_asset_keys() if graph.get(k).group_name in groups and graph.get(k).is_materializable]


def latest_checks(instance: dg.DagsterInstance, defs: dg.Definitions, keys: list[dg.AssetKey]) -> dict[str, bool]:
    """The latest evaluation of every check on `keys`, passed or not (from the instance, run or not now)."""
    graph = defs.resolve_asset_graph()
    check_keys = [c for c in graph.asset_check_keys if c.asset_key in set(keys)]
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(check_keys)
    return {c.name: c in latest and latest[c].status.value == CHECK_SUCCEEDED for c in check_keys}


class MainJobOutcome(BaseModel):
    """The main job's rounds in one `memsql run`."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    run_id: str | None
    """The last round's Dagster run (None: nothing was out of date)."""
    success: bool
    """Whether the last round succeeded."""
    checks: dict[str, bool]
    """Every check of the main job's assets: its latest evaluation passed."""
    skipped: bool
    """Nothing was out of date."""
    why: dict[str, str]
    """Why each rebuilt asset was rebuilt."""
    built: dict[str, str]
    """What was rebuilt, in a newcomer's words (MAIN_GROUP_WORDS, build order), and why (`reason`)."""


def asset_names(keys: Iterable[dg.AssetKey], shown: int = 4) -> str:
    """"a, b, c and 3 more": one progress line however many assets a round rebuilds."""
    names = sorted(k.to_user_string() for k in keys)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"{len(names)} assets ({', '.join(names[:shown])}{more})"


def run_main_job(
    instance: dg.DagsterInstance,
    force: bool,
    say: Callable[[str], None],
    on_work: Callable[[], None] | None = None,
    benchmarks: tuple[str, ...] = BENCHMARKS,
) -> MainJobOutcome:
    """Materialize the main job's assets that Dagster reports missing or stale (all with `force`), run
    after run until none is: a rebuilt asset whose data version changed makes its dependents stale.
    The assets of benchmarks not in `benchmarks` are left alone."""
    defs = evaluation_defs
    keys = [k for k in group_keys(defs, MAIN_GROUPS) if k not in unchosen_assets(benchmarks)]
    job = defs.resolve_job_def(MAIN_JOB)
    run_ids: list[str] = []
    why: dict[str, str] = {}
    success = True
    for _ in range(len(keys)):  # each round rebuilds at least one asset: bounded by the asset count
        todo = dict.fromkeys(keys, "forced") if force and not run_ids else out_of_date(instance, defs, keys)
        if not todo:
            break
        if on_work is not None:
            on_work()
        say(f"main job: materializing {asset_names(todo)}")
        why.update({k.to_user_string(): reason for k, reason in todo.items()})
        result = job.execute_in_process(
            instance=instance, asset_selection=list(todo), raise_on_error=False, run_config=QUIET_RUN_CONFIG
        )
        run_ids.append(result.run_id)
        success = bool(result.success)
        if not success:
            break
    if not run_ids:
        say("main job: up to date")
    graph, words = defs.resolve_asset_graph(), plain_reason(why, len(keys))
    built = {}
    for group, word in MAIN_GROUP_WORDS.items():
        causes = [why[k.to_user_string()] for k in keys if graph.get(k).group_name == group and k.to_user_string() in why]
        if causes:
            built[word] = words(causes[0])
    return MainJobOutcome(
        run_id=run_ids[-1] if run_ids else None,
        success=success,
        checks=latest_checks(instance, defs, keys),
        skipped=not run_ids,
        why=why,
        built=built,
    )


def plain_reason(why: Mapping[str, str], assets: int) -> Callable[[str], str]:
    """Dagster's cause of a rebuild in plain words: "new home" when every asset was missing."""
    if len(why) == assets and set(why.values()) == {"missing"}:
        return lambda _: "new home"

    def words(cause: str) -> str:
        if cause == "forced":
            return "--force"
        if cause.startswith("has a new code version"):
            return "its code changed"
        if cause.startswith("has a new dependency data version: "):
            return f"{cause.rsplit(': ', 1)[1]} changed"
        return "not built yet" if cause == "missing" else cause

    return words

