"""Adaptive concurrency per model: additive increase, multiplicative decrease (AIMD), as TCP does.

A model's in-flight limit starts at its registry `max_concurrency` (the ceiling). A call refused for
its rate (429, or any failure carrying Retry-After) cuts the limit to DECREASE of itself, once per
generation: calls that started before the last cut do not cut again, so one burst of refusals
counts once. Every `limit` answered calls that saw the limit fully used while they were in flight
raise it by one, never above the ceiling. Slots are held per attempt, not across a retry's backoff, so a call waiting
out a Retry-After leaves its slot to others.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
from collections.abc import AsyncIterator
from dataclasses import dataclass

DECREASE = 0.75  # gentle: halving under a fixed server limit would idle half of it after each cut


@dataclass(eq=False)
class Slot:
    """One attempt's hold on the limit; the caller sets `rate_limited` when the endpoint refused it."""

    generation: int
    saturated: bool = False  # the limit was fully used while it was held
    rate_limited: bool = False


class AdaptiveLimit:
    """The in-flight attempts of one model, at most `limit`, between 1 and `ceiling`."""

    def __init__(self, ceiling: int):
        self.ceiling = ceiling
        self.limit = ceiling
        self.low = ceiling  # the range the limit took during the run
        self.high = ceiling
        self.retries = 0  # attempts after a model call's first
        self.retry_wait_s = 0.0  # time calls spent in backoff before a retry
        self._in_flight = 0
        self._generation = 0
        self._answered = 0  # at a saturated limit, since it last changed
        self._held: set[Slot] = set()
        self._seen: list[int] = []  # the limit each attempt was admitted under, in order
        self._changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        async with self._changed:
            await self._changed.wait_for(lambda: self._in_flight < self.limit)
            self._in_flight += 1
            held = Slot(self._generation)
            self._seen.append(self.limit)
            self._held.add(held)
            if self._in_flight >= self.limit:
                for slot in self._held:
                    slot.saturated = True
        try:
            yield held
        finally:
            async with self._changed:
                self._in_flight -= 1
                self._held.discard(held)
                self._settle(held)
                self._changed.notify_all()

    def _settle(self, held: Slot) -> None:
        if held.rate_limited:
            if held.generation == self._generation:
                self._set(max(1, int(self.limit * DECREASE)))
        elif held.saturated:
            self._answered += 1
            if self._answered >= self.limit and self.limit < self.ceiling:
                self._set(self.limit + 1)

    def _set(self, limit: int) -> None:
        self.limit = limit
        self.low, self.high = min(self.low, limit), max(self.high, limit)
        self._generation += 1
        self._answered = 0

    async def backoff(self, seconds: float, sleep) -> None:  # noqa: ANN001 - the gateway's sleep
        """Sleep before a retry, counted."""
        self.retries += 1
        self.retry_wait_s += seconds
        await sleep(seconds)

    def stats(self) -> dict[str, float | int]:
        """What a partition summary reports of the model's load (`concurrency`)."""
        return {
            "limit_min": self.low,
            "limit_max": self.high,
            "limit_last": self.limit,
            # where it settled: the median limit over the later half of the attempts
            "limit_settled": int(statistics.median(self._seen[len(self._seen) // 2 :])) if self._seen else self.limit,
            "retries": self.retries,
            "retry_wait_s": round(self.retry_wait_s, 3),
        }
