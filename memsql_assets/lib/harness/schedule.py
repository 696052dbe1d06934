"""When a partition's sessions run (runner.py's module docstring: waves, their stagger, commits): each
source's sessions cut into consecutive waves, which waves count as done on resume, and the Schedule that
starts sessions through one priority gate and commits them as they finish."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memsql_assets.lib.harness.priority_gate import PriorityGate

if TYPE_CHECKING:
    from memsql_assets.lib.harness.runner import PartitionRunner, RunStats

# Cross-session conditions store memory in one Chroma upsert per this many sessions (an upsert's fixed
# cost dwarfs its per-turn cost); a run killed in between redoes at most these sessions, from the request store.
COMMIT_EVERY_SESSIONS = 10
# How C and D cut sessions into waves (recorded with the checkpoints: a resume never mixes two ways).
WAVES = "consecutive sessions of one source"


def waves(order: Sequence[str], size: int, source: Mapping[str, str]) -> dict[str, list[list[str]]]:
    """Per source, its sessions of `order` in consecutive waves of `size` (the last may be shorter).
    Episodic retrieval never crosses sources, so each source's waves form a chain of their own."""
    chains: dict[str, list[str]] = defaultdict(list)
    for sid in order:
        chains[source[sid]].append(sid)
    return {src: [sids[i : i + size] for i in range(0, len(sids), size)] for src, sids in chains.items()}


def twins_reachable_pct(turns: Sequence[Mapping[str, Any]], size: int) -> float | None:
    """Of the turns with a twin session (the extended benchmark's distractor turns), the share in %
    whose twin runs in an earlier wave at wave size `size`: what episodic retrieval can reach.
    None when no turn has a twin (the paper's benchmark); a twin outside `turns` is out of reach."""
    twinned = [t for t in turns if t.get("twin_session_id")]
    if not twinned:
        return None
    source = {t["session_id"]: t["source"] for t in turns}
    chains = waves(sorted(source), size, source)
    wave_of = {sid: i for chain in chains.values() for i, wave in enumerate(chain) for sid in wave}
    reached = sum(wave_of.get(t["twin_session_id"], len(wave_of)) < wave_of[t["session_id"]] for t in twinned)
    return round(100.0 * reached / len(twinned), 2)


def history_reach(turns: Sequence[Mapping[str, Any]]) -> int | None:
    """The largest wave size at which every session that continues an earlier one (the extended
    benchmark's analysts' histories) runs in a later wave than it, so that a memory shared across
    sessions can reach it. None when no session continues another (the paper's benchmark)."""
    source = {t["session_id"]: t["source"] for t in turns}
    continues = {t["session_id"]: t["continues_session_id"] for t in turns if t.get("continues_session_id")}
    if not continues:
        return None
    chains: dict[str, list[str]] = defaultdict(list)
    for sid in sorted(source):
        chains[source[sid]].append(sid)
    position = {sid: i for chain in chains.values() for i, sid in enumerate(chain)}
    # A session outside `turns` (a sample without its history) constrains nothing.
    pairs = [(position[me], position[them]) for me, them in continues.items() if them in position]
    return next(size for size in range(len(source), 0, -1) if all(j // size < i // size for i, j in pairs))


def whole_waves(chains: Mapping[str, list[list[str]]], done: Mapping[str, Any]) -> dict[str, Any]:
    """The checkpointed sessions that count as done: a wave is done only if it and every earlier
    wave of its chain were wholly checkpointed."""
    whole: dict[str, Any] = {}
    for chain in chains.values():
        for wave in chain:
            if not all(s in done for s in wave):
                break
            whole.update({s: done[s] for s in wave})
    return whole


@dataclass
class Schedule:
    """When each session of a run starts and when finished sessions are committed: each chain's
    waves one after another, a wave's sessions staggered, all of them through one priority gate.
    What a turn does is the runner's turn pipeline (`PartitionRunner.run_session`)."""

    runner: PartitionRunner
    sessions: Mapping[str, Sequence[Mapping[str, Any]]]
    done: dict[str, list[dict[str, Any]]]  # finished sessions' rows, filled as sessions finish
    stats: RunStats
    gate: PriorityGate
    batch: list[str] = field(default_factory=list)  # cross-session: finished, not yet committed
    committed: asyncio.Task[None] | None = None  # the latest commit; each waits for the one before

    async def run(self, chains: Mapping[str, list[list[str]]]) -> None:
        try:
            await asyncio.gather(*(self.chain(chain) for chain in chains.values()))
        finally:
            if self.committed is not None:  # commits stay in order, and the run ends after the last
                await self.committed
        if self.batch:
            await self.runner.commit([(s, self.done[s]) for s in self.batch])

    async def chain(self, chain: list[list[str]]) -> None:
        """One source's waves, one after another; the other sources' chains fill the free slots
        while this one waits for its wave's longest session."""
        chain = [todo for wave in chain if (todo := [s for s in wave if s not in self.done])]
        # Turns still ahead on the chain's critical path (each wave ends with its longest
        # session): the chain with the most gets a freed slot first.
        ahead = [max(len(self.sessions[s]) for s in wave) for wave in chain]
        for i, wave in enumerate(chain):
            await self.wave(wave, sum(ahead[i:]))
            if self.runner.shared:
                if self.runner.memory is not None:
                    self.runner.memory.end_wave(wave)
                self.batch += wave
                if len(self.batch) >= COMMIT_EVERY_SESSIONS:
                    self.committed = asyncio.create_task(self._commit_after(self.committed, self.batch))
                    self.batch = []

    async def wave(self, wave: list[str], urgency: int) -> None:
        """The wave's sessions, longest first, each started once the one before has sent its first
        request. Started together, a wave's sessions move in lock-step: their model calls end
        together, and each then waits for all of them to do their turn's work. Staggered, they don't."""
        tasks, after = [], None
        for sid in sorted(wave, key=lambda s: -len(self.sessions[s])):
            sent = asyncio.Event()
            tasks.append(asyncio.create_task(self.session(sid, after, sent, urgency)))
            after = sent
        await asyncio.gather(*tasks)

    async def session(self, sid: str, after: asyncio.Event | None, sent: asyncio.Event, urgency: int) -> None:
        if after is not None:
            await after.wait()  # never set by a session that failed first: the wave stops starting
        async with self.gate.slot(-urgency):
            self.done[sid] = await self.runner.run_session(self.sessions[sid], self.stats, sent)
            if not self.runner.shared:
                await self.runner.commit([(sid, self.done[sid])])
        sent.set()

    async def _commit_after(self, previous: asyncio.Task[None] | None, finished: list[str]) -> None:
        if previous is not None:
            await previous
        await self.runner.commit([(s, self.done[s]) for s in finished])
