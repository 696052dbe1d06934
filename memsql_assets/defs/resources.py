"""Resources shared by every domain: where data lives and which sources to build."""

from pathlib import Path

import dagster as dg

from memsql_assets.lib.paths import memsql_home
from memsql_assets.lib.sources.config import SourceSpec, load_sources, sources_file


class MemsqlSettings(dg.ConfigurableResource):
    """`home`: the data directory (MEMSQL_HOME, default .memsql/); `sources_file`: sources/sources.yaml."""

    home: str = ""
    sources_file: str = ""

    @property
    def home_path(self) -> Path:
        return Path(self.home).resolve() if self.home else memsql_home()

    def source_specs(self) -> dict[str, SourceSpec]:
        return load_sources(Path(self.sources_file) if self.sources_file else sources_file())
