"""BIRD `financial` (the PKDD'99 Czech bank data): its schema (schema.py), the embedded builder
(embedded.py) and the real-data adapter (real.py)."""

from memsql_assets.lib.sources.bird.embedded import build_embedded
from memsql_assets.lib.sources.bird.real import build_real
from memsql_assets.lib.sources.bird.schema import BIRD_SCHEMA

__all__ = ["BIRD_SCHEMA", "build_embedded", "build_real"]
