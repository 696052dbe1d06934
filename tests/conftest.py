"""Shared fixtures: embedded source databases and a generated benchmark, built once per session."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

import memsql_assets  # noqa: F401  (first: sets the offline switches before any test imports litellm)
from memsql_assets.lib.benchmark.generate import Session
from memsql_assets.lib.benchmark.pipeline import build_measured_sessions, extract_all_profiles
from memsql_assets.lib.sources.build import build_source
from memsql_assets.lib.sources.config import SOURCE_NAMES, load_sources

REPO = Path(__file__).resolve().parents[1]
# The real public data (layout: docs/data_sources.md): MEMSQL_REAL_DATA, by default `../shared/data`
# beside the repository, where this project's machines keep a copy. Tests that need it skip without it.
REAL_DATA = Path(os.environ.get("MEMSQL_REAL_DATA") or REPO.parent / "shared" / "data").resolve()
# The folders of the packages' unit tests: `-m quick` selects their tests that are neither slow nor
# integration tests, and the tests marked quick themselves (one partition through Dagster).
UNIT_TEST_DIRS = ("unit", "evaluation", "trajectories", "sandbox", "models", "memory", "viewer", "agent")


# Seconds each test file took in a whole run (scripts/test_durations.py writes it from a JUnit XML
# report): the files run longest first, so that with `-n 2 --dist loadfile` the short ones fill the
# gaps at the end instead of one long file running alone.
DURATIONS_FILE = Path(__file__).resolve().parent / "durations.json"


def pytest_configure(config):
    # xdist orders the files by their number of tests unless told not to; the order here is better.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    tests = Path(__file__).resolve().parent
    for item in items:
        folder = item.path.resolve().relative_to(tests).parts[0]
        if folder in UNIT_TEST_DIRS and not any(item.get_closest_marker(m) for m in ("slow", "integration")):
            item.add_marker(pytest.mark.quick)
    seconds = json.loads(DURATIONS_FILE.read_text()) if DURATIONS_FILE.exists() else {}
    # a stable sort: a file's tests keep their order; files not in the list (new ones) run last
    items.sort(key=lambda item: -seconds.get(item.path.resolve().relative_to(tests.parent).as_posix(), 0.0))


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `build(folder)` once per test run and shared by all pytest-xdist
    workers: the first worker to ask builds it under a file lock in the run's temporary root, the
    others wait for it. Tests only read it; a test that changes a home works on a copy."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "built_once"
    root.mkdir(exist_ok=True)
    folder, done = root / name, root / f"{name}.done"
    with FileLock(root / f"{name}.lock"):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed build left
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def build_once(tmp_path_factory) -> Callable[[str, Callable[[Path], None]], Path]:
    """`build_once(name, build)`: `built_once` for this run."""
    return lambda name, build: built_once(tmp_path_factory, name, build)


def _build_embedded_dbs(out: Path) -> None:
    specs = load_sources(environ={})
    for name in SOURCE_NAMES:
        build_source(specs[name], out / f"{name}.sqlite")


@pytest.fixture(scope="session")
def embedded_dbs(tmp_path_factory) -> dict[str, Path]:
    """The three embedded source databases, built with the default seeds of sources/sources.yaml
    (once per run, read-only: tests open them read-only or copy them)."""
    out = built_once(tmp_path_factory, "embedded_sources", _build_embedded_dbs)
    return {name: out / f"{name}.sqlite" for name in SOURCE_NAMES}


@pytest.fixture(scope="session")
def embedded_profiles(embedded_dbs):
    return extract_all_profiles(embedded_dbs)


@pytest.fixture(scope="session")
def embedded_sessions(embedded_profiles, embedded_dbs) -> list[Session]:
    return build_measured_sessions(embedded_profiles, embedded_dbs)


@pytest.fixture(scope="session")
def embedded_turns(embedded_sessions) -> list[dict]:
    return [dict(t.__dict__) for s in embedded_sessions for t in s.turns]


@pytest.fixture(scope="session")
def shared_data():
    """`shared_data("northwind")` -> that path under REAL_DATA, or skip the test when it is absent."""

    def _path(*parts: str) -> Path:
        path = REAL_DATA.joinpath(*parts)
        if not path.exists():
            pytest.skip(f"real data not available at {path} (set MEMSQL_REAL_DATA)")
        return path

    return _path


def _build_small_home(home: Path, embedded_dbs: dict[str, Path], embedded_sessions: list[Session]) -> None:
    from memsql_assets.lib.benchmark.store import write_benchmark
    from memsql_assets.lib.memory.chroma import chroma_client
    from memsql_assets.lib.memory.semantic import seed_semantic_memory
    from memsql_assets.lib.paths import benchmark_dir, source_db_path

    for name, path in embedded_dbs.items():
        target = source_db_path(home, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    subset = [s for i, s in enumerate(embedded_sessions) if i % 10 == 0]
    write_benchmark(benchmark_dir(home), subset)
    seed_semantic_memory(chroma_client(home))


@pytest.fixture(scope="session")
def small_home_built(build_once, request) -> Path:
    """A data directory with the embedded sources and every 10th session of the benchmark (30 sessions,
    all sources and tiers, incl. ten-turn ones), built once per run: read it, never write into it."""

    def build(home: Path) -> None:
        # requested only here: a worker that finds the home built never builds the sessions
        _build_small_home(home, request.getfixturevalue("embedded_dbs"), request.getfixturevalue("embedded_sessions"))

    return build_once("small_home", build)


@pytest.fixture(scope="session")
def small_home(tmp_path_factory, small_home_built) -> Path:
    """This worker's copy of `small_home_built`, which its tests write into: partitions over it take
    seconds, not minutes."""
    home = tmp_path_factory.mktemp("small_home")
    shutil.copytree(small_home_built, home, dirs_exist_ok=True)
    return home
