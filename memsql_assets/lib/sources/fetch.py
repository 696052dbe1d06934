"""`memsql sources fetch`: download a source's real public files into `$MEMSQL_HOME/raw/<name>/`.

Where each source comes from is `sources/fetch.yaml` (docs/data_sources.md). A fetch never leaves
a file an adapter could half-read:

* each file streams into `raw/.<name>.partial/<file>.part`; an interrupted transfer resumes there
  with an HTTP Range request (or restarts when the server ignores it), and only a complete file,
  checksum-verified where the content is pinned, is renamed to its name;
* when every file is there, the source's real-data adapter builds a throw-away database from the
  folder; only if it accepts the files does the folder replace `raw/<name>/` (a rejected set is
  moved to `raw/.<name>.rejected/` for inspection). Built databases under `sources/` are never
  touched: the next `memsql run` rebuilds them from the new files.
"""

from __future__ import annotations

import errno
import http.client
import os
import random
import shutil
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.errors import ConfigError, MemsqlError
from memsql_assets.lib.http_retry import Retryable, RetryPolicy, parse_retry_after, retrying
from memsql_assets.lib.paths import REPO_ROOT
from memsql_assets.lib.sources.build import build_source
from memsql_assets.lib.sources.config import SOURCE_NAMES, SourceSpec, env_var_for

DEFAULT_FETCH_FILE = REPO_ROOT / "sources" / "fetch.yaml"
ALL = "all"
CHUNK = 1 << 16
# Per socket operation: connect, then each read. An unreachable host fails in at most
# CONNECT_ATTEMPTS * TIMEOUT_S + pause (21 s), inside the 30 s a user should wait for one line.
TIMEOUT_S = 10.0
CONNECT_ATTEMPTS = 2
# 429 / 5xx / dropped connections: tries per file, and the longest Retry-After we honour.
TRANSFER_ATTEMPTS = 6
MAX_WAIT_S = 120.0
# The one HTTP retry policy with exact delays (1, 2, 4 ... s): a user reads them in the progress lines.
POLICY = RetryPolicy(
    max_attempts=TRANSFER_ATTEMPTS, max_connect_attempts=CONNECT_ATTEMPTS, max_retry_after_s=MAX_WAIT_S, jitter=False
)
PROGRESS_STEP = 0.25
PROGRESS_MIN_BYTES = 1 << 20
NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}

Report = Callable[[str], None]


class FetchError(MemsqlError):
    """A download or its verification failed; the message is one line: what, where, why."""


@dataclass(frozen=True)
class RemoteFile:
    url: str
    save_as: str
    sha256: str | None


@dataclass(frozen=True)
class FetchPlan:
    name: str
    files: tuple[RemoteFile, ...]
    requests_per_second: float | None = None
    needs_contact: bool = False  # SEC refuses clients whose User-Agent names no contact


@dataclass(frozen=True)
class FetchConfig:
    path: Path
    user_agent: str | None
    plans: dict[str, FetchPlan]


@dataclass(frozen=True)
class Fetched:
    name: str
    folder: Path
    files: int
    downloaded_bytes: int
    verified: int  # files whose sha256 was checked
    row_counts: dict[str, int]


def fetch_file() -> Path:
    return Path(os.environ.get("MEMSQL_FETCH_FILE", DEFAULT_FETCH_FILE)).expanduser().resolve()


def raw_dir(home: Path, name: str) -> Path:
    return home / "raw" / name


def resolve_names(names: Iterable[str]) -> list[str]:
    """`all` or source names -> source names in the canonical order; an unknown name is an error."""
    wanted: set[str] = set()
    for name in names:
        if name == ALL:
            wanted.update(SOURCE_NAMES)
        elif name in SOURCE_NAMES:
            wanted.add(name)
        else:
            raise FetchError(f"unknown source {name!r}: expected {', '.join(SOURCE_NAMES)} or {ALL}")
    if not wanted:
        raise FetchError(f"no source named: expected {', '.join(SOURCE_NAMES)} or {ALL}")
    return [n for n in SOURCE_NAMES if n in wanted]


