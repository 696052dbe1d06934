"""Dagster wiring of the scale-out profile (docs/scale_out.md): the instance on PostgreSQL, the Celery
executor on RabbitMQ, the checks made before anything runs, and `memsql eval` as a queued run.

Settings and service probes are plain Python in defs/scale_out_settings.py (no Dagster import). Nothing here is used, or imported
beyond this module, under the embedded default.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from memsql_assets.defs.scale_out_settings import (
    BROKER,
    ScaleOutSettings,
    ServiceUnreachableError,
    check_services,
    scale_out_enabled,
)
from memsql_assets.lib.atomic import write_text_atomic
from memsql_assets.lib.memory.redis_service import redact_url
from memsql_assets.lib.paths import REPO_ROOT, WORKSPACE_FILE, dagster_home

DEPLOY_DAGSTER_YAML = REPO_ROOT / "deploy" / "dagster.yaml"
CELERY_APP = "memsql_assets.defs.celery_app"
CELERY_BACKEND = "rpc://"  # results travel back on the broker: no further service
# The daemon heartbeats every 30 s: two missed beats and a margin mean it is gone.
DAEMON_TOLERANCE_S = 90.0
WORKER_REPLY_S = 2.0
RUN_POLL_S = 1.0


def celery_config_source(settings: ScaleOutSettings) -> dict[str, Any]:
    """Celery settings shared by the executor (in each run worker) and the workers' app."""
    return {
        "task_default_queue": settings.queue,
        # A step is acknowledged when it ends, not when a worker takes it: a worker killed mid-step
        # (kill -9, a lost machine) leaves it with the broker, which hands it to another worker; the
        # partition resumes there from its checkpoints and request store.
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
    }


def run_executor() -> Any:
    """The executor of runs the instance launches: Celery under the scale-out profile, else None
    (Dagster's default). `memsql` itself runs jobs in process, which ignores it."""
    if not scale_out_enabled():
        return None
    from dagster_celery import celery_executor

    settings = ScaleOutSettings.from_environ()
    return celery_executor.configured(
        {
            "broker": {"env": BROKER.env},  # read when the run starts: no URL (or password) in a snapshot
            "backend": CELERY_BACKEND,
            "config_source": celery_config_source(settings),
        },
        name="memsql_celery",
    )


def celery_app(settings: ScaleOutSettings | None = None) -> Any:
    """dagster-celery's app and step task, built as the executor builds it, so that workers and run
    workers declare the queue identically."""
    from dagster_celery.executor import CeleryExecutor
    from dagster_celery.make_app import make_app
    from dagster_celery.tasks import create_task

    settings = settings or ScaleOutSettings.from_environ()
    executor = CeleryExecutor.for_cli(
        broker=settings.broker_url, backend=CELERY_BACKEND, config_source=celery_config_source(settings)
    )
    app = make_app(executor.app_args())
    create_task(app)
    return app


def ensure_scale_out_home(home: Path) -> Path:
    """DAGSTER_HOME under `home` with deploy/dagster.yaml, after checking that every service answers,
    that the instance is on PostgreSQL, that a daemon runs and that a worker consumes the queue."""
    from dagster import DagsterInstance

    settings = ScaleOutSettings.from_environ()
    check_services(settings)
    path = dagster_home(home)
    config = path / "dagster.yaml"
    if not config.exists():
        write_text_atomic(config, DEPLOY_DAGSTER_YAML.read_text(encoding="utf-8"))
    os.environ["DAGSTER_HOME"] = str(path)
    with DagsterInstance.get() as instance:
        check_instance(instance, config)
        check_daemon(instance, settings, path)
    check_workers(settings)
    return path


def check_instance(instance: Any, config: Path) -> None:
    from dagster_postgres import PostgresRunStorage

    if not isinstance(instance.run_storage, PostgresRunStorage):
        raise ServiceUnreachableError(
            f"{config}: the scale-out profile needs the instance on PostgreSQL (storage: postgres); "
            f"replace the file with {DEPLOY_DAGSTER_YAML}"
        )


# The daemon that launches queued runs, as it names itself in its heartbeats.
QUEUED_RUN_DAEMON = "QUEUED_RUN_COORDINATOR"


def check_daemon(instance: Any, settings: ScaleOutSettings, home: Path) -> None:
    heartbeat = instance.get_daemon_heartbeats().get(QUEUED_RUN_DAEMON)
    if heartbeat is None or time.time() - heartbeat.timestamp > DAEMON_TOLERANCE_S:
        raise ServiceUnreachableError(
            f"no Dagster daemon is running for the instance at {redact_url(settings.postgres_url)} "
            f"(it launches queued runs): start `DAGSTER_HOME={home} dagster-daemon run -w {WORKSPACE_FILE}`"
        )


def check_workers(settings: ScaleOutSettings) -> None:
    app = celery_app(settings)
    try:
        replies = app.control.inspect(timeout=WORKER_REPLY_S).active_queues() or {}
    finally:
        app.close()
    if not any(q.get("name") == settings.queue for queues in replies.values() for q in queues or []):
        raise ServiceUnreachableError(
            f"no Celery worker consumes queue {settings.queue!r} at {redact_url(settings.broker_url)} "
            f"({BROKER.purpose}): start `celery -A {CELERY_APP} worker -Q {settings.queue}`"
        )


def submit_evaluation(instance: Any, job: str, run_config: dict[str, Any], tags: dict[str, str]) -> str:
    """`memsql eval` under the scale-out profile: one run of `job` (a turn_results partition, named by
    `tags`) queued on the shared instance (the daemon launches it, its step runs on a Celery worker),
    waited for until it ends; returns its run id (orchestration/outcome.py decodes it, as it decodes
    a run of the embedded default)."""
    from memsql_assets.lib.paths import memsql_home

    # Every worker reads and writes this data directory: the run names it, a worker without it fails.
    config = {
        **run_config,
        "resources": {**run_config.get("resources", {}), "memsql": {"config": {"home": str(memsql_home())}}},
    }
    run_id = _launch(job, config, tags)
    print(f"memsql eval: run {run_id} queued on {redact_url(ScaleOutSettings.from_environ().postgres_url)}",
          file=sys.stderr, flush=True)  # fmt: skip
    _wait(instance, run_id)
    return run_id


def _launch(job: str, run_config: dict[str, Any], tags: dict[str, str]) -> str:
    """Submit one run of `job` through `dagster job launch` (the instance's run coordinator
    queues it); returns its run id, given by us so that the run can be found."""
    import subprocess
    import uuid

    run_id = str(uuid.uuid4())
    cmd = [
        sys.executable, "-m", "dagster", "job", "launch", "-w", str(WORKSPACE_FILE), "-j", job,
        "--config-json", json.dumps(run_config), "--tags", json.dumps(tags), "--run-id", run_id,
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ServiceUnreachableError(f"`dagster job launch` failed: {(proc.stderr or proc.stdout).strip()[-2000:]}")
    return run_id


def _wait(instance: Any, run_id: str) -> None:
    while True:
        run = instance.get_run_by_id(run_id)
        if run is not None and run.is_finished:
            return
        time.sleep(RUN_POLL_S)
