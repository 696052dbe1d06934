"""Histories: what a memory is told each earlier turn answered (docs/specification.md, "Histories").

- `model` (the paper's protocol, the default): the model's own SQL and its result. A turn the model
  got wrong stays in memory and the turns after it may fail with it: the cascade.
- `gold` (as SParC and CoSQL evaluate): the turn's ground-truth SQL and its result, whatever the
  model answered. EX with gold history minus EX with the model's own is the cascade of a model x
  condition, which the marts report.

The runner applies the choice where it hands a finished turn to the memory's `persist`, so every
memory, plug-ins included, gets it. A gold-history evaluation is a cell of its own in the request
store and publishes beside the model-history one, never over it (lib/paths.py results_root).
"""

from __future__ import annotations

from enum import StrEnum

from memsql_assets.lib.errors import MemsqlError


class History(StrEnum):
    """Whose answers to earlier turns a memory stores (module docstring)."""

    MODEL = "model"
    GOLD = "gold"


HISTORIES: tuple[str, ...] = tuple(h.value for h in History)


class HistoryError(MemsqlError):
    """A history other than model|gold: names the flag or field."""


def check_history(value: object, name: str = "history") -> History:
    """`value` as a History, else HistoryError naming `name` (the flag or field) and the choices."""
    if value not in HISTORIES:
        raise HistoryError(f"{name} {value!r}: expected one of {'|'.join(HISTORIES)}")
    return History(str(value))
