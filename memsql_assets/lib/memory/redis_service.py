"""Working memory's Redis: the configured server (`MEMSQL_REDIS_URL`) or a private one we start and stop.

A private server listens only on a unix socket under the data directory (no TCP port, so nothing else
on the machine can reach it and two projects never collide on a port), keeps nothing on disk
(`--save ""`, no AOF: working memory is per-run scratch state), and runs in its own session so a
Ctrl-C aimed at the parent does not kill it half-way through a SHUTDOWN.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from memsql_assets.lib.memory.errors import MemoryServiceError

REDIS_URL_ENV = "MEMSQL_REDIS_URL"
CONNECT_TIMEOUT_S = 2.0
COMMAND_TIMEOUT_S = 10.0
START_TIMEOUT_S = 10.0
# Linux's sockaddr_un.sun_path holds 108 bytes including the NUL, macOS's 104: stay safely below both.
SOCKET_PATH_LIMIT = 100
OWNER_FILE = "owner.json"
LEASES_DIR = "leases"
FALLBACK_PREFIX = "memsql-redis-"


def redis_dir(home: Path) -> Path:
    return home / "redis"


def socket_path_for(home: Path) -> Path:
    """`home/redis/redis.sock`, or a short per-user, per-home directory under /tmp when that is too long.

    A unix socket path longer than sun_path cannot be bound at all, and deep data directories (pytest's
    tmp paths, CI workspaces) easily exceed it. The fallback name is derived from the home path (not
    random) so that a second process using the same home finds the same server; it is created 0700 and
    must be owned by us, so another user cannot pre-create it and intercept the socket.
    """
    home = home.absolute()  # redis-server runs with another cwd: a relative path would point elsewhere
    preferred = redis_dir(home) / "redis.sock"
    if len(os.fsencode(str(preferred))) <= SOCKET_PATH_LIMIT:
        return preferred
    digest = hashlib.sha256(os.fsencode(str(home.resolve()))).hexdigest()[:12]
    short_dir = Path("/tmp") / f"{FALLBACK_PREFIX}{os.getuid()}-{digest}"
    _ensure_private_dir(short_dir)
    return short_dir / "redis.sock"


def _ensure_private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise MemoryServiceError(
            f"{path}: socket directory is not a directory owned by this user; remove it and retry"
        )
    os.chmod(path, 0o700)


def redact_url(url: str) -> str:
    """The URL with any password replaced, so that error messages and logs can name it."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def _no_retry() -> Retry:
    # One retry policy, in WorkingMemory: redis-py's default (3 retries with backoff up to 10 s) would
    # turn "unreachable" into a long hang and hide restarts from our own accounting.
    return Retry(NoBackoff(), 0)


def unix_client(socket_path: Path, connect_timeout_s: float = CONNECT_TIMEOUT_S) -> redis.Redis:
    return redis.Redis(
        unix_socket_path=str(socket_path),
        socket_connect_timeout=connect_timeout_s,
        socket_timeout=COMMAND_TIMEOUT_S,
        retry=_no_retry(),
        decode_responses=True,
    )


def connect_url(url: str) -> redis.Redis:
    """A client for a configured Redis, checked with PING; unreachable fails within CONNECT_TIMEOUT_S and
    never hangs."""
    shown = redact_url(url)
    try:
        client = redis.Redis.from_url(
            url,
            socket_connect_timeout=CONNECT_TIMEOUT_S,
            socket_timeout=COMMAND_TIMEOUT_S,
            retry=_no_retry(),
            decode_responses=True,
        )
        client.ping()
    except (redis.RedisError, OSError, ValueError) as exc:
        raise MemoryServiceError(
            f"Redis at {shown} is unreachable ({type(exc).__name__}: {exc}); "
            f"start it, fix {REDIS_URL_ENV}, or unset {REDIS_URL_ENV} to use a private redis-server"
        ) from exc
    return client