def load_fetch_config(path: Path | None = None, environ: Mapping[str, str] | None = None) -> FetchConfig:
    """Parse sources/fetch.yaml, apply MEMSQL_FETCH_MIRROR and MEMSQL_FETCH_USER_AGENT."""
    path = path or fetch_file()
    env = os.environ if environ is None else environ
    if not path.is_file():
        raise ConfigError(path, "<file>", "fetch configuration file does not exist")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(path, "<file>", f"not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(path, "<top level>", "expected a mapping")
    unknown = set(raw) - {*SOURCE_NAMES, "user_agent"}
    if unknown:
        raise ConfigError(
            path, sorted(unknown)[0], f"unknown key; expected user_agent or one of {list(SOURCE_NAMES)}"
        )
    user_agent = env.get("MEMSQL_FETCH_USER_AGENT") or raw.get("user_agent")
    if user_agent is not None and not isinstance(user_agent, str):
        raise ConfigError(path, "user_agent", f"got {user_agent!r}; expected a string")
    mirror = env.get("MEMSQL_FETCH_MIRROR")
    plans = {}
    for name in SOURCE_NAMES:
        entry = raw.get(name)
        if not isinstance(entry, dict):
            raise ConfigError(path, name, "expected a mapping with base_url and files (or companies)")
        plans[name] = _plan(path, name, entry, mirror)
    return FetchConfig(path=path, user_agent=user_agent, plans=plans)


def _plan(path: Path, name: str, entry: dict[str, Any], mirror: str | None) -> FetchPlan:
    base = entry.get("base_url")
    if not isinstance(base, str) or urlsplit(base).scheme not in ("https", "http"):
        raise ConfigError(
            path, f"{name}.base_url", f"got {base!r}; expected an https:// (or a mirror's http://) URL"
        )
    if mirror:
        base = f"{mirror.rstrip('/')}/{name}/"
    base = base if base.endswith("/") else base + "/"
    rate = entry.get("requests_per_second")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int | float) or rate <= 0):
        raise ConfigError(path, f"{name}.requests_per_second", f"got {rate!r}; expected a positive number")
    if name == "sec_edgar":
        companies = entry.get("companies")
        if not isinstance(companies, dict) or not companies:
            raise ConfigError(path, f"{name}.companies", "expected a mapping TICKER: 10-digit CIK")
        files = []
        for ticker, cik in companies.items():
            if not (isinstance(cik, str) and len(cik) == 10 and cik.isdigit()):
                raise ConfigError(
                    path, f"{name}.companies.{ticker}", f"got {cik!r}; expected a quoted 10-digit CIK"
                )
            # The adapter reads the ticker from the file name (<TICKER>_...json).
            files.append(RemoteFile(base + f"CIK{cik}.json", f"{ticker}_CIK{cik}.json", None))
        return FetchPlan(name, tuple(files), rate, needs_contact=True)
    listed = entry.get("files")
    if not isinstance(listed, dict) or not listed:
        raise ConfigError(path, f"{name}.files", "expected a mapping file path: sha256 (or null)")
    files = []
    for rel, digest in listed.items():
        if digest is not None and not (isinstance(digest, str) and len(digest) == 64):
            raise ConfigError(
                path, f"{name}.files.{rel}", f"got {digest!r}; expected a sha256 hex digest or null"
            )
        files.append(RemoteFile(base + str(rel), Path(str(rel)).name, digest))
    return FetchPlan(name, tuple(files), rate)


def check_user_agent(config: FetchConfig, names: Iterable[str]) -> str:
    """The User-Agent to send; refuses up front when a chosen source needs a contact and none is set."""
    agent = config.user_agent
    needy = [n for n in names if config.plans[n].needs_contact]
    if needy and (not agent or "@" not in agent):
        raise FetchError(
            f"{needy[0]}: SEC serves only clients that declare a contact in their User-Agent: set "
            f"MEMSQL_FETCH_USER_AGENT='Your Name you@example.org' (or user_agent in {config.path})"
        )
    return agent or "memsql-sources-fetch"


