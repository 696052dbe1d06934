"""The reference models (docs/reference_models.md): model-free instruments that read the agent's
prompts, a layer above the gateway they answer through. Importing this package registers them with
the gateway (lib/models/builtin_serving.py)."""

import memsql_assets.lib.reference.builtins  # noqa: F401  (registration is its import)