def _remove_socket(socket_path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        socket_path.unlink()
    if socket_path.parent.name.startswith(FALLBACK_PREFIX) and socket_path.parent.parent == Path("/tmp"):
        with contextlib.suppress(OSError):  # the short fallback dir of socket_path_for: remove once empty
            socket_path.parent.rmdir()


def _answers(socket_path: Path) -> bool:
    if not socket_path.exists():
        return False
    client = unix_client(socket_path, connect_timeout_s=0.5)
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def _log_tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


class RedisServer:
    """One private `redis-server` process on a unix socket; start, stop and restart it.

    Used by `redis_connection` and directly by tests (e.g. "Redis restarts mid-run"). The server keeps
    no data across a restart (`--save ""`), which is what working memory wants.
    """

    def __init__(self, socket_path: Path, log_path: Path | None = None, binary: str | None = None):
        self.socket_path = socket_path.absolute()
        self.log_path = (log_path or socket_path.with_name("redis.log")).absolute()
        self._binary = binary
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _resolve_binary(self) -> str:
        found = self._binary or shutil.which("redis-server")
        if not found:
            raise MemoryServiceError(
                "redis-server not found on PATH: install it (e.g. `apt-get install -y redis-server`) "
                f"or point {REDIS_URL_ENV} at a running Redis"
            )
        return found

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        if self.running:
            return
        binary = self._resolve_binary()
        self.socket_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        if _answers(self.socket_path):
            raise MemoryServiceError(
                f"another Redis already answers on {self.socket_path}; stop it or use redis_connection(), "
                "which reuses it"
            )
        # A socket file left by a killed server would make us think it's up; redis unlinks it anyway.
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        args = [
            binary,
            "--port", "0",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--save", "",
            "--appendonly", "no",
            "--bind", "127.0.0.1",
            "--daemonize", "no",
            "--dir", str(self.log_path.parent),
        ]  # fmt: skip
        # No --logfile: redis logs to stdout, which goes to our log together with startup errors
        # ("FATAL CONFIG FILE ERROR") that redis prints before it would open a logfile.
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self._proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=self.log_path.parent,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                self._cleanup()
                raise MemoryServiceError(
                    f"redis-server exited with code {code} while starting on {self.socket_path}; "
                    f"log {self.log_path}:\n{_log_tail(self.log_path)}"
                )
            if _answers(self.socket_path):
                return
            time.sleep(0.02)
        self.stop()
        raise MemoryServiceError(
            f"redis-server did not answer PING on {self.socket_path} within {timeout_s:.0f} s; "
            f"log {self.log_path}:\n{_log_tail(self.log_path)}"
        )

    def client(self) -> redis.Redis:
        return unix_client(self.socket_path)

    def stop(self, timeout_s: float = 5.0) -> None:
        """SHUTDOWN NOSAVE, then SIGTERM, then SIGKILL: never leaves the process behind."""
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            client = unix_client(self.socket_path, connect_timeout_s=0.5)
            # The server closes the connection as it exits, so SHUTDOWN "fails" when it works.
            with contextlib.suppress(redis.RedisError, OSError):
                client.shutdown(nosave=True)
            client.close()
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=2.0)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self._cleanup()

    def release(self) -> None:
        """Forget the process without stopping it: the last user of the home stops it (`redis_connection`)."""
        if self._proc is not None:
            self._proc.poll()
        self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def restart(self, timeout_s: float = START_TIMEOUT_S) -> None:
        self.stop()
        self.start(timeout_s)

    def _cleanup(self) -> None:
        self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        _remove_socket(self.socket_path)

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def _start_lock(directory: Path) -> Iterator[None]:
    """Serialise check-then-start between processes sharing one home (else both would start a server)."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "start.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _started_at(pid: int) -> str:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22), "" where there is
    no /proc: with the PID it names one process, so a lease outlives no PID reuse."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat_line.rsplit(")", 1)[1].split()[19]


def _take_lease(directory: Path) -> Path:
    """`leases/PID-N`: this block uses the server. One per block, so that one process may hold several."""
    leases = directory / LEASES_DIR
    leases.mkdir(parents=True, exist_ok=True)
    path = leases / f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
    path.write_text(_started_at(os.getpid()))
    return path


def _live_leases(directory: Path) -> list[Path]:
    """The leases of live processes; those of dead ones (killed with -9) are removed."""
    live = []
    for lease in (directory / LEASES_DIR).glob("*-*"):
        pid_text = lease.name.split("-", 1)[0]
        with contextlib.suppress(OSError, ValueError):
            pid = int(pid_text)
            if _pid_alive(pid) and lease.read_text() == _started_at(pid):
                live.append(lease)
                continue
        with contextlib.suppress(FileNotFoundError):
            lease.unlink()
    return live


def _read_owner(directory: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((directory / OWNER_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_owner(directory: Path, server: RedisServer) -> None:
    record = {"started_by": os.getpid(), "server_pid": server.pid, "socket": str(server.socket_path)}
    (directory / OWNER_FILE).write_text(json.dumps(record))


def _shutdown(sock: Path) -> None:
    """SHUTDOWN NOSAVE the server answering on `sock` and wait until it is gone."""
    client = unix_client(sock, connect_timeout_s=0.5)
    with contextlib.suppress(redis.RedisError, OSError):  # the server closes the connection as it exits
        client.shutdown(nosave=True)
    client.close()
    _wait_gone(sock)
    _remove_socket(sock)


@contextlib.contextmanager
def redis_connection(home: Path, url: str | None = None) -> Iterator[redis.Redis]:
    """A Redis client for working memory, for the duration of the block.

    - `url` (else `MEMSQL_REDIS_URL`): connect and PING; unreachable raises MemoryServiceError at once.
    - Otherwise a private server on `socket_path_for(home)`, shared by every process using the home
      (`memsql eval`, `memsql run`, `memsql ui`'s runs, the automation). Each block holds a lease,
      `home/redis/leases/PID-N`; the server is started by the first and stopped by the last block
      to end (also on exceptions). A lease whose process died (kill -9) is ignored and removed, so a
      killed user neither stops the server under the others nor keeps it up. A server of ours
      (`home/redis/owner.json`) answering with no live lease is an orphan of killed runs: it is shut
      down and replaced (its contents were their scratch state). A server answering without any
      owner record is not ours to stop: we use it and leave it alone.
    """
    url = url or os.environ.get(REDIS_URL_ENV) or None
    if url:
        client = connect_url(url)
        try:
            yield client
        finally:
            client.close()
        return

    home = home.absolute()
    directory = redis_dir(home)
    server: RedisServer | None = None
    with _start_lock(directory):
        sock = socket_path_for(home)
        if _answers(sock) and not _live_leases(directory) and _read_owner(directory) is not None:
            _shutdown(sock)
        # Taken before the server starts: a run killed while it starts leaves an orphan, not a server
        # nobody stops.
        lease = _take_lease(directory)
        try:
            if not _answers(sock):
                server = RedisServer(sock, log_path=directory / "redis.log")
                _write_owner(directory, server)
                server.start()
                _write_owner(directory, server)
        except BaseException:
            lease.unlink(missing_ok=True)  # a live process's lease would keep a later server up
            raise
    try:
        client = unix_client(sock)
        try:
            yield client
        finally:
            client.close()
    finally:
        # Under the lock: a process about to reuse or start a server must not see it half-gone.
        with _start_lock(directory):
            lease.unlink(missing_ok=True)
            last = not _live_leases(directory) and _read_owner(directory) is not None
            if last and server is not None:
                server.stop()
            elif last and _answers(sock):
                _shutdown(sock)
            if last:
                (directory / OWNER_FILE).unlink(missing_ok=True)
            if server is not None:
                server.release()


def _wait_gone(sock: Path, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while _answers(sock):
        if time.monotonic() > deadline:
            raise MemoryServiceError(
                f"an orphaned redis-server on {sock} did not shut down; kill it and retry"
            )
        time.sleep(0.05)
