"""Shared fixtures: embedded source databases and a generated benchmark, built once per session."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import memsql_assets  # noqa: F401  (first: sets the offline switches before any test imports litellm)
import memsql_assets.lib.reference  # noqa: F401  (registers the built-in models with the gateway)
from memsql_assets.lib.benchmark.generate import Session
from memsql_assets.lib.benchmark.pipeline import build_measured_sessions, extract_all_profiles
from memsql_assets.lib.paths import EMBEDDINGS_CACHE_ENV
from memsql_assets.lib.sources.build import build_source
from memsql_assets.lib.sources.config import SOURCE_NAMES, load_sources

REPO = Path(__file__).resolve().parents[1]
# The real public data (layout: docs/data_sources.md): MEMSQL_REAL_DATA, by default `../shared/data`
# beside the repository, where this project's machines keep a copy. Tests that need it skip without it.
REAL_DATA = Path(os.environ.get("MEMSQL_REAL_DATA") or REPO.parent / "shared" / "data").resolve()
# The folders of the packages' unit tests: `-m quick` selects their tests that are neither slow nor
# integration tests, and the tests marked quick themselves (one partition through Dagster).
UNIT_TEST_DIRS = ("unit", "evaluation", "trajectories", "sandbox", "models", "memory", "viewer", "agent")


def pytest_collection_modifyitems(config, items):
    tests = Path(__file__).resolve().parent
    for item in items:
        folder = item.path.resolve().relative_to(tests).parts[0]
        if folder in UNIT_TEST_DIRS and not any(item.get_closest_marker(m) for m in ("slow", "integration")):
            item.add_marker(pytest.mark.quick)


@pytest.fixture(scope="session")
def embedded_dbs(tmp_path_factory) -> dict[str, Path]:
    """The three embedded source databases, built with the default seeds of sources/sources.yaml."""
    out = tmp_path_factory.mktemp("embedded_sources")
    specs = load_sources(environ={})
    return {name: build_source(specs[name], out / f"{name}.sqlite").path for name in SOURCE_NAMES}


@pytest.fixture(scope="session")
def wide_dbs(tmp_path_factory) -> dict[str, Path]:
    """The wide variant of the three embedded source databases (sources/sources.yaml `variant: wide`)."""
    out = tmp_path_factory.mktemp("wide_sources")
    specs = load_sources(environ={})
    return {
        name: build_source(dataclasses.replace(specs[name], variant="wide"), out / f"{name}.sqlite").path
        for name in SOURCE_NAMES
    }


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


@pytest.fixture(scope="session")
def history_checks() -> Callable[[list[dict]], None]:
    """`history_checks(turns)`: the checks an extended benchmark's analysts' histories pass, on the
    embedded data and on the real data alike (docs/specification.md section 6): its GX suites (every
    cross-session turn answerable from its analyst's earlier sessions and not from its own), at least
    240 cross-session turns with every kind in every source, their mean guess_rate at most the floor,
    each history session in a later wave than the one it continues at W up to 11, and samples that
    keep every history whole."""
    from collections import Counter

    from memsql_assets.lib.benchmark.sample import sample_sessions
    from memsql_assets.lib.harness.schedule import twins_reachable_pct
    from memsql_assets.lib.quality import frames
    from memsql_assets.lib.quality.gx_suites import validate
    from memsql_assets.lib.vocabulary import CROSS_SESSION_TAGS, GUESS_FLOOR_MAX_PCT, REPORT_SOURCES

    def check(turns: list[dict]) -> None:
        for frame, suite, key in (
            ("extended_turns_frame", "extended_turns", "turn_id"),
            ("sessions_frame", "extended_sessions", "session_id"),
        ):
            report = validate(getattr(frames, frame)(turns), suite, key)
            assert report.success, report.failures
        cross = [t for t in turns if t["tag"] in CROSS_SESSION_TAGS]
        assert len(cross) >= 240 and all(t["memory_critical"] for t in cross)
        assert {(t["source"], t["tag"]) for t in cross} == {(s, g) for s in REPORT_SOURCES for g in CROSS_SESSION_TAGS}
        assert 100 * sum(t["guess_rate"] for t in cross) / len(cross) <= GUESS_FLOOR_MAX_PCT
        continued = [{**t, "twin_session_id": t["continues_session_id"]} for t in turns]
        assert all(twins_reachable_pct(continued, w) == 100.0 for w in (1, 4, 8, 11))
        analyst_of = {t["session_id"]: t["analyst"] for t in turns}
        sessions_of = Counter(analyst_of.values())
        assert 3 * sum(n for n in sessions_of.values() if n > 1) >= len(analyst_of)
        for n in (10, 40):
            taken = Counter(analyst_of[sid] for sid in sample_sessions(turns, n))
            assert all(k == sessions_of[a] for a, k in taken.items()) and max(taken.values()) == 4

    return check


@pytest.fixture(scope="session")
def small_home(tmp_path_factory, embedded_dbs, embedded_sessions):
    """A data directory with the embedded sources and every 10th session of the benchmark (30 sessions,
    all sources and tiers, incl. ten-turn ones): partitions over it take seconds, not minutes."""
    from memsql_assets.lib.harness.homes import build_home, every_kth

    return build_home(tmp_path_factory.mktemp("small_home"), embedded_dbs, every_kth(embedded_sessions, 10))


TRAJECTORY_BUDGET = 12  # synthetic questions of a test home's trajectory store: enough for E to retrieve from


def build_trajectory_store(home: Path, budget: int = TRAJECTORY_BUDGET) -> Path:
    """`home` with its own trajectory store and composite tools (what E and E_prompt read), built as
    the trajectory_store asset builds it, leaving out the home's benchmark questions."""
    from memsql_assets.lib.benchmark.store import read_turns
    from memsql_assets.lib.paths import benchmark_dir
    from memsql_assets.lib.trajectories.store import StoreSettings, build_home_store

    own = frozenset(t["question"] for t in read_turns(benchmark_dir(home)))
    build_home_store(home, StoreSettings(budget=budget), own)
    return home


@pytest.fixture(scope="session")
def trajectory_home(small_home, tmp_path_factory) -> Callable[..., Path]:
    """`trajectory_home(name, dbs=None)`: a copy of small_home without its results, over the source
    databases `dbs` (default: its own), with a trajectory store built over them (build_trajectory_store)."""

    def make(name: str, dbs: dict[str, Path] | None = None) -> Path:
        from memsql_assets.lib.paths import source_db_path

        home = tmp_path_factory.mktemp(name) / "home"
        shutil.copytree(small_home, home, ignore=shutil.ignore_patterns("results", "redis", "dbt", "report", "requests"))
        for source, path in (dbs or {}).items():
            shutil.copyfile(path, source_db_path(home, source))
        return build_trajectory_store(home)

    return make


def _shared_root(tmp_path_factory) -> Path:
    """The test session's folder that every pytest-xdist worker sees."""
    root = tmp_path_factory.getbasetemp()
    return root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root  # the workers' folders are siblings


@pytest.fixture(scope="session", autouse=True)
def shared_embeddings(tmp_path_factory) -> Iterator[Path]:
    """One embedding store for every home the suite builds, in both workers and their subprocesses
    (MEMSQL_EMBEDDINGS_CACHE, docs/guide.md): a batch such as the extended benchmark's questions is
    embedded once, not once per home."""
    path = _shared_root(tmp_path_factory) / "embeddings"
    saved = os.environ.get(EMBEDDINGS_CACHE_ENV)
    os.environ[EMBEDDINGS_CACHE_ENV] = str(path)
    yield path
    if saved is None:
        os.environ.pop(EMBEDDINGS_CACHE_ENV, None)
    else:
        os.environ[EMBEDDINGS_CACHE_ENV] = saved


def built_once(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """`build(path)` once per test session, shared by the pytest-xdist workers: the first worker to
    ask builds it under a lock, the others wait and reuse it. Tests copy it before writing into it."""
    root = _shared_root(tmp_path_factory)
    path, done = root / name, root / f"{name}.built"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(path, ignore_errors=True)
            build(path)
            done.touch()
    return path


MAIN_JOB_CONSOLE = "main_job_home.console.json"  # what the run that built main_job_home printed, beside it


@pytest.fixture(scope="session")
def main_job_home(tmp_path_factory) -> Path:
    """A home after `memsql run --skip-eval` (the main job on the embedded defaults, through the CLI),
    its paper benchmark built at SMALL_BENCHMARK_SESSIONS sessions; built once per test session: copy it
    with `copy_built_home` before use, and run the CLI on the copy with `small_env`."""
    from tests.integration.memsql_cli import memsql, small_env

    def run_main_job(home: Path) -> None:
        proc = memsql(small_env(home), "run", "--skip-eval")
        console = {"stdout": proc.stdout, "stderr": proc.stderr}
        home.with_name(MAIN_JOB_CONSOLE).write_text(json.dumps(console), encoding="utf-8")

    return built_once(tmp_path_factory, "main_job_home", run_main_job)


@pytest.fixture(scope="session")
def main_job_console(main_job_home) -> subprocess.CompletedProcess:
    """What `memsql run --skip-eval` printed while it built main_job_home: command 1's console on a
    cold home (its stages on stderr, its summary on stdout)."""
    console = json.loads(main_job_home.with_name(MAIN_JOB_CONSOLE).read_text(encoding="utf-8"))
    return subprocess.CompletedProcess(["memsql", "run", "--skip-eval"], 0, console["stdout"], console["stderr"])


def copy_built_home(template: Path, home: Path) -> Path:
    """A copy of a built home (its data and Dagster instance), without the private Redis's runtime files."""
    shutil.copytree(template, home, ignore=shutil.ignore_patterns("redis", "logs"))
    return home