class Downloader:
    """HTTP GET into a file, with resume, retries on 429/5xx/drops, and a per-source request rate."""

    def __init__(self, user_agent: str, report: Report, sleep: Callable[[float], None] = time.sleep):
        self.user_agent = user_agent
        self.report = report
        self.sleep = sleep
        self._last_request = 0.0

    def download(self, remote: RemoteFile, dest: Path, min_interval: float = 0.0) -> int:
        """Write `remote` to `dest` (a complete, verified file or nothing); return the bytes received.
        Each attempt resumes the partial file; retries follow the one HTTP retry policy."""
        part = dest.with_name(dest.name + ".part")
        received = 0
        attempts = 0

        def attempt() -> None:
            nonlocal received, attempts
            attempts += 1
            self._pace(min_interval)
            offset = part.stat().st_size if part.exists() else 0
            with self._open(remote.url, offset, part) as response:
                complete, n = self._stream(remote, response, part, offset)
            received += n
            if not complete:
                raise _Again(_Again.INCOMPLETE, "incomplete", Retryable(at_once=True))

        def report(state: Any) -> None:
            again = state.outcome.exception()
            if again.kind == _Again.HTTP:
                source = "Retry-After" if again.how.retry_after_s is not None else "backoff"
                self.report(f"  {again.problem} from {remote.url}: retrying in {state.next_action.sleep:g} s ({source})")

        try:
            retrying(POLICY, _Again.retryable, self.sleep, random.Random(0), before_sleep=report)(attempt)
        except _Again as exc:
            raise FetchError(exc.final(remote.url, attempts)) from exc
        if remote.sha256 is not None:
            got = sha256_file(part)
            if got != remote.sha256:
                part.unlink()
                raise FetchError(
                    f"{remote.url}: checksum mismatch: sha256 {got}, expected {remote.sha256} "
                    "(download discarded; a changed upstream file or a bad mirror)"
                )
        with open(part, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(part, dest)
        return received

    def _open(self, url: str, offset: int, part: Path) -> Any:
        """The response to a GET of `url` from `offset`; a failure worth another attempt raises _Again,
        any other FetchError."""
        headers = {"User-Agent": self.user_agent}
        if offset:
            headers["Range"] = f"bytes={offset}-"
        try:
            return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT_S)
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code == 416 and offset:  # the partial file is not a prefix the server knows
                part.unlink()
                raise _Again(_Again.INCOMPLETE, "range not satisfiable", Retryable(at_once=True)) from exc
            raise _http_failure(url, exc.code, exc.reason, exc.headers) from exc
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise _Again(_Again.CONNECT, f"cannot connect: {_cause(reason)}", Retryable(cannot_connect=True)) from exc

    def _pace(self, min_interval: float) -> None:
        wait = self._last_request + min_interval - time.monotonic()
        if wait > 0:
            self.sleep(wait)
        self._last_request = time.monotonic()

    def _stream(self, remote: RemoteFile, response: Any, part: Path, offset: int) -> tuple[bool, int]:
        """Append the body to `part`; (complete?, bytes received). Raises FetchError when out of room."""
        if offset and response.status != 206:
            offset = 0  # the server ignored the Range header: start over
        elif response.status == 206 and not str(response.headers.get("Content-Range", "")).startswith(
            f"bytes {offset}-"
        ):
            part.unlink()
            self.report(f"  {remote.save_as}: server sent a range we did not ask for, restarting")
            return False, 0
        length = response.headers.get("Content-Length")
        total = offset + int(length) if length is not None else None
        if length is not None:
            free = shutil.disk_usage(part.parent).free
            if free < int(length):
                raise FetchError(
                    f"{remote.url}: no room in {part.parent}: {int(length):,} bytes needed, {free:,} free"
                )
        received = 0
        next_mark = PROGRESS_STEP
        try:
            with open(part, "ab" if offset else "wb") as fh:
                while True:
                    try:
                        chunk = response.read(CHUNK)
                    except (http.client.IncompleteRead, ConnectionError, TimeoutError):
                        fh.flush()
                        done = offset + received
                        self.report(f"  {remote.save_as}: connection dropped at {done:,} bytes, resuming")
                        return False, received
                    if not chunk:
                        break
                    fh.write(chunk)
                    received += len(chunk)
                    if total and total >= PROGRESS_MIN_BYTES and (offset + received) / total >= next_mark:
                        self.report(f"  {remote.save_as}: {offset + received:,} / {total:,} bytes")
                        next_mark += PROGRESS_STEP
        except OSError as exc:
            if exc.errno not in NO_ROOM:
                raise
            part.unlink(missing_ok=True)
            raise FetchError(f"{remote.url}: no room to write {part}: {exc.strerror}") from exc
        if total is not None and part.stat().st_size != total:  # closed early without an error
            self.report(f"  {remote.save_as}: connection dropped at {part.stat().st_size:,} bytes, resuming")
            return False, received
        return True, received


