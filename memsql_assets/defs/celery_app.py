"""The Celery app of memsql's workers (scale-out profile, docs/scale_out.md):

    celery -A memsql_assets.defs.celery_app worker -Q "$MEMSQL_CELERY_QUEUE" -n w1@%h

dagster-celery's step task on an app built exactly as the executor builds its own (defs/scale_out.py).
"""

import memsql_assets  # noqa: F401  (first: the offline switches, before a step imports litellm)
from memsql_assets.defs.scale_out import celery_app

app = celery_app()
