"""What a source's guidance (the prompt's A.2–A.4 lines every agent reads) says about its schema.

The synthetic-question grammar uses these facts the way an analyst new to the database would: a
derived amount the owners define ("Sales totals come from [Order Details] using …"), the date that
yearly questions of that amount use, what a row is called by ("Customer names are stored in
Customers.CompanyName", "Region names are in district.A3") and a join chain to follow ("loan joins
to account, then disp where type='OWNER', then client, then district"). Only these sentence shapes
are read; every other line is ignored, and every table and column found must exist in the schema.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memsql_assets.lib.sources.config import PREFIX
from memsql_assets.lib.sources.guidance import SOURCE_GUIDANCE

_NAME = r"(\[[^\]]+\]|\w+)"
_DERIVED = re.compile(rf"^(?P<name>\w+) totals come from {_NAME} using (?P<expr>.+?)\.?$", re.I)
_YEARLY = re.compile(r"^For yearly (?P<name>\w+) questions, use (?P<table>\w+)\.(?P<column>\w+)\b", re.I)
_LABEL = re.compile(
    r"^(?P<noun>\w+) names (?:are stored in|live in|are in) (?P<table>\w+)\.(?P<column>\w+)", re.I
)
_JOINS = re.compile(r"^(?P<chain>\w+(?:\.\w+)? joins to .+?)\.?$", re.I)
_HOP = re.compile(
    r"^(?P<table>\w+)(?:\.\w+)?(?:\s+by\s+\w+)?(?:\s+where\s+(?P<col>\w+)\s*=\s*['’](?P<val>[^'’]*)['’])?$"
)


@dataclass(frozen=True)
class DerivedMeasure:
    name: str  # "sales"
    table: str
    expr: str  # over the table's bare column names
    date: tuple[str, str] | None = None  # (table, column) that yearly questions of it use


@dataclass(frozen=True)
class Hop:
    table: str
    condition: tuple[str, str] | None = None  # (column, value) the join restricts this table to


@dataclass(frozen=True)
class Guidance:
    measures: tuple[DerivedMeasure, ...] = ()
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)  # table -> (column, noun)
    chains: tuple[tuple[Hop, ...], ...] = ()


def _bare(name: str) -> str:
    return name[1:-1] if name.startswith("[") else name


def parse_guidance(lines: Sequence[str]) -> Guidance:
    measures: list[DerivedMeasure] = []
    dates: dict[str, tuple[str, str]] = {}
    labels: dict[str, tuple[str, str]] = {}
    chains: list[tuple[Hop, ...]] = []
    for line in lines:
        text = line.strip()
        if m := _DERIVED.match(text):
            measures.append(DerivedMeasure(m["name"].lower(), _bare(m[2]), m["expr"].strip()))
        elif m := _YEARLY.match(text):
            dates[m["name"].lower()] = (m["table"], m["column"])
        elif m := _LABEL.match(text):
            labels[m["table"]] = (m["column"], m["noun"].lower())
        elif m := _JOINS.match(text):
            head, _, rest = m["chain"].partition(" joins to ")
            hops = [_HOP.match(part.strip()) for part in [head, *re.split(r",\s*then\s+", rest)]]
            if all(hops):
                chains.append(
                    tuple(
                        Hop(h["table"], (h["col"], h["val"]) if h["col"] else None)
                        for h in hops
                        if h is not None
                    )
                )
    return Guidance(
        tuple(DerivedMeasure(d.name, d.table, d.expr, dates.get(d.name)) for d in measures),
        labels,
        tuple(chains),
    )


def source_guidance(db: str) -> Guidance:
    """The parsed guidance of a source database (empty for a database without guidance)."""
    return parse_guidance(SOURCE_GUIDANCE.get(PREFIX.get(db, ""), ()))