def fetch_source(plan: FetchPlan, home: Path, downloader: Downloader) -> Fetched:
    """Download `plan` into raw/<name>/ through a staging folder that its adapter must accept.

    Pinned files already in raw/<name>/ with the right checksum are reused, not downloaded again;
    a staging folder left by an interrupted fetch is resumed.
    """
    final = raw_dir(home, plan.name)
    stage = final.with_name(f".{plan.name}.partial")
    stage.mkdir(parents=True, exist_ok=True)
    interval = 1.0 / plan.requests_per_second if plan.requests_per_second else 0.0
    downloaded = verified = 0
    wanted = {f.save_as for f in plan.files}
    for stale in stage.iterdir():  # files of an earlier configuration, not ours to install
        if stale.name not in wanted and stale.name.removesuffix(".part") not in wanted:
            stale.unlink()
    for remote in plan.files:
        dest = stage / remote.save_as
        if remote.sha256 is not None:
            verified += 1
        if dest.exists() and (remote.sha256 is None or sha256_file(dest) == remote.sha256):
            downloader.report(f"  {remote.save_as}: complete from an earlier run")
            continue
        kept = final / remote.save_as
        if remote.sha256 is not None and kept.is_file() and sha256_file(kept) == remote.sha256:
            shutil.copyfile(kept, dest)
            downloader.report(f"  {remote.save_as}: already fetched, checksum ok")
            continue
        downloader.report(f"  GET {remote.url}")
        n = downloader.download(remote, dest, interval)
        downloaded += n
        downloader.report(
            f"  {remote.save_as}: {dest.stat().st_size:,} bytes{', sha256 ok' if remote.sha256 else ''}"
        )
    counts = _accept(plan.name, stage)
    _install(stage, final)
    return Fetched(plan.name, final, len(plan.files), downloaded, verified, counts)


def _accept(name: str, stage: Path) -> dict[str, int]:
    """Build a throw-away database from the staged files; a rejection keeps them aside, installs nothing."""
    probe = stage.with_name(f".{name}.check.sqlite")
    try:
        return build_source(SourceSpec(name=name, kind="real", real_path=stage), probe).row_counts
    except MemsqlError as exc:
        rejected = stage.with_name(f".{name}.rejected")
        shutil.rmtree(rejected, ignore_errors=True)
        os.replace(stage, rejected)
        raise FetchError(
            f"{name}: the {name} adapter rejects the downloaded files ({exc}); nothing installed, "
            f"files kept in {rejected}"
        ) from exc
    finally:
        probe.unlink(missing_ok=True)


def _install(stage: Path, final: Path) -> None:
    """Swap the staged folder in with two renames; the old folder goes only after the new one is in."""
    old = final.with_name(f".{final.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        os.replace(final, old)
    os.replace(stage, final)
    shutil.rmtree(old, ignore_errors=True)


def setting_for(name: str, folder: Path) -> str:
    """The line that makes `name` real without editing any file."""
    return f"export {env_var_for(name)}={folder}"


class _Again(Exception):
    """One failed attempt that the retry policy may try again: what failed, in the final error's words."""

    HTTP, CONNECT, INCOMPLETE = "http", "connect", "incomplete"

    def __init__(self, kind: str, problem: str, how: Retryable):
        super().__init__(problem)
        self.kind, self.problem, self.how = kind, problem, how

    @staticmethod
    def retryable(exc: BaseException) -> Retryable | None:
        return exc.how if isinstance(exc, _Again) else None

    def final(self, url: str, attempts: int) -> str:
        if self.kind == self.CONNECT:
            return f"{url}: {self.problem}"
        if self.kind == self.HTTP:
            return f"{url}: {self.problem}, still after {attempts} attempts"
        return f"{url}: incomplete after {attempts} attempts"


def _http_failure(url: str, code: int, reason: str, headers: Any) -> Exception:
    """429 and 5xx are worth another attempt, after the server's Retry-After when it is not too long;
    any other status is a FetchError naming it."""
    if code != 429 and code < 500:
        hint = " (does the User-Agent name a contact?)" if code == 403 else ""
        return FetchError(f"{url}: HTTP {code} {reason}{hint}")
    asked = parse_retry_after(headers)
    if asked is not None and asked > MAX_WAIT_S:
        return FetchError(f"{url}: HTTP {code} {reason}: server asks to retry in {asked:.0f} s (> {MAX_WAIT_S:.0f} s)")
    return _Again(_Again.HTTP, f"HTTP {code} {reason}", Retryable(retry_after_s=asked))


def _cause(reason: object) -> str:
    if isinstance(reason, socket.gaierror):
        return f"host name not resolved ({reason.strerror})"
    if isinstance(reason, TimeoutError):
        return f"no answer within {TIMEOUT_S:g} s"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__
