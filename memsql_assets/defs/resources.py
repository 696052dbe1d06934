"""Resources shared by every domain: where data lives and which sources to build."""

from pathlib import Path

import dagster as dg
from pydantic import Field

from memsql_assets.lib.models.registry import Registry
from memsql_assets.lib.paths import memsql_home
from memsql_assets.lib.sources.config import SourceSpec, load_sources, sources_file


class MemsqlSettings(dg.ConfigurableResource):
    """Where the platform keeps its data and which source databases it builds."""

    home: str = Field(default="", description="Data directory; empty: $MEMSQL_HOME, else .memsql/.")
    sources_file: str = Field(
        default="", description="Sources declaration; empty: $MEMSQL_SOURCES_FILE, else sources/sources.yaml."
    )

    @property
    def home_path(self) -> Path:
        return Path(self.home).resolve() if self.home else memsql_home()

    def source_specs(self) -> dict[str, SourceSpec]:
        return load_sources(Path(self.sources_file) if self.sources_file else sources_file())


def model_api_keys(registry: Registry) -> dict[str, str]:
    """The API keys the registry names, each read as `dg.EnvVar(<api_key_env>)` when called (a key
    set after the code location loaded counts). Unset keys are left out: lib/ reports that model
    unavailable instead of failing every run, and never reads the process environment itself."""
    names = sorted({e.api_key_env for e in registry.entries.values() if e.api_key_env})
    return {name: value for name in names if (value := dg.EnvVar(name).get_value())}
