"""The memory protocol: what a condition's memory does in a turn, and across the sessions of a partition.

Every condition names one memory implementation (conditions.yaml); the built-in ones (builtin.py,
summary.py, mem0_memory.py) and a user's plug-in (plugins.py) implement this one interface:

- `open(ctx)` once per partition run and epoch: connect the stores, warm static answers;
- `reset(keep)` before the run: keep exactly the memory of the sessions `keep` (a resumed run's
  finished sessions; none on a fresh run);
- `retrieve(turn, vector)` before the model is asked: the prompt blocks the memory contributes and,
  if it resolves values itself, each referenced key's value with its provenance (which session and
  turn supplied it). Without its own resolution the harness walks the retrieved turns' state updates
  (resolution.py: the paper's rule);
- `persist(payload)` after the turn was scored: what the memory keeps of it (the question, the model's
  SQL and its result preview; in annotated context mode also the turn's annotated `state_updates`);
- context modes (context_mode.py): in observed mode `MemoryTurn.referenced_keys` is withheld, payloads
  carry no `state_updates`, and no Resolved block is built from annotations; `ctx.context_mode` tells
  a memory which mode its partition runs in;
- the visibility rule: `SESSION` memory is private to a session (sessions run concurrently, and a
  session's memory is forgotten when it ends); `WAVES` memory is shared by the sessions of a source,
  which run in waves of W: a session sees its own turns and every turn of the earlier waves
  (`end_wave` publishes a finished wave), so rows are a pure function of W;
- `forget(session)` before a session is (re)run, `commit()` before checkpoints are written,
  `identity()` (a value that changes when a server lost the memory mid-session), `size()` after the
  partition, `close()`.

`MemoryBase` gives every method but `retrieve` and `persist` a default. A memory's exception during
a turn (other than `MemoryServiceError`, a store that is down) becomes that turn's `memory_error`:
the turn is recorded, and the partition goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel

from memsql_assets.lib.config_files import Strict
from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.history import History
from memsql_assets.lib.memory.resolution import Payload, Resolution

# (source prefix, question, question vector or None) -> markdown or None
TrajectoryLookup = Callable[[str, str, list[float] | None], str | None]
TrajectoryFactory = Callable[[Path], TrajectoryLookup]


class Visibility(StrEnum):
    """Who sees a session's memory (module docstring)."""

    SESSION = "session"
    WAVES = "waves"


@dataclass(frozen=True)
class MemoryTurn:
    """What a memory may know of the turn it retrieves for: never its answer or the values it binds."""

    session_id: str
    turn_index: int
    source: str  # NW, SEC or BIRD
    question: str
    # Annotated mode: the names of the values the turn needs from earlier turns. Observed mode: withheld
    # (context_mode.WithheldKeys: any read raises, naming the condition).
    referenced_keys: Sequence[str]


@dataclass(frozen=True)
class PromptBlock:
    """A block of the prompt's user message: its header line (e.g. "Summary of earlier turns:") and text."""

    header: str
    text: str

    def render(self) -> str:
        return f"{self.header}\n{self.text}"


@dataclass(frozen=True)
class Retrieval:
    """What a memory puts in front of the question (docs/prompt_composition.md gives the order)."""

    recent: Sequence[Payload] = ()  # "Recent conversation:", most recent first
    similar: Sequence[Payload] = ()  # "Similar past turns:", in retrieval order
    hints: Sequence[str] = ()  # "Semantic hints:"
    trajectory: str | None = None  # "Reference trajectory from a similar solved question:"
    blocks: Sequence[PromptBlock] = ()  # any other block (a summary, a plug-in's own)
    # The referenced keys' values with their provenance; None: resolve from `recent`, then `similar`.
    resolution: Resolution | None = None


@dataclass(frozen=True)
class StoreSize:
    """A memory's stores after the partition: how many entries, and how many bytes they hold."""

    entries: int = 0
    bytes: int = 0


@dataclass
class MemoryContext:
    """What `open` gets: the partition run (one epoch) and the services a memory may use."""

    home: Path
    run_id: str  # unique per model x condition x benchmark version x epoch (x sample, x gold history)
    model: str
    condition: str
    benchmark: str
    benchmark_version: str
    epoch: int
    sample: int | None
    store_dir: Path  # the partition's own folder: a store kept on disk goes below it
    progress_dir: Path  # the epoch's checkpoints
    questions: Sequence[tuple[str, str]]  # (source, question) of every turn of the run, in order
    episodic_k: int = 3  # the run setting: similar past turns retrieved
    redis_url: str | None = None
    chroma_url: str | None = None
    trajectory_factory: TrajectoryFactory | None = None
    embed: Callable[[str], list[float]] | None = None  # question -> vector (the partition's batch)
    # A registry model's answer to chat messages, for a memory that asks one (the summary's writer):
    # await acomplete(model key, messages, cell) -> reply text (a failed call raises); None: no gateway.
    acomplete: Callable[[str, list[dict[str, str]], Mapping[str, Any]], Awaitable[str]] | None = None
    context_mode: ContextMode = ContextMode.ANNOTATED  # what the memory is given (context_mode.py)
    history: History = History.MODEL  # whose answers it is handed (history.py): a store of its own
    cleanup: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def redis(self) -> Any:
        """A Redis client for the run (MEMSQL_REDIS_URL, else a private server), closed with the run."""
        from memsql_assets.lib.memory.redis_service import redis_connection

        return self.cleanup.enter_context(redis_connection(self.home, self.redis_url))


