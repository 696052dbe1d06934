"""Offline by construction: the switches that stop dependencies from phoning home (docs/architecture.md, "Stack and offline operation")."""

from __future__ import annotations

import os

OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "DBT_SEND_ANONYMOUS_USAGE_STATS": "False",
    "GX_ANALYTICS_ENABLED": "False",
    "ANONYMIZED_TELEMETRY": "False",
    "DAGSTER_DISABLE_TELEMETRY": "1",
    "MEM0_TELEMETRY": "False",  # mem0 (condition M0) sends PostHog events unless told not to
}


# Progress bars of model loading and metric computation clutter logs; memsql reports progress itself.
QUIET_ENV = {
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TQDM_DISABLE": "1",
}


def enforce_offline() -> None:
    for key, value in {**OFFLINE_ENV, **QUIET_ENV}.items():
        os.environ.setdefault(key, value)
