"""Names and files of the built-in models, shared by the registry (which validates entries and
checks availability) and lib/reference/builtins.py (which serves them), so neither imports the other."""

from __future__ import annotations

from pathlib import Path

from memsql_assets.lib.vocabulary import REFERENCE_AGENT, REFERENCE_MODELS

BUILTIN_PROVIDER = "memsql"
# The reference agent (REFERENCE_AGENT, reference_agent.py) answers requests that offer tools with tool calls only.
# Built-in model names per registry kind (litellm id `memsql/<name>`).
BUILTIN_NAMES: dict[str, tuple[str, ...]] = {
    "builtin": (*REFERENCE_MODELS, REFERENCE_AGENT),
    "local": ("smollm2-135m",),
}
# Provider param of the reference models (kind builtin): wait this long before answering.
SIMULATED_LATENCY_PARAM = "simulated_latency_ms"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# What transformers needs to load a GGUF on CPU.
LOCAL_MODEL_PACKAGES = ("torch", "transformers", "gguf", "accelerate")


def smollm2_weights_path(home: Path) -> Path:
    return Path(home) / "models" / "smollm2" / SMOLLM2_GGUF
