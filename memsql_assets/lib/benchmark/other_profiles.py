"""Each variant's ground truths as they read with another session's profile, written with the benchmark.

Contamination by provenance (lib/evaluation/contamination.py) asks: does a failed turn's result
equal its ground truth as it reads in the session whose episode supplied a value? That is the turn's
variant walked with the other session's profile. The benchmark writes those walks once, when it is
built, to `other_profile_sql.parquet` beside its turns: one row per variant, session of the same
source, and turn, whose SQL is the variant's turn filled from that session's profile. Scoring reads
them from there, so it never instantiates templates: the contamination of a partition is a function
of the benchmark it evaluated, whatever the templates say today.

A variant's walk stops at the first turn a profile cannot fill (another tier's profile query lacks
a key): those turns have no row, and no other-profile ground truth.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from memsql_assets.lib.benchmark.extended.load import load_extended_template
from memsql_assets.lib.benchmark.extended.template import EXTENDED_DIR
from memsql_assets.lib.benchmark.extended.walk import instantiate_extended
from memsql_assets.lib.benchmark.generate import Session
from memsql_assets.lib.benchmark.generate import walk as walk_variant
from memsql_assets.lib.benchmark.templates import TEMPLATES_DIR, load_tier_template

OTHER_PROFILES_FILE = "other_profile_sql.parquet"
OTHER_PROFILES_SCHEMA = pa.schema(
    [
        ("variant_id", pa.string()),
        ("turn_index", pa.int32()),
        ("session_id", pa.string()),  # the session whose profile filled the variant
        ("sql", pa.string()),
    ]
)

# (source name, variant id, profile) -> the variant's turns' SQL, as far as the profile fills them
Walk = Callable[[str, str, Mapping[str, Any]], list[str]]


def other_profile_table(sessions: Iterable[Session], walk: Walk) -> pa.Table:
    """Every variant used by a source's sessions, walked with each session's profile of that source."""
    by_source: dict[str, list[Session]] = {}
    for s in sessions:
        by_source.setdefault(s.source_name, []).append(s)
    columns: dict[str, list[Any]] = {f.name: [] for f in OTHER_PROFILES_SCHEMA}
    for source, group in by_source.items():
        for variant_id in sorted({s.variant_id for s in group}):
            for other in group:
                for index, sql in enumerate(walk(source, variant_id, other.profile), start=1):
                    for name, value in zip(columns, (variant_id, index, other.session_id, sql), strict=True):
                        columns[name].append(value)
    return pa.table(columns, schema=OTHER_PROFILES_SCHEMA)


def paper_walk(directory: Path = TEMPLATES_DIR) -> Walk:
    variants = {}

    def walk(source: str, variant_id: str, profile: Mapping[str, Any]) -> list[str]:
        if (source, variant_id) not in variants:
            for tier in (1, 2, 3):
                for v in load_tier_template(source, tier, directory).variants:
                    variants[source, v.id] = v
        out = []
        with contextlib.suppress(KeyError):  # the filled turns before a gap count
            for turn in walk_variant(variants[source, variant_id], dict(profile)):
                out.append(turn.sql)
        return out

    return walk


def extended_walk(directory: Path = EXTENDED_DIR) -> Walk:
    variants = {}

    def walk(source: str, variant_id: str, profile: Mapping[str, Any]) -> list[str]:
        if source not in variants:
            variants[source] = {v.id: v for v in load_extended_template(source, directory).variants}
        try:  # the wording never changes the SQL; a correction's value is the profile's own
            return [r.sql for r in instantiate_extended(variants[source][variant_id], dict(profile), 0)]
        except KeyError:
            return []

    return walk
