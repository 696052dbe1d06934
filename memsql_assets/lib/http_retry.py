"""The one HTTP retry policy: what the model gateway (lib/models/gateway.py) and `memsql sources
fetch` (lib/sources/fetch.py) do when a server answers 429 or 5xx, cannot be reached, or drops a
transfer. Exponential backoff with optional jitter, a server's Retry-After honoured first, fewer
attempts when the host cannot be reached at all; tenacity runs it."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC
from typing import Any

import tenacity


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: base·2^(n-1) capped at max_delay_s, with "equal jitter" (half fixed,
    half uniform) drawn from a seeded RNG; `jitter=False` makes delays exact. A server's Retry-After
    wins over the computed delay (capped at max_retry_after_s)."""

    max_attempts: int = 6
    # Cannot connect at all (refused, DNS, TLS): retrying longer rarely helps, and a caller must
    # fail within a minute.
    max_connect_attempts: int = 3
    # A 429 asks the client to slow down, which the gateway's adaptive limit does; until it has, a call
    # can be refused several times in a row (1 turn in 466 exhausted 6 attempts in bench/adaptive_concurrency.py).
    max_rate_limited_attempts: int = 12
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    max_retry_after_s: float = 300.0
    jitter: bool = True
    seed: int | None = None

    def __post_init__(self) -> None:
        if min(self.max_attempts, self.max_connect_attempts, self.max_rate_limited_attempts) < 1:
            raise ValueError("max_attempts, max_connect_attempts and max_rate_limited_attempts must be >= 1")

    def attempts_for(self, failure: Retryable) -> int:
        if failure.cannot_connect:
            return self.max_connect_attempts
        return self.max_rate_limited_attempts if failure.rate_limited else self.max_attempts

    def delay(self, attempt: int, retry_after_s: float | None, rng: random.Random) -> float:
        if retry_after_s is not None:
            return max(0.0, min(retry_after_s, self.max_retry_after_s))
        delay = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        if self.jitter:
            delay = delay / 2 + rng.uniform(0, delay / 2)
        return delay


@dataclass(frozen=True)
class Retryable:
    """How a failed attempt may be tried again."""

    retry_after_s: float | None = None  # the server's Retry-After
    cannot_connect: bool = False  # the host did not answer at all
    at_once: bool = False  # resume without waiting (a transfer dropped mid-way)
    rate_limited: bool = False  # a 429: the server asks the client to slow down


def retrying(
    policy: RetryPolicy,
    retryable: Callable[[BaseException], Retryable | None],
    sleep: Callable[[float], Any],
    rng: random.Random,
    before_sleep: Callable[[tenacity.RetryCallState], None] | None = None,
    asynchronous: bool = False,
) -> tenacity.BaseRetrying:
    """The policy as tenacity runs it: a failure `retryable` accepts is tried again, up to the
    attempts its kind allows, after the policy's delay, slept through `sleep`; the last failure is
    raised as it is."""

    def how(state: tenacity.RetryCallState) -> Retryable:
        got = retryable(state.outcome.exception()) if state.outcome is not None else None
        assert got is not None, "tenacity asks only about retryable failures"
        return got

    def last(state: tenacity.RetryCallState) -> bool:
        return state.attempt_number >= policy.attempts_for(how(state))

    def wait(state: tenacity.RetryCallState) -> float:
        if last(state) or how(state).at_once:  # tenacity asks for the delay before it stops: no jitter drawn
            return 0.0
        return policy.delay(state.attempt_number, how(state).retry_after_s, rng)

    kind = tenacity.AsyncRetrying if asynchronous else tenacity.Retrying
    return kind(
        retry=tenacity.retry_if_exception(lambda exc: retryable(exc) is not None),
        stop=last,
        wait=wait,
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` as seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not headers:
        return None
    lowered = {str(k).lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except (TypeError, ValueError):
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
