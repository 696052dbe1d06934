"""A memory's own facts block (observed context mode): the filter values of the model's own earlier SQL.

In observed mode no Resolved block is built from the benchmark's annotations. A memory may instead
offer what it extracted from the turns it stored: for each compared expression (lib/sql/filters.py)
the most recent comparison the stored SQL made, with the turn that made it. These are the memory's
beliefs: the model's own SQL, so wrong wherever the model was wrong, and the header says so.
"""

from __future__ import annotations

from collections.abc import Iterable

from memsql_assets.lib.memory.protocol import PromptBlock
from memsql_assets.lib.memory.resolution import Payload
from memsql_assets.lib.sql.filters import filters

FACTS_HEADER = (
    "Facts the memory extracted from the earlier turns' SQL (its own reading of the assistant's SQL, "
    "not verified: wrong wherever that SQL was wrong):"
)


def facts_block(payloads: Iterable[Payload]) -> PromptBlock | None:
    """The latest comparison per expression in `payloads` (most recent first), or None if there is none."""
    lines: dict[str, str] = {}
    for p in payloads:
        for f in filters(p.get("sql")):
            lines.setdefault(
                f.label, f"- {f.sql} (session {p.get('session_id')}, turn {p.get('turn_index')})"
            )
    return PromptBlock(FACTS_HEADER, "\n".join(lines.values())) if lines else None
