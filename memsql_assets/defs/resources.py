"""Resources shared by every domain: where data lives, which sources to build, how big a benchmark."""

from pathlib import Path

import dagster as dg
from pydantic import Field

from memsql_assets.lib.benchmark.invariants import SESSIONS_BY_STRATUM, TOTAL_SESSIONS
from memsql_assets.lib.benchmark.sample import SampleSizeError, check_in_range
from memsql_assets.lib.models.registry import Registry
from memsql_assets.lib.paths import memsql_home
from memsql_assets.lib.sources.config import SourceSpec, load_sources, sources_file

BENCHMARK_SESSIONS_ENV = "MEMSQL_BENCHMARK_SESSIONS"


def benchmark_sessions_env() -> str:
    """The size setting's environment variable as set (stripped; "" when unset)."""
    return (dg.EnvVar(BENCHMARK_SESSIONS_ENV).get_value() or "").strip()


class MemsqlSettings(dg.ConfigurableResource):
    """Where the platform keeps its data, which source databases it builds and how big a benchmark."""

    home: str = Field(default="", description="Data directory; empty: $MEMSQL_HOME, else .memsql/.")
    sources_file: str = Field(
        default="", description="Sources declaration; empty: $MEMSQL_SOURCES_FILE, else sources/sources.yaml."
    )
    benchmark_sessions: int = Field(
        default=0,
        description="Sessions of the paper benchmark: 0: $MEMSQL_BENCHMARK_SESSIONS, else all 300 (1,400 turns); "
        "N (9 to 300): the stratified sample of N sessions that `memsql eval --sessions N` takes from them, "
        "built by the same code, for trying a change quickly. Its checks expect that sample's counts.",
    )

    @property
    def home_path(self) -> Path:
        return Path(self.home).resolve() if self.home else memsql_home()

    def benchmark_size(self) -> int | None:
        """The configured number of paper-benchmark sessions; None for the whole benchmark. A value that
        is not a whole number from one session per source x tier to all of them is an error naming it."""
        if self.benchmark_sessions:
            value, name = self.benchmark_sessions, "memsql.benchmark_sessions"
        else:
            raw, name = benchmark_sessions_env(), BENCHMARK_SESSIONS_ENV
            if not raw:
                return None
            try:
                value = int(raw)
            except ValueError:
                raise SampleSizeError(f"{name} {raw!r}: expected a whole number of sessions") from None
        check_in_range(value, len(SESSIONS_BY_STRATUM), TOTAL_SESSIONS, name=name)
        return None if value == TOTAL_SESSIONS else value

    def source_specs(self) -> dict[str, SourceSpec]:
        return load_sources(Path(self.sources_file) if self.sources_file else sources_file())


def model_api_keys(registry: Registry) -> dict[str, str]:
    """The API keys the registry names, each read as `dg.EnvVar(<api_key_env>)` when called (a key
    set after the code location loaded counts). Unset keys are left out: lib/ reports that model
    unavailable instead of failing every run, and never reads the process environment itself."""
    names = sorted({e.api_key_env for e in registry.entries.values() if e.api_key_env})
    return {name: value for name in names if (value := dg.EnvVar(name).get_value())}
