"""A scale-out deployment on this machine's own services, for tests/scale_out and bench/scale_out.py.

PostgreSQL gets a database of its own (dropped afterwards), RabbitMQ a queue of its own (deleted
afterwards), Redis a database index nobody uses (our keys deleted afterwards); a `chroma run` server,
the Dagster daemon and Celery workers are started here, each in a session (process group) of its own,
and every process of the deployment carries a marker in its environment, so that what they start in
sessions of their own (code servers, a private redis-server) is found and ended too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from memsql_assets.defs.scale_out import CELERY_APP, DEPLOY_DAGSTER_YAML, celery_app
from memsql_assets.defs.scale_out_settings import (
    BROKER_URL_ENV,
    POSTGRES_URL_ENV,
    PROFILE_ENV,
    QUEUE_ENV,
    SCALE_OUT,
    ScaleOutSettings,
    ServiceUnreachableError,
    check_broker,
    check_postgres,
    check_redis,
)
from memsql_assets.lib.memory.chroma import CHROMA_URL_ENV
from memsql_assets.lib.memory.redis_service import REDIS_URL_ENV
from memsql_assets.lib.models.registry import MODELS_FILE_ENV
from memsql_assets.lib.paths import REPO_ROOT, WORKSPACE_FILE, dagster_home
from memsql_assets.lib.process_group import stop_group
from memsql_assets.lib.vocabulary import REFERENCE_MODELS

# The six partitions a deployment is checked and timed on: gold (every row correct) and recall-probe
# (rows that depend on the memory condition) under A, B and C. recall-probe answers after a simulated
# 200 ms (a registry param of the reference models), so that its C partition lasts long enough for a
# worker to be killed in the middle of it.
SLOW_MODEL = "recall-probe"
LATENCY_MS = 200
CELLS = [(m, c) for m in (REFERENCE_MODELS[0], SLOW_MODEL) for c in ("A", "B", "C")]
BIN = Path(sys.executable).parent
# The machine's services (Redis, PostgreSQL, RabbitMQ on their default ports); another machine may point these at its own.
POSTGRES_ADMIN_URL = os.environ.get(
    "MEMSQL_TEST_POSTGRES_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432/postgres"
)
BROKER_URL = os.environ.get("MEMSQL_TEST_BROKER_URL", "pyamqp://guest:guest@127.0.0.1:5672//")
REDIS_SERVER_URL = os.environ.get("MEMSQL_TEST_REDIS_URL", "redis://127.0.0.1:6379")
MARKER_ENV = "MEMSQL_TEST_DEPLOYMENT"
READY_TIMEOUT_S = 120.0
# A developer's settings never leak into the deployment's processes.
SCRUBBED = (
    PROFILE_ENV,
    POSTGRES_URL_ENV,
    BROKER_URL_ENV,
    QUEUE_ENV,
    REDIS_URL_ENV,
    CHROMA_URL_ENV,
    MODELS_FILE_ENV,
    "MEMSQL_HOME",
    "DAGSTER_HOME",
)


class DeploymentError(RuntimeError):
    pass


def absent_machine_service() -> str | None:
    """One line naming the first of the machine's services that does not answer, else None."""
    for check, url in (
        (check_postgres, POSTGRES_ADMIN_URL),
        (check_broker, BROKER_URL),
        (check_redis, REDIS_SERVER_URL),
    ):
        try:
            check(url)
        except ServiceUnreachableError as exc:
            return str(exc)
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def base_env(marker: str, models_file: Path | None = None) -> dict[str, str]:
    """This process's environment without memsql settings, with this checkout first on the path."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env[MARKER_ENV] = marker
    if models_file is not None:
        env[MODELS_FILE_ENV] = str(models_file)
    return env


@dataclass
class Deployment:
    root: Path
    home: Path  # the shared MEMSQL_HOME
    env: dict[str, str]  # what every process of the deployment gets
    settings: ScaleOutSettings
    database: str
    marker: str
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    reference: Path | None = None  # a home with the embedded default's rows, where a test computes them

    @property
    def dagster_home(self) -> Path:
        return dagster_home(self.home)

    def log(self, name: str) -> Path:
        return self.root / "logs" / f"{name}.log"

    def start(self, name: str, cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        """A process of the deployment, in a session (hence a process group) of its own."""
        with open(self.log(name), "ab") as log:
            proc = subprocess.Popen(
                cmd,
                cwd=REPO_ROOT,
                env=env or self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs[name] = proc
        return proc

    def start_worker(self, name: str, **env: str) -> subprocess.Popen:
        cmd = [str(BIN / "celery"), "-A", CELERY_APP, "worker", "-Q", self.settings.queue, "-n", f"{name}@%h"]
        cmd += ["--concurrency", "1", "--prefetch-multiplier", "1", "-l", "info"]
        return self.start(name, cmd, {**self.env, **env})

    def stop(self, name: str) -> None:
        stop_group(self.procs.pop(name))

    def kill(self, name: str) -> None:
        """kill -9 of a worker: its whole process group, pool processes included."""
        proc = self.procs.pop(name)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def tail(self, name: str, lines: int = 30) -> str:
        path = self.log(name)
        text = path.read_text(errors="replace") if path.exists() else "(no log)"
        return f"--- {name} ---\n" + "\n".join(text.splitlines()[-lines:])

    def wait_for_workers(self, names: list[str]) -> None:
        app = celery_app(self.settings)
        deadline = time.monotonic() + READY_TIMEOUT_S
        try:
            while time.monotonic() < deadline:
                answered = {n.split("@")[0] for reply in app.control.ping(timeout=1.0) for n in reply}
                if set(names) <= answered:
                    return
                for name in names:
                    if self.procs[name].poll() is not None:
                        raise DeploymentError(f"worker {name} exited\n{self.tail(name)}")
        finally:
            app.close()
        raise DeploymentError(
            f"workers {names} did not answer in {READY_TIMEOUT_S:.0f} s\n" + "\n".join(map(self.tail, names))
        )

    def start_cluster(self, workers: list[str]) -> None:
        """The Dagster daemon and Celery workers, once the instance's tables and partitions exist."""
        from dagster import DagsterInstance
        from dagster._daemon.controller import get_daemon_statuses
        from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

        from memsql_assets.defs.evaluation.partitions import model_partitions
        from memsql_assets.lib.report.dbt_cli import ensure_manifest
        from memsql_assets.lib.vocabulary import REFERENCE_MODELS

        ensure_manifest(self.home)  # before any process loads the definitions: none of them parses dbt
        with DagsterInstance.from_config(str(self.dagster_home)) as instance:  # creates the tables, once
            instance.add_dynamic_partitions(model_partitions.name, list(REFERENCE_MODELS))
        self.start("daemon", [str(BIN / "dagster-daemon"), "run", "-w", str(WORKSPACE_FILE)])
        for name in workers:
            self.start_worker(name)
        self.wait_for_workers(workers)
        kind = QueuedRunCoordinatorDaemon.daemon_type()
        deadline = time.monotonic() + READY_TIMEOUT_S
        with DagsterInstance.from_config(str(self.dagster_home)) as instance:
            while not get_daemon_statuses(instance, [kind], ignore_errors=True)[kind].healthy:
                if self.procs["daemon"].poll() is not None or time.monotonic() > deadline:
                    raise DeploymentError(f"the Dagster daemon did not start\n{self.tail('daemon')}")
                time.sleep(0.5)

    def run(self, args: list[str], timeout: float = 300.0) -> subprocess.CompletedProcess:
        return subprocess.run(args, cwd=REPO_ROOT, env=self.env, capture_output=True, text=True, timeout=timeout)

    def memsql(self, *args: str, **env: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "memsql_assets.cli", *args]
        return subprocess.run(
            cmd, cwd=REPO_ROOT, env={**self.env, **env}, capture_output=True, text=True, timeout=300
        )