@runtime_checkable
class Memory(Protocol):
    """One condition's memory over one partition run (one epoch); module docstring."""

    visibility: Visibility
    uses_vectors: bool  # retrieve and persist want the question's vector
    blocking: bool  # retrieve or persist wait on I/O: the harness calls them off the event loop

    def open(self, ctx: MemoryContext) -> None: ...
    def reset(self, keep: set[str]) -> None: ...
    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval: ...
    def persist(self, payload: Payload) -> None: ...
    def forget(self, session_id: str) -> None: ...
    def end_wave(self, sessions: Sequence[str]) -> None: ...
    def commit(self) -> None: ...
    def identity(self) -> str | None: ...
    def size(self, session_id: str | None = None) -> StoreSize: ...
    def stored_turns(self) -> set[str] | None: ...
    def close(self) -> None: ...


class NoParams(Strict):
    """An implementation without parameters: any given is an error."""


class MemoryBase:
    """Defaults for everything but `retrieve` and `persist`: per-session visibility, no vectors,
    nothing to reset, forget, publish or commit. A subclass declares its parameters as `Params` (a
    pydantic model; the conditions file's `params` are validated by it) and gets them as `self.params`."""

    Params: ClassVar[type[BaseModel]] = NoParams
    visibility: Visibility = Visibility.SESSION
    uses_vectors: bool = False
    blocking: bool = False
    stateful: bool = True  # False: the memory keeps nothing (the runner skips its per-session work)
    # True: the memory retrieves trajectories of the trajectory store, so an agent turn is offered the
    # composite tools mined with that store (lib/trajectories/lookup.load_composites).
    offers_composites: bool = False

    def __init__(self, params: BaseModel | None = None):
        # Typed by each implementation's `Params`; Any here, so that a subclass reads its own fields.
        self.params: Any = params if params is not None else self.Params()

    def open(self, ctx: MemoryContext) -> None:
        self.ctx = ctx

    @property
    def context_mode(self) -> ContextMode:
        """What the partition gives the memory (context_mode.py); annotated before `open`."""
        ctx = getattr(self, "ctx", None)
        return ctx.context_mode if ctx is not None else ContextMode.ANNOTATED

    def reset(self, keep: set[str]) -> None:
        """Keep exactly the memory of the sessions `keep` (empty: forget everything)."""

    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        raise NotImplementedError

    async def aretrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        """`retrieve` on the event loop, or in a thread when the memory blocks on I/O."""
        if self.blocking:
            return await asyncio.to_thread(self.retrieve, turn, vector)
        return self.retrieve(turn, vector)

    def persist(self, payload: Payload) -> None:
        raise NotImplementedError

    def forget(self, session_id: str) -> None:
        """Drop one session's memory (before it is (re)run; after it, for per-session memory)."""

    def end_wave(self, sessions: Sequence[str]) -> None:
        """A wave of sessions has finished: their memory becomes visible to every later session."""

    def commit(self) -> None:
        """Make the finished sessions' memory durable (before their checkpoints are written)."""

    def identity(self) -> str | None:
        """A token that changes when the memory's server lost its data; None: no server."""
        return None

    def size(self, session_id: str | None = None) -> StoreSize:
        """What the memory holds now: one session's memory, or (None) everything. The harness records
        a per-session memory's size as each session ends, a shared one's after the partition."""
        return StoreSize()

    def stored_turns(self) -> set[str] | None:
        """The turns (`<session>#<turn>`) a shared memory holds durably, so that a resume can prove it
        still has what its checkpoints promise (else the partition is rebuilt); None: nothing to prove."""
        return None

    def close(self) -> None:
        """Release what `open` acquired beyond the context's cleanup stack."""


@contextlib.contextmanager
def opened(memory: Memory, ctx: MemoryContext) -> Iterator[Memory]:
    """`memory` opened on `ctx` and closed after, with everything it put on the context's cleanup stack."""
    with ctx.cleanup:
        memory.open(ctx)
        try:
            yield memory
        finally:
            memory.close()
