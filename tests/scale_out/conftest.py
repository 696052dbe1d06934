"""A scale-out deployment for the tests of issue 16, on the machine's own services.

PostgreSQL (a database of its own, dropped afterwards), RabbitMQ (a queue of its own, deleted
afterwards) and Redis (a database index nobody uses, its keys deleted afterwards) are the machine's;
the test starts a `chroma run` server, a Dagster daemon and Celery workers, each in a process group of
its own, and stops them all whatever happens. Where one of the machine's services is absent the tests
skip with one line naming it.

The benchmark is a third of the embedded one (100 sessions), and recall-probe answers after a simulated
200 ms (a registry param of the reference models), so that one of its partitions lasts long enough for
a worker to be killed in the middle of it.
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
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from memsql_assets.defs.evaluation.resources import RETRY_ERRORS_ENV, WAVE_SIZE_ENV
from memsql_assets.defs.scale_out import CELERY_APP, DEPLOY_DAGSTER_YAML, celery_app
from memsql_assets.lib.memory.chroma import CHROMA_URL_ENV
from memsql_assets.lib.memory.redis_service import REDIS_URL_ENV
from memsql_assets.lib.models.registry import MODELS_FILE_ENV
from memsql_assets.lib.paths import benchmark_dir, dagster_home, source_db_path
from memsql_assets.lib.process_group import stop_group
from memsql_assets.lib.scale_out import (
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

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# The machine's services (STACK.md); a CI elsewhere may point the tests at its own.
POSTGRES_ADMIN_URL = os.environ.get(
    "MEMSQL_TEST_POSTGRES_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432/postgres"
)
BROKER_URL = os.environ.get("MEMSQL_TEST_BROKER_URL", "pyamqp://guest:guest@127.0.0.1:5672//")
REDIS_SERVER_URL = os.environ.get("MEMSQL_TEST_REDIS_URL", "redis://127.0.0.1:6379")
MARKER_ENV = "MEMSQL_TEST_DEPLOYMENT"
SLOW_MODEL = "recall-probe"
LATENCY_MS = 200
EVERY_NTH_SESSION = 3
READY_TIMEOUT_S = 120.0
SCRUBBED = (
    PROFILE_ENV,
    POSTGRES_URL_ENV,
    BROKER_URL_ENV,
    QUEUE_ENV,
    REDIS_URL_ENV,
    CHROMA_URL_ENV,
    MODELS_FILE_ENV,
    WAVE_SIZE_ENV,
    RETRY_ERRORS_ENV,
    "MEMSQL_HOME",
    "DAGSTER_HOME",
)


def require_machine_services() -> None:
    """Skip, in one line naming the URL, where one of the machine's services is absent."""
    for check, url in (
        (check_postgres, POSTGRES_ADMIN_URL),
        (check_broker, BROKER_URL),
        (check_redis, REDIS_SERVER_URL),
    ):
        try:
            check(url)
        except ServiceUnreachableError as exc:
            pytest.skip(f"the scale-out tests need the machine's services: {exc}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    pytest.fail(f"every database index of the Redis at {REDIS_SERVER_URL} holds keys")


@dataclass
class Deployment:
    root: Path
    home: Path  # the shared MEMSQL_HOME
    reference: Path  # the embedded default's home, for the rows to compare with
    env: dict[str, str]  # every process of the deployment gets it
    settings: ScaleOutSettings
    database: str
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def dagster_home(self) -> Path:
        return dagster_home(self.home)

    def log(self, name: str) -> Path:
        return self.root / "logs" / f"{name}.log"

    def start(self, name: str, cmd: list[str], **env: str) -> subprocess.Popen:
        """A process of the deployment, in a session (hence a process group) of its own."""
        with open(self.log(name), "ab") as log:
            proc = subprocess.Popen(
                cmd,
                cwd=REPO,
                env={**self.env, **env},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs[name] = proc
        return proc

    def start_worker(self, name: str, **env: str) -> subprocess.Popen:
        cmd = [str(BIN / "celery"), "-A", CELERY_APP, "worker", "-Q", self.settings.queue, "-n", f"{name}@%h"]
        return self.start(
            name, [*cmd, "--concurrency", "1", "--prefetch-multiplier", "1", "-l", "info"], **env
        )

    def stop(self, name: str) -> None:
        proc = self.procs.pop(name)
        stop_group(proc)

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
                        pytest.fail(f"worker {name} exited\n{self.tail(name)}")
        finally:
            app.close()
        pytest.fail(
            f"workers {names} did not answer within {READY_TIMEOUT_S:.0f} s\n"
            + "\n".join(map(self.tail, names))
        )

    def run(self, args: list[str], timeout: float = 300.0) -> subprocess.CompletedProcess:
        return subprocess.run(args, cwd=REPO, env=self.env, capture_output=True, text=True, timeout=timeout)

    def memsql(self, *args: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "memsql_assets.cli", *args],
            cwd=REPO,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=300,
        )


def _build_home(home: Path, embedded_dbs: dict[str, Path], sessions: list) -> Path:
    from memsql_assets.lib.benchmark.store import write_benchmark

    for name, path in embedded_dbs.items():
        target = source_db_path(home, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    write_benchmark(benchmark_dir(home), sessions)
    return home


def _models_file(path: Path) -> Path:
    registry = yaml.safe_load((REPO / "models.yaml").read_text(encoding="utf-8"))
    registry["models"][SLOW_MODEL]["provider_params"] = {"simulated_latency_ms": LATENCY_MS}
    path.write_text(yaml.safe_dump(registry, sort_keys=False), encoding="utf-8")
    return path


def _start_chroma(d: Deployment, port: int) -> str:
    url = f"http://127.0.0.1:{port}"
    cli = BIN / "chroma" if (BIN / "chroma").exists() else Path(shutil.which("chroma") or "chroma")
    proc = d.start(
        "chroma",
        [str(cli), "run", "--path", str(d.root / "chroma"), "--host", "127.0.0.1", "--port", str(port)],
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"chroma run exited with {proc.returncode}\n{d.tail('chroma')}")
        with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1):
            return url
        time.sleep(0.2)
    pytest.fail(f"chroma run did not answer within 30 s\n{d.tail('chroma')}")


def _leftovers(marker: bytes) -> list[int]:
    """Processes whose environment carries this deployment's marker (only ours do)."""
    pids = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if (
                proc.name.isdigit()
                and int(proc.name) != os.getpid()
                and marker in (proc / "environ").read_bytes()
            ):
                pids.append(int(proc.name))
    return pids


@pytest.fixture(scope="module")
def deployment(tmp_path_factory, embedded_dbs, embedded_sessions) -> Iterator[Deployment]:
    """The services of a deployment (no daemon, no worker yet) and the embedded reference rows,
    computed meanwhile in a process of their own."""
    require_machine_services()
    tag = uuid.uuid4().hex[:10]
    root = tmp_path_factory.mktemp("scale_out")
    (root / "logs").mkdir()
    subset = [s for i, s in enumerate(embedded_sessions) if i % EVERY_NTH_SESSION == 0]
    home = _build_home(root / "shared", embedded_dbs, subset)
    reference = _build_home(root / "reference", embedded_dbs, subset)
    models = _models_file(root / "models.yaml")
    database = f"memsql_scale_out_{tag}"
    admin = _pg_admin()
    admin.cursor().execute(f'CREATE DATABASE "{database}"')
    redis_url = f"{REDIS_SERVER_URL.rstrip('/')}/{_unused_redis_db()}"
    postgres_url = POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{database}"
    settings = ScaleOutSettings(
        postgres_url=postgres_url,
        broker_url=BROKER_URL,
        queue=f"memsql-test-{tag}",
        redis_url=redis_url,
        chroma_url="",
    )
    base = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    base["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    base[MODELS_FILE_ENV] = str(models)
    base[MARKER_ENV] = tag  # every process of this deployment, and what they start, carries it
    d = Deployment(root, home, reference, dict(base), settings, database)
    d.procs["reference"] = subprocess.Popen(  # the embedded default: private Redis, local Chroma
        [sys.executable, str(Path(__file__).with_name("embedded_reference.py")), str(reference)],
        cwd=REPO,
        env=base,
        stdout=open(d.log("reference"), "wb"),  # noqa: SIM115 - the child holds it; closed when it exits
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    monkeypatch = pytest.MonkeyPatch()
    try:
        chroma_url = _start_chroma(d, free_port())
        d.settings = ScaleOutSettings(**{**settings.__dict__, "chroma_url": chroma_url})
        d.env.update(
            {
                PROFILE_ENV: SCALE_OUT,
                "MEMSQL_HOME": str(home),
                "DAGSTER_HOME": str(dagster_home(home)),
                POSTGRES_URL_ENV: postgres_url,
                BROKER_URL_ENV: BROKER_URL,
                QUEUE_ENV: settings.queue,
                REDIS_URL_ENV: redis_url,
                CHROMA_URL_ENV: chroma_url,
            }
        )
        dagster_home(home).mkdir(parents=True)
        shutil.copyfile(DEPLOY_DAGSTER_YAML, dagster_home(home) / "dagster.yaml")
        monkeypatch.setenv(POSTGRES_URL_ENV, postgres_url)  # this process opens the instance too
        yield d
    finally:
        for name in list(d.procs):
            with contextlib.suppress(ProcessLookupError):
                stop_group(d.procs.pop(name), grace_s=5.0)
        for pid in _leftovers(
            f"{QUEUE_ENV}={settings.queue}".encode()
        ):  # e.g. a code server in a session of its own
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        monkeypatch.undo()
        _delete_queue(settings.queue)
        _delete_redis_keys(redis_url)
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


@pytest.fixture(scope="module")
def cluster(deployment: Deployment) -> Deployment:
    """The deployment with a Dagster daemon and two Celery workers, w1 and w2."""
    from dagster import DagsterInstance
    from dagster._daemon.controller import get_daemon_statuses
    from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

    from memsql_assets.defs.evaluation.partitions import model_partitions
    from memsql_assets.lib.report.dbt_cli import ensure_manifest
    from memsql_assets.lib.vocabulary import REFERENCE_MODELS

    d = deployment
    ensure_manifest(d.home)  # before any process loads the definitions: none of them parses dbt at once
    with DagsterInstance.from_config(str(d.dagster_home)) as instance:  # creates the tables, once
        instance.add_dynamic_partitions(model_partitions.name, list(REFERENCE_MODELS))
    d.start("daemon", [str(BIN / "dagster-daemon"), "run", "-w", str(REPO / "workspace.yaml")])
    d.start_worker("w1")
    d.start_worker("w2")
    d.wait_for_workers(["w1", "w2"])
    kind = QueuedRunCoordinatorDaemon.daemon_type()
    deadline = time.monotonic() + READY_TIMEOUT_S
    with DagsterInstance.from_config(str(d.dagster_home)) as instance:
        while not get_daemon_statuses(instance, [kind], ignore_errors=True)[kind].healthy:
            if d.procs["daemon"].poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Dagster daemon did not start\n{d.tail('daemon')}")
            time.sleep(0.5)
    return d
