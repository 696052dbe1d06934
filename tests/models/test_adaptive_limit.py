"""The adaptive in-flight limit on its own: a refusal cuts it once per generation, answers at a full
limit raise it one at a time, never above the ceiling, and a waiting call gets a slot as one frees."""

from __future__ import annotations

import asyncio

from memsql_assets.lib.models.concurrency import AdaptiveLimit


async def _hold(limit: AdaptiveLimit, refused: bool, release: asyncio.Event) -> None:
    async with limit.slot() as slot:
        await release.wait()
        slot.rate_limited = refused


def test_a_burst_of_refusals_cuts_the_limit_once_and_answers_grow_it_back_to_the_ceiling():
    async def scenario() -> list[int]:
        limit, seen = AdaptiveLimit(8), []
        release = asyncio.Event()
        burst = [asyncio.create_task(_hold(limit, True, release)) for _ in range(8)]
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(*burst)
        seen.append(limit.limit)  # one cut for the eight refusals that started together
        while limit.limit < limit.ceiling:
            release = asyncio.Event()
            full = [asyncio.create_task(_hold(limit, False, release)) for _ in range(limit.limit)]
            await asyncio.sleep(0)
            release.set()
            await asyncio.gather(*full)
            seen.append(limit.limit)
        release = asyncio.Event()
        extra = [asyncio.create_task(_hold(limit, False, release)) for _ in range(3 * limit.ceiling)]
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(*extra)
        seen.append(limit.limit)
        return seen

    assert asyncio.run(scenario()) == [6, 7, 8, 8]


def test_answers_below_the_limit_do_not_raise_it_and_the_floor_is_one():
    async def scenario() -> tuple[int, int, dict]:
        limit = AdaptiveLimit(4)
        for _ in range(6):  # one at a time: each refusal is its own generation
            release = asyncio.Event()
            release.set()
            await _hold(limit, True, release)
        floor = limit.limit
        for _ in range(20):  # one in flight of a limit of 1 is full: these raise it
            release = asyncio.Event()
            release.set()
            await _hold(limit, False, release)
        return floor, limit.limit, limit.stats()

    floor, after, stats = asyncio.run(scenario())
    assert floor == 1
    assert after == 2, "answers at 2 with one in flight leave it at 2"
    assert stats["limit_min"] == 1 and stats["limit_max"] == 4
