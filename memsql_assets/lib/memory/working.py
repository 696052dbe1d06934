"""Working memory: the last N turn payloads of one session, in Redis, scoped by run and session.

Window semantics follow DESIGN.md "State updates are not cumulative": each entry carries only the
state updates of its own turn, and the list is trimmed to the window, so a key bound at turn 1 is
visible exactly while turn 1 is among the last N turns.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis

from memsql_assets.lib.memory.errors import MemoryPayloadError, MemoryServiceError
from memsql_assets.lib.memory.protocol import StoreSize

PAYLOAD_FIELDS = ("session_id", "turn_index", "question", "sql", "result_summary")
# Only in annotated context mode (lib/context_mode.py): the turn's annotated values.
ANNOTATION_FIELD = "state_updates"
KEY_PREFIX = "memsql:wm"
# A shared Redis (MEMSQL_REDIS_URL) must not accumulate keys of crashed runs forever.
DEFAULT_TTL_S = 7 * 24 * 3600
# append in one round trip, atomic on the server: push unless the head already is this entry (a
# retry after a lost reply), trim to the window (0: keep every turn), renew the TTL; reply with the
# window, which is what the session's next recall would read.
APPEND_SCRIPT = """
if redis.call('LINDEX', KEYS[1], 0) ~= ARGV[1] then redis.call('LPUSH', KEYS[1], ARGV[1]) end
if tonumber(ARGV[2]) > 0 then redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1) end
if tonumber(ARGV[3]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return redis.call('LRANGE', KEYS[1], 0, -1)
"""

T = TypeVar("T")


def _glob_escape(text: str) -> str:
    return "".join(f"\\{ch}" if ch in "*?[]\\" else ch for ch in text)


def validate_payload(payload: dict[str, Any], session_id: str | None = None) -> None:
    """Fail on the field that is wrong, naming the session and turn, before anything is stored."""
    where = f"session {payload.get('session_id')!r} turn {payload.get('turn_index')!r}"
    missing = [f for f in PAYLOAD_FIELDS if f not in payload]
    if missing:
        raise MemoryPayloadError(
            f"{where}: payload lacks field(s) {missing} (expected {list(PAYLOAD_FIELDS)})"
        )
    if not isinstance(payload["session_id"], str) or not payload["session_id"]:
        raise MemoryPayloadError(f"{where}: field 'session_id' must be a non-empty string")
    if isinstance(payload["turn_index"], bool) or not isinstance(payload["turn_index"], int):
        raise MemoryPayloadError(f"{where}: field 'turn_index' must be an int")
    if ANNOTATION_FIELD in payload and not isinstance(payload[ANNOTATION_FIELD], dict):
        raise MemoryPayloadError(f"{where}: field '{ANNOTATION_FIELD}' must be a dict")
    if session_id is not None and payload["session_id"] != session_id:
        raise MemoryPayloadError(f"{where}: payload belongs to another session than {session_id!r}")


def _decode(key: str, raw: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for position, item in enumerate(raw):
        try:
            out.append(json.loads(item))
        except ValueError as exc:
            raise MemoryServiceError(f"working memory key {key!r} entry {position} is not JSON: {exc}") from exc
    return out


def _check_window(window: int | None) -> None:
    """A window of N >= 1 turns, or None: every turn of the session."""
    if window is None:
        return
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise MemoryPayloadError(f"working-memory window must be an int >= 1 or None (every turn), got {window!r}")


class WorkingMemory:
    """Per-run, per-session sliding window of turn payloads (`memsql:wm:{run_id}:{session_id}`).

    Connection errors are retried with exponential backoff, so a Redis that restarts mid-run is
    reconnected to (its contents are gone: the caller's session continues with an empty window).
    """

    def __init__(
        self,
        client: redis.Redis,
        run_id: str,
        *,
        attempts: int = 6,
        backoff_s: float = 0.1,
        ttl_s: int = DEFAULT_TTL_S,
    ):
        if not run_id or ":" in run_id:
            # ':' would make one run's SCAN pattern match another run's keys ("a" vs "a:b").
            raise MemoryPayloadError(
                f"working memory run_id must be non-empty and free of ':', got {run_id!r}"
            )
        self.client = client
        self.run_id = run_id
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.ttl_s = ttl_s
        self._append = client.register_script(APPEND_SCRIPT)  # EVALSHA; reloaded if the server lost it

    def key(self, session_id: str) -> str:
        return f"{KEY_PREFIX}:{self.run_id}:{session_id}"

    def _retry(self, operation: str, fn: Callable[[], T]) -> T:
        delay = self.backoff_s
        for attempt in range(1, self.attempts + 1):
            try:
                return fn()
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                # BusyLoadingError (a server loading data after restart) is a ConnectionError too.
                if attempt == self.attempts:
                    raise MemoryServiceError(
                        f"working memory {operation} (run {self.run_id!r}) failed after {attempt} attempts: "
                        f"Redis unreachable ({type(exc).__name__}: {exc})"
                    ) from exc
                time.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    def append(self, session_id: str, payload: dict[str, Any], window: int | None) -> list[dict[str, Any]]:
        """Push the payload as the newest entry and trim to `window` (None: keep all), atomically (APPEND_SCRIPT);
        returns the window as Redis holds it now, most recent first (`recall` after the append).

        The push is idempotent: a retry after a lost reply sees its own entry at the head and does not
        push it twice (which would silently shrink the window by one turn).
        """
        validate_payload(payload, session_id)
        _check_window(window)
        entry = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
        args = [entry, window or 0, self.ttl_s or 0]
        key = self.key(session_id)
        return _decode(key, self._retry("append", lambda: self._append(keys=[key], args=args)))

    def recall(self, session_id: str, window: int | None) -> list[dict[str, Any]]:
        """At most `window` payloads (None: all), most recent first."""
        _check_window(window)
        key = self.key(session_id)
        last = -1 if window is None else window - 1
        return _decode(key, self._retry("recall", lambda: self.client.lrange(key, 0, last)))

    def clear(self, session_id: str) -> None:
        key = self.key(session_id)
        self._retry("clear", lambda: self.client.delete(key))

    def size(self) -> StoreSize:
        """Entries and bytes of every key of this run (SCAN and LRANGE: after the run, not per turn)."""
        pattern = f"{_glob_escape(KEY_PREFIX)}:{_glob_escape(self.run_id)}:*"

        def measure() -> StoreSize:
            entries = size = 0
            for key in self.client.scan_iter(match=pattern, count=500):
                items = self.client.lrange(key, 0, -1)
                entries += len(items)
                size += sum(len(i) for i in items)
            return StoreSize(entries, size)

        return self._retry("size", measure)

    def clear_run(self) -> int:
        """Delete this run's keys only (SCAN, never KEYS/FLUSHDB: the Redis may be shared). Returns the count."""
        pattern = f"{_glob_escape(KEY_PREFIX)}:{_glob_escape(self.run_id)}:*"

        def sweep() -> int:
            deleted = 0
            batch: list[Any] = []
            for key in self.client.scan_iter(match=pattern, count=500):
                batch.append(key)
                if len(batch) >= 500:
                    deleted += int(self.client.delete(*batch))  # type: ignore[arg-type]
                    batch.clear()
            if batch:
                deleted += int(self.client.delete(*batch))  # type: ignore[arg-type]
            return deleted

        return self._retry("clear_run", sweep)
