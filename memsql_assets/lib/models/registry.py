"""The model registry: one YAML file lists every model the platform can evaluate.

Each entry is keyed by its Dagster partition key and says how to call the model through litellm,
how it reasons (a first-class field, turned into provider params here and nowhere else), how many
requests may be in flight, what it costs and where its API key lives (the env var's *name*: the
file never holds a secret). Validation is strict and every error names the file, the field path
(`models.<key>.<field>`) and what was expected, because a typo here silently changes which
experiment runs.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from memsql_assets.lib.errors import ConfigError, MemsqlError
from memsql_assets.lib.paths import REPO_ROOT, memsql_home

MODELS_FILE_ENV = "MEMSQL_MODELS_FILE"
DEFAULT_MODELS_FILE = REPO_ROOT / "models.yaml"

KINDS = ("api", "builtin", "local")
REASONING_TYPES = ("none", "default", "enabled", "adaptive")
EFFORTS = ("low", "medium", "high")
BUILTIN_PROVIDER = "memsql"
# Built-in (kind builtin/local) model names served by memsql_assets.lib.models.builtins.
BUILTIN_NAMES = {"builtin": ("gold", "paraphrase", "recall-probe"), "local": ("smollm2-135m",)}

# What transformers needs to load a GGUF on CPU (STACK.md "A real local LLM").
LOCAL_MODEL_PACKAGES = ("torch", "transformers", "gguf", "accelerate")
REQUIRED_FIELDS = ("litellm_model", "kind", "reasoning", "max_concurrency", "price_per_mtok", "enabled")
OPTIONAL_FIELDS = ("provider_params", "api_key_env", "temperature", "description")
# Params with a first-class field of their own (or that are secrets): never in provider_params.
RESERVED_PARAMS = {
    "thinking": "reasoning",
    "reasoning_effort": "reasoning",
    "output_config": "reasoning",
    "temperature": "temperature",
    "model": "litellm_model",
    "messages": "(the agent's prompt)",
    "num_retries": "(the gateway's retry policy)",
    "max_retries": "(the gateway's retry policy)",
    "metadata": "(the gateway's turn context)",
    "mock_response": "(tests only)",
}
PARTITION_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
ENV_NAME_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
SECRET_NAME_RE = re.compile(r"key|token|secret|authorization|password|credential", re.IGNORECASE)
NON_SECRET_NAMES = frozenset(
    {"max_tokens", "budget_tokens", "max_completion_tokens", "max_output_tokens", "top_k"}
)


def is_secret_name(name: str) -> bool:
    """A param/header name that may carry a credential (shared with the request store's scrubber)."""
    return name.lower() not in NON_SECRET_NAMES and bool(SECRET_NAME_RE.search(name))


@dataclass(frozen=True)
class Reasoning:
    """How a model reasons. `none`: nothing is sent (the model is not asked to think).
    `default`: nothing is sent either, the provider's default applies (GPT-5 reasons by default).
    `enabled`: Anthropic extended thinking with a token budget.
    `adaptive`: Claude 4.6-style adaptive thinking at an effort level; litellm 1.110.2 expresses it
    as `reasoning_effort=<effort>`, which it maps to `thinking={"type": "adaptive"}` +
    `output_config={"effort": <effort>}` for adaptive-thinking models (checked in its Anthropic
    transformation and cost map)."""

    type: str = "none"
    budget_tokens: int | None = None
    effort: str | None = None

    def litellm_params(self) -> dict[str, Any]:
        if self.type == "enabled":
            return {"thinking": {"type": "enabled", "budget_tokens": self.budget_tokens}}
        if self.type == "adaptive":
            return {"reasoning_effort": self.effort}
        return {}


@dataclass(frozen=True)
class ModelEntry:
    key: str
    litellm_model: str
    kind: str
    reasoning: Reasoning
    max_concurrency: int
    price_input_per_mtok: float
    price_output_per_mtok: float
    enabled: bool
    provider_params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    api_key_env: str | None = None
    temperature: float | None = None
    description: str = ""

    @property
    def builtin_name(self) -> str | None:
        """`gold`, `recall-probe`, `smollm2-135m` for built-ins; None for API models."""
        return self.litellm_model.split("/", 1)[1] if self.kind != "api" else None

    def call_params(self) -> dict[str, Any]:
        """Everything passed to litellm besides model/messages/secrets: part of the request key."""
        params = dict(self.provider_params)
        params.update(self.reasoning.litellm_params())
        if self.temperature is not None:
            params["temperature"] = self.temperature
        return params

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Registry prices × tokens: no remote cost map, so costs are reproducible offline."""
        return (
            prompt_tokens * self.price_input_per_mtok + completion_tokens * self.price_output_per_mtok
        ) / 1e6


@dataclass(frozen=True)
class Registry:
    path: Path
    entries: Mapping[str, ModelEntry]

    def keys(self) -> list[str]:
        return list(self.entries)

    def enabled_keys(self) -> list[str]:
        """Enabled entries in file order (the order the sensor adds partitions)."""
        return [k for k, e in self.entries.items() if e.enabled]

    def get(self, key: str) -> ModelEntry:
        try:
            return self.entries[key]
        except KeyError:
            raise MemsqlError(
                f"{self.path}: no model '{key}' (registered: {', '.join(self.entries) or 'none'})"
            ) from None

    def available(
        self, key: str, environ: Mapping[str, str] | None = None, home: Path | None = None
    ) -> tuple[bool, str]:
        """Whether `key` can be called now, and if not, what the user must do. Never raises for a
        registered key: a missing API key or missing weights is a state to report, not a crash."""
        entry = self.get(key)
        env = os.environ if environ is None else environ
        if entry.kind == "api":
            if entry.api_key_env and not env.get(entry.api_key_env):
                return False, f"set {entry.api_key_env}"
            return True, "ok"
        if entry.kind == "local":
            from memsql_assets.lib.models.builtins import smollm2_weights_path

            problems = []
            weights = smollm2_weights_path(home or memsql_home())
            if not weights.exists():
                problems.append(f"model weights missing at {weights}: run `memsql models fetch smollm2`")
            missing = [m for m in LOCAL_MODEL_PACKAGES if importlib.util.find_spec(m) is None]
            if missing:
                problems.append(
                    f"python packages missing: {', '.join(missing)} (pip install {' '.join(missing)})"
                )
            return (False, "; ".join(problems)) if problems else (True, "ok")
        return True, "ok"


def default_models_file() -> Path:
    env = os.environ.get(MODELS_FILE_ENV)
    return Path(env).expanduser() if env else DEFAULT_MODELS_FILE


def load_registry(path: Path | str | None = None) -> Registry:
    """Read and validate the registry (default: $MEMSQL_MODELS_FILE, else models.yaml at the repo root)."""
    path = Path(path) if path is not None else default_models_file()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(path, "(file)", f"cannot read the models registry: {exc.strerror or exc}") from None
    try:
        root_node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(path, "(file)", f"malformed YAML: {exc}") from None
    if root_node is not None:
        _reject_duplicate_keys(path, root_node, "")
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or set(data) != {"models"}:
        raise ConfigError(path, "models", "expected a top-level mapping with exactly one key, 'models'")
    models = data["models"]
    if not isinstance(models, dict) or not models:
        raise ConfigError(path, "models", "expected a non-empty mapping of partition key -> model entry")
    entries = {}
    for key, raw in models.items():
        where = f"models.{key}"
        if not isinstance(key, str) or not PARTITION_KEY_RE.match(key):
            raise ConfigError(
                path, where, "expected a partition key of [a-z0-9._-] (max 63 chars, starting alphanumeric)"
            )
        entries[key] = _parse_entry(path, key, raw)
    return Registry(path=path, entries=MappingProxyType(entries))


def _reject_duplicate_keys(path: Path, node: yaml.Node, where: str) -> None:
    """PyYAML keeps the last of duplicate keys silently; a duplicated model entry would hide one."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            name = str(key_node.value)
            here = f"{where}.{name}" if where else name
            line = key_node.start_mark.line + 1
            if name in seen:
                raise ConfigError(
                    path, here, f"duplicate key (lines {seen[name]} and {line}); expected each key once"
                )
            seen[name] = line
            _reject_duplicate_keys(path, value_node, here)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _reject_duplicate_keys(path, item, f"{where}[{i}]")


def _expect(path: Path, where: str, value: Any, types: tuple[type, ...], expected: str) -> Any:
    # bool is an int subclass in Python; YAML `true` must not pass for a count or a price.
    if isinstance(value, bool) and bool not in types:
        raise ConfigError(path, where, f"expected {expected}, got {value!r}")
    if not isinstance(value, types):
        raise ConfigError(path, where, f"expected {expected}, got {type(value).__name__} {value!r}")
    return value


def _parse_entry(path: Path, key: str, raw: Any) -> ModelEntry:
    where = f"models.{key}"
    if not isinstance(raw, dict):
        raise ConfigError(path, where, f"expected a mapping with fields {', '.join(REQUIRED_FIELDS)}")
    for name in REQUIRED_FIELDS:
        if name not in raw:
            raise ConfigError(path, f"{where}.{name}", "missing required field")
    for name in raw:
        if name not in REQUIRED_FIELDS + OPTIONAL_FIELDS:
            raise ConfigError(
                path,
                f"{where}.{name}",
                f"unknown field; expected one of {', '.join(REQUIRED_FIELDS + OPTIONAL_FIELDS)}",
            )

    kind = _expect(path, f"{where}.kind", raw["kind"], (str,), "one of " + "|".join(KINDS))
    if kind not in KINDS:
        raise ConfigError(path, f"{where}.kind", f"expected one of {'|'.join(KINDS)}, got {kind!r}")
    litellm_model = _expect(
        path, f"{where}.litellm_model", raw["litellm_model"], (str,), "a string 'provider/model'"
    )
    if "/" not in litellm_model:
        raise ConfigError(path, f"{where}.litellm_model", f"expected 'provider/model', got {litellm_model!r}")
    provider, name = litellm_model.split("/", 1)
    if kind == "api" and provider == BUILTIN_PROVIDER:
        raise ConfigError(
            path, f"{where}.litellm_model", f"'{BUILTIN_PROVIDER}/' models must have kind builtin or local"
        )
    if kind != "api" and (provider != BUILTIN_PROVIDER or name not in BUILTIN_NAMES[kind]):
        allowed = ", ".join(f"{BUILTIN_PROVIDER}/{n}" for n in BUILTIN_NAMES[kind])
        raise ConfigError(
            path,
            f"{where}.litellm_model",
            f"expected one of {allowed} for kind {kind}, got {litellm_model!r}",
        )

    reasoning = _parse_reasoning(path, f"{where}.reasoning", raw["reasoning"])

    max_concurrency = _expect(
        path, f"{where}.max_concurrency", raw["max_concurrency"], (int,), "an integer >= 1"
    )
    if max_concurrency < 1:
        raise ConfigError(
            path, f"{where}.max_concurrency", f"expected an integer >= 1, got {max_concurrency}"
        )

    prices = _expect(
        path, f"{where}.price_per_mtok", raw["price_per_mtok"], (dict,), "a mapping {input, output}"
    )
    if set(prices) != {"input", "output"}:
        raise ConfigError(
            path, f"{where}.price_per_mtok", f"expected exactly the keys input, output; got {sorted(prices)}"
        )
    price = {}
    for side in ("input", "output"):
        value = _expect(
            path,
            f"{where}.price_per_mtok.{side}",
            prices[side],
            (int, float),
            "a number >= 0 (USD per million tokens)",
        )
        if value < 0:
            raise ConfigError(path, f"{where}.price_per_mtok.{side}", f"expected a number >= 0, got {value}")
        price[side] = float(value)

    enabled = _expect(path, f"{where}.enabled", raw["enabled"], (bool,), "true or false")

    params = raw.get("provider_params") or {}
    params = _expect(path, f"{where}.provider_params", params, (dict,), "a mapping of litellm params")
    for pname in params:
        pwhere = f"{where}.provider_params.{pname}"
        if not isinstance(pname, str):
            raise ConfigError(path, pwhere, "expected string param names")
        if pname in RESERVED_PARAMS:
            raise ConfigError(path, pwhere, f"not allowed here; expected it in {RESERVED_PARAMS[pname]}")
        _reject_secret_names(path, pwhere, pname, params[pname])

    api_key_env = raw.get("api_key_env")
    if kind == "api":
        if api_key_env is None:
            raise ConfigError(
                path,
                f"{where}.api_key_env",
                "missing required field for kind api (the env var holding the key)",
            )
        _expect(path, f"{where}.api_key_env", api_key_env, (str,), "an environment variable name")
        if not ENV_NAME_RE.match(api_key_env):
            raise ConfigError(
                path,
                f"{where}.api_key_env",
                f"expected an environment variable NAME like OPENAI_API_KEY (never the key itself), got a value of {len(api_key_env)} chars",
            )
    elif api_key_env is not None:
        raise ConfigError(path, f"{where}.api_key_env", f"expected no API key for kind {kind}")

    temperature = raw.get("temperature")
    if temperature is not None:
        temperature = float(
            _expect(path, f"{where}.temperature", temperature, (int, float), "a number in [0, 2]")
        )
        if not 0 <= temperature <= 2:
            raise ConfigError(path, f"{where}.temperature", f"expected a number in [0, 2], got {temperature}")
        if reasoning.type != "none":
            # GPT-5 reasoning models reject temperature; Anthropic thinking requires the default.
            raise ConfigError(
                path,
                f"{where}.temperature",
                f"not accepted by a reasoning model (reasoning.type {reasoning.type}); expected it absent",
            )

    description = raw.get("description") or ""
    _expect(path, f"{where}.description", description, (str,), "a string")

    return ModelEntry(
        key=key,
        litellm_model=litellm_model,
        kind=kind,
        reasoning=reasoning,
        max_concurrency=max_concurrency,
        price_input_per_mtok=price["input"],
        price_output_per_mtok=price["output"],
        enabled=enabled,
        provider_params=MappingProxyType(dict(params)),
        api_key_env=api_key_env,
        temperature=temperature,
        description=description,
    )


def _reject_secret_names(path: Path, where: str, name: str, value: Any) -> None:
    """Credentials (api_key, extra_headers.Authorization, ...) never live in the registry file."""
    if is_secret_name(name):
        raise ConfigError(
            path, where, "secrets never go in the registry; expected the env var name in api_key_env"
        )
    if isinstance(value, dict):
        for k, v in value.items():
            _reject_secret_names(path, f"{where}.{k}", str(k), v)


def _parse_reasoning(path: Path, where: str, raw: Any) -> Reasoning:
    raw = _expect(
        path, where, raw, (dict,), "a mapping {type: none|default|enabled|adaptive, budget_tokens?, effort?}"
    )
    for name in raw:
        if name not in ("type", "budget_tokens", "effort"):
            raise ConfigError(
                path, f"{where}.{name}", "unknown field; expected type, budget_tokens or effort"
            )
    if "type" not in raw:
        raise ConfigError(
            path, f"{where}.type", "missing required field; expected " + "|".join(REASONING_TYPES)
        )
    rtype = raw["type"]
    if rtype not in REASONING_TYPES:
        raise ConfigError(
            path,
            f"{where}.type",
            f"unknown reasoning type {rtype!r}; expected one of {'|'.join(REASONING_TYPES)}",
        )
    budget = raw.get("budget_tokens")
    effort = raw.get("effort")
    if rtype == "enabled":
        if budget is None:
            raise ConfigError(
                path,
                f"{where}.budget_tokens",
                "missing; expected an integer >= 1024 for reasoning type enabled",
            )
        _expect(path, f"{where}.budget_tokens", budget, (int,), "an integer >= 1024")
        if budget < 1024:  # Anthropic's minimum thinking budget
            raise ConfigError(path, f"{where}.budget_tokens", f"expected an integer >= 1024, got {budget}")
    elif budget is not None:
        raise ConfigError(
            path, f"{where}.budget_tokens", f"only for reasoning type enabled; expected it absent for {rtype}"
        )
    if rtype == "adaptive":
        if effort not in EFFORTS:
            raise ConfigError(
                path,
                f"{where}.effort",
                f"expected one of {'|'.join(EFFORTS)} for reasoning type adaptive, got {effort!r}",
            )
    elif effort is not None:
        raise ConfigError(
            path, f"{where}.effort", f"only for reasoning type adaptive; expected it absent for {rtype}"
        )
    return Reasoning(type=rtype, budget_tokens=budget, effort=effort)
