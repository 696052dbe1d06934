"""PriorityGate (runner's slots for C and D chains): the most urgent waiter gets a freed slot, equal
urgencies are served in arrival order, and a cancelled waiter never keeps a slot."""

from __future__ import annotations

import asyncio

from memsql_assets.lib.harness.priority_gate import PriorityGate


async def _order_served(waiters: list[tuple[str, float]]) -> list[str]:
    gate, served = PriorityGate(1), []
    hold = asyncio.Event()

    async def holder() -> None:
        async with gate.slot():
            await hold.wait()

    async def waiter(name: str, priority: float) -> None:
        async with gate.slot(priority):
            served.append(name)

    first = asyncio.create_task(holder())
    await asyncio.sleep(0)
    tasks = []
    for name, priority in waiters:
        tasks.append(asyncio.create_task(waiter(name, priority)))
        await asyncio.sleep(0)  # arrive in this order
    hold.set()
    await asyncio.gather(first, *tasks)
    return served


def test_the_most_urgent_waiter_is_served_first_ties_in_arrival_order():
    served = asyncio.run(_order_served([("late-chain", -3), ("long-chain", -9), ("a", -3), ("b", -3)]))
    assert served == ["long-chain", "late-chain", "a", "b"]


def test_a_cancelled_waiter_gives_its_slot_on():
    async def scenario() -> list[str]:
        gate, served = PriorityGate(1), []
        hold = asyncio.Event()

        async def use(name: str, priority: float = 0) -> None:
            async with gate.slot(priority):
                served.append(name)
                await hold.wait()

        holder = asyncio.create_task(use("holder"))
        await asyncio.sleep(0)
        gone = asyncio.create_task(use("gone", -5))
        after = asyncio.create_task(use("after"))
        await asyncio.sleep(0)
        gone.cancel()
        hold.set()
        await asyncio.gather(holder, after)
        assert gone.cancelled()
        async with gate.slot():  # every slot came back
            served.append("last")
        return served

    assert asyncio.run(scenario()) == ["holder", "after", "last"]
