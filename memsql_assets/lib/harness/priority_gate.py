"""A semaphore that hands a freed slot to the most urgent waiter (asyncio.Semaphore: the oldest).

The runner's C and D chains of waves share the model's slots: the chain with the most turns still
ahead on its critical path should get a freed slot first, or it ends last, alone, while the others'
slots sit idle. Equal priorities are served first come, first served.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class PriorityGate:
    def __init__(self, slots: int):
        self._free = slots
        self._waiting: list[tuple[float, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    @asynccontextmanager
    async def slot(self, priority: float = 0.0) -> AsyncIterator[None]:
        """Hold one slot for the block; the lowest `priority` waiting gets the next free one."""
        if self._free > 0 and not self._waiting:
            self._free -= 1
        else:
            granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiting, (priority, next(self._arrivals), granted))
            try:
                await granted
            except asyncio.CancelledError:
                if granted.done() and not granted.cancelled():
                    self._release()  # granted, then cancelled before it could use the slot
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self._waiting:
            _, _, granted = heapq.heappop(self._waiting)
            if not granted.done():
                granted.set_result(None)
                return
        self._free += 1