def _pg_admin():
    import psycopg2

    conn = psycopg2.connect(POSTGRES_ADMIN_URL.replace("postgresql+psycopg2://", "postgresql://", 1))
    conn.autocommit = True
    return conn


def _unused_redis_db() -> int:
    import redis

    for index in range(15, 0, -1):
        client = redis.Redis.from_url(f"{REDIS_SERVER_URL.rstrip('/')}/{index}")
        try:
            if client.dbsize() == 0:
                return index
        finally:
            client.close()
    raise DeploymentError(f"every database index of the Redis at {REDIS_SERVER_URL} holds keys")


def _start_chroma(d: Deployment) -> str:
    url = f"http://127.0.0.1:{free_port()}"
    cli = BIN / "chroma" if (BIN / "chroma").exists() else Path(shutil.which("chroma") or "chroma")
    port = url.rsplit(":", 1)[1]
    proc = d.start(
        "chroma", [str(cli), "run", "--path", str(d.root / "chroma"), "--host", "127.0.0.1", "--port", port]
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise DeploymentError(f"chroma run exited with {proc.returncode}\n{d.tail('chroma')}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1):
            return url
        time.sleep(0.2)
    raise DeploymentError(f"chroma run did not answer within 30 s\n{d.tail('chroma')}")


def _marked(marker: str) -> list[int]:
    """Processes whose environment carries the deployment's marker (only its own do)."""
    needle = f"{MARKER_ENV}={marker}\0".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if (
                proc.name.isdigit()
                and int(proc.name) != os.getpid()
                and needle in (proc / "environ").read_bytes() + b"\0"
            ):
                pids.append(int(proc.name))
    return pids


@contextlib.contextmanager
def deployment(root: Path, home: Path, models_file: Path | None = None) -> Iterator[Deployment]:
    """The services of a deployment over `home` (no daemon, no worker yet: `start_cluster`);
    whatever was started is stopped, and the database, queue and keys removed, on the way out."""
    marker = uuid.uuid4().hex[:10]
    (root / "logs").mkdir(parents=True, exist_ok=True)
    database = f"memsql_scale_out_{marker}"
    admin = _pg_admin()
    admin.cursor().execute(f'CREATE DATABASE "{database}"')
    settings = ScaleOutSettings(
        postgres_url=POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{database}",
        broker_url=BROKER_URL,
        queue=f"memsql-test-{marker}",
        redis_url=f"{REDIS_SERVER_URL.rstrip('/')}/{_unused_redis_db()}",
        chroma_url="",
    )
    d = Deployment(root, home, base_env(marker, models_file), settings, database, marker)
    saved = os.environ.get(POSTGRES_URL_ENV)
    try:
        d.settings = replace(settings, chroma_url=_start_chroma(d))
        d.env.update(
            {
                PROFILE_ENV: SCALE_OUT,
                "MEMSQL_HOME": str(home),
                "DAGSTER_HOME": str(dagster_home(home)),
                POSTGRES_URL_ENV: d.settings.postgres_url,
                BROKER_URL_ENV: d.settings.broker_url,
                QUEUE_ENV: d.settings.queue,
                REDIS_URL_ENV: d.settings.redis_url,
                CHROMA_URL_ENV: d.settings.chroma_url,
            }
        )
        dagster_home(home).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DEPLOY_DAGSTER_YAML, dagster_home(home) / "dagster.yaml")
        os.environ[POSTGRES_URL_ENV] = d.settings.postgres_url  # this process opens the instance too
        yield d
    finally:
        for name in list(d.procs):
            with contextlib.suppress(ProcessLookupError):
                stop_group(d.procs.pop(name), grace_s=5.0)
        for pid in _marked(marker):  # started in sessions of their own: a code server, a redis-server
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if saved is None:
            os.environ.pop(POSTGRES_URL_ENV, None)
        else:
            os.environ[POSTGRES_URL_ENV] = saved
        _delete_queue(settings.queue)
        _delete_redis_keys(settings.redis_url)
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.close()


def _delete_queue(queue: str) -> None:
    from kombu import Connection

    with contextlib.suppress(Exception), Connection(BROKER_URL) as conn:
        channel = conn.default_channel
        channel.queue_delete(queue)
        channel.exchange_delete(queue)


def _delete_redis_keys(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        for key in client.scan_iter("memsql:*"):
            client.delete(key)
    finally:
        client.close()
