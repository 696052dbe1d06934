"""memsql: a Dagster platform for a multi-turn text-to-SQL memory benchmark."""

from memsql_assets.lib.offline import enforce_offline

# Before any dependency is imported: litellm, HF, dbt, GX and Chroma read these at import time.
enforce_offline()
