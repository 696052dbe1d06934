"""SEC EDGAR annual financials (source `sec_edgar`): its schema (schema.py), the embedded builder
(embedded.py) and the real-data adapter (real.py)."""

from memsql_assets.lib.sources.sec.embedded import build_embedded
from memsql_assets.lib.sources.sec.real import build_real, fiscal_year_of

__all__ = ["build_embedded", "build_real", "fiscal_year_of"]
