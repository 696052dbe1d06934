"""One synthetic question of the trajectory store: its record and its content-addressed id."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from memsql_assets.lib.trajectories.leakage import normalize_question


@dataclass(frozen=True)
class SyntheticQuestion:
    id: str
    db: str
    text: str
    sql: str
    template: str
    tables: tuple[str, ...]
    columns: tuple[tuple[str, str], ...] = ()
    values: tuple[tuple[str, str, str], ...] = ()  # (table, column, value as text) filters
    naive_sql: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "db": self.db,
            "text": self.text,
            "sql": self.sql,
            "template": self.template,
            "tables": list(self.tables),
            "columns": [list(c) for c in self.columns],
            "values": [list(v) for v in self.values],
            "naive_sql": self.naive_sql,
        }

    @classmethod
    def from_json(cls, d: dict) -> SyntheticQuestion:
        return cls(
            id=d["id"],
            db=d["db"],
            text=d["text"],
            sql=d["sql"],
            template=d["template"],
            tables=tuple(d.get("tables", ())),
            columns=tuple(tuple(c) for c in d.get("columns", ())),  # type: ignore[misc]
            values=tuple(tuple(v) for v in d.get("values", ())),  # type: ignore[misc]
            naive_sql=d.get("naive_sql"),
        )


def question_id(db: str, text: str) -> str:
    """Content-addressed (stable under exclusions and budget changes); safe as a file name."""
    digest = hashlib.sha256(f"{db}|{normalize_question(text)}".encode()).hexdigest()
    return f"{db}-{digest[:12]}"
