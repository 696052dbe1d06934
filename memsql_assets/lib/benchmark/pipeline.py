"""The three generation phases end to end: profiles -> instantiated sessions -> verified benchmark."""

from __future__ import annotations

from pathlib import Path

from memsql_assets.lib.benchmark.extended.build import build_extended_sessions
from memsql_assets.lib.benchmark.extended.template import EXTENDED_DIR
from memsql_assets.lib.benchmark.generate import Session, generate_source
from memsql_assets.lib.benchmark.guess import attach_extended_guess_rates, attach_guess_rates
from memsql_assets.lib.benchmark.invariants import verify
from memsql_assets.lib.benchmark.profiles import Profile, extract_profiles
from memsql_assets.lib.benchmark.sample import sample_sessions
from memsql_assets.lib.benchmark.templates import TEMPLATES_DIR, check_profile_columns, load_tier_template
from memsql_assets.lib.sources.config import SOURCE_NAMES


def extract_all_profiles(
    db_paths: dict[str, Path], directory: Path = TEMPLATES_DIR
) -> dict[str, dict[str, list[Profile]]]:
    return {source: extract_profiles(source, db_paths[source], directory) for source in SOURCE_NAMES}


def build_sessions(
    profiles: dict[str, dict[str, list[Profile]]], directory: Path = TEMPLATES_DIR
) -> list[Session]:
    """Instantiate every source's tier templates and verify the SPEC §1 invariants (fail fast)."""
    sessions: list[Session] = []
    for source in SOURCE_NAMES:
        templates = {}
        for tier in (1, 2, 3):
            template = load_tier_template(source, tier, directory)
            pool = profiles[source].get(template.profile) or [{}]
            check_profile_columns(template, set(pool[0]))
            templates[tier] = template
        sessions.extend(generate_source(source, templates, profiles[source]))
    sessions.sort(key=lambda s: s.session_id)
    verify(t.__dict__ for s in sessions for t in s.turns)
    return sessions


def sized(sessions: list[Session], size: int | None) -> list[Session]:
    """The whole benchmark (`size` None), or the stratified sample of `size` sessions that
    `memsql eval --sessions` takes from it (sample.py)."""
    if size is None:
        return sessions
    rows = [{"session_id": s.session_id, "source": s.source, "tier": s.tier} for s in sessions]
    chosen = set(sample_sessions(rows, size, "benchmark sessions"))
    return [s for s in sessions if s.session_id in chosen]


def build_measured_sessions(
    profiles: dict[str, dict[str, list[Profile]]],
    db_paths: dict[str, Path],
    directory: Path = TEMPLATES_DIR,
    size: int | None = None,
) -> list[Session]:
    """build_sessions (the whole benchmark, its invariants verified), at `size` sessions (sized), with
    each memory-critical turn's guess_rate measured on the source databases."""
    built = sized(build_sessions(profiles, directory), size)
    return attach_guess_rates(built, profiles, db_paths, directory)


def build_measured_extended_sessions(
    profiles: dict[str, dict[str, list[Profile]]], db_paths: dict[str, Path], directory: Path = EXTENDED_DIR
) -> list[Session]:
    """build_extended_sessions, with each memory-critical turn's guess_rate measured as the paper's."""
    return attach_extended_guess_rates(build_extended_sessions(profiles, directory), profiles, db_paths, directory)
