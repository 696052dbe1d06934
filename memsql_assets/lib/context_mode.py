"""Context modes: what a condition's memory is given of the benchmark (docs/specification.md, "Context modes").

- `annotated` (the paper's, §5.5): each stored turn carries its annotated `state_updates`, the memory
  is told the turn's referenced key names, and the harness resolves those keys from the retrieved
  turns' annotations into the prompt's authoritative Resolved block. A memory is handed the answer key.
- `observed`: a memory sees only what the conversation showed: the question, the model's own SQL and
  its result preview. No key names, no annotated values, no Resolved block from annotations; a memory
  may offer its own extraction (lib/sql/filters.py). The grader still scores with the annotations.

Each benchmark has its default (vocabulary.BENCHMARK_CONTEXT_MODES); a condition may name its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import Any, NoReturn

from memsql_assets.lib.errors import MemsqlError


class ContextMode(StrEnum):
    """What a memory is given of each turn (module docstring)."""

    ANNOTATED = "annotated"
    OBSERVED = "observed"


CONTEXT_MODES: tuple[str, ...] = tuple(m.value for m in ContextMode)


class WithheldKeysError(MemsqlError):
    """A memory read `MemoryTurn.referenced_keys` in observed mode."""


class WithheldKeys(Sequence[str]):
    """`MemoryTurn.referenced_keys` in observed mode: any read of it raises, naming the condition."""

    def __init__(self, condition: str):
        self.condition = condition

    def _refuse(self) -> NoReturn:
        raise WithheldKeysError(
            f"condition {self.condition} runs in {ContextMode.OBSERVED} context mode: MemoryTurn.referenced_keys "
            "is withheld (a memory sees only what the conversation showed); read the question and the stored "
            f"turns instead, or give the condition `context_mode: {ContextMode.ANNOTATED}`"
        )

    def __getitem__(self, index: Any) -> Any:
        self._refuse()

    def __len__(self) -> int:
        self._refuse()

    def __iter__(self) -> Iterator[str]:
        self._refuse()

    def __contains__(self, item: object) -> bool:
        self._refuse()

    def __bool__(self) -> bool:
        self._refuse()

    def __repr__(self) -> str:
        return f"WithheldKeys({self.condition!r})"
