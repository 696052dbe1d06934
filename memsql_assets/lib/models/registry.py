"""The model registry: one YAML file lists every model the platform can evaluate.

Each entry is keyed by its Dagster partition key and says how to call the model through litellm,
how it reasons (a first-class field, turned into provider params here and nowhere else), how many
requests may be in flight, what it costs and where its API key lives (the env var's *name*: the
file never holds a secret). The schema is a set of strict pydantic models (`extra="forbid"`, one
docstring per field); every error names the file, the field path (`models.<key>.<field>`) and what
was expected, because a typo here silently changes which experiment runs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from memsql_assets.lib.config_files import FieldProblem, Strict, config_error, read_yaml
from memsql_assets.lib.errors import ConfigError, MemsqlError
from memsql_assets.lib.models.builtin_names import (
    BUILTIN_NAMES,
    BUILTIN_PROVIDER,
    LOCAL_MODEL_PACKAGES,
    SIMULATED_LATENCY_PARAM,
    smollm2_weights_path,
)
from memsql_assets.lib.paths import REPO_ROOT, memsql_home

MODELS_FILE_ENV = "MEMSQL_MODELS_FILE"
DEFAULT_MODELS_FILE = REPO_ROOT / "models.yaml"

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
    "api_base": "api_base",
    "base_url": "api_base",
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


def _partition_key(key: str) -> str:
    if not PARTITION_KEY_RE.match(key):
        raise FieldProblem(
            "", "expected a partition key of [a-z0-9._-] (max 63 chars, starting alphanumeric)"
        )
    return key


def _no_secrets(params: dict[str, Any], where: str = "") -> None:
    """Credentials (api_key, extra_headers.Authorization, ...) never live in the registry file."""
    for name, value in params.items():
        here = f"{where}.{name}" if where else str(name)
        if is_secret_name(str(name)):
            raise FieldProblem(
                here, "secrets never go in the registry; expected the env var name in api_key_env"
            )
        if isinstance(value, dict):
            _no_secrets(value, here)


def _provider_params(params: dict[str, Any]) -> dict[str, Any]:
    for name in params:
        if name in RESERVED_PARAMS:
            raise FieldProblem(name, f"not allowed here; expected it in {RESERVED_PARAMS[name]}")
    _no_secrets(params)
    return params


def _env_name(name: str) -> str:
    if not ENV_NAME_RE.match(name):
        raise FieldProblem(
            "",
            "expected an environment variable NAME like OPENAI_API_KEY (never the key itself), "
            f"got a value of {len(name)} chars",
        )
    return name


def _litellm_id(model: str) -> str:
    if "/" not in model:
        raise FieldProblem("", f"expected 'provider/model', got {model!r}")
    return model


def _api_base(url: str) -> str:
    """A server's base URL, e.g. an OpenAI-compatible one: http://127.0.0.1:11434/v1 (Ollama)."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError on a port that is not a number
    except ValueError as exc:
        raise FieldProblem("", f"expected an http(s):// URL, got {url!r} ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FieldProblem("", f"expected an http(s)://host[:port][/path] URL, got {url!r}")
    if parts.username or parts.password or parts.query or parts.fragment:
        # A URL's user:password or ?key=... would put a credential in the file: keys come from api_key_env.
        raise FieldProblem(
            "", "expected scheme://host[:port][/path] without user, password, query or fragment "
            "(secrets never go in the registry; expected the env var name in api_key_env)"
        )
    return url


def _simulated_latency(kind: str, value: Any) -> None:
    """The reference models' latency knob for benchmarks (builtins.answer); no provider knows it."""
    field = f"provider_params.{SIMULATED_LATENCY_PARAM}"
    if kind != "builtin":
        raise FieldProblem(field, f"only for the reference models (kind builtin); expected it absent for kind {kind}")
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise FieldProblem(field, f"expected a number of milliseconds >= 0, got {value!r}")


class Reasoning(Strict):
    """How a model reasons, turned into provider params by `litellm_params`."""

    type: Literal["none", "default", "enabled", "adaptive"]
    """`none`: nothing is sent (the model is not asked to think). `default`: nothing is sent either,
    the provider's default applies (GPT-5 reasons by default; GPT-5.1 and later do not reason when
    no effort is sent, and the recorded reasoning_tokens show which happened). `enabled`: Anthropic extended
    thinking with a token budget. `adaptive`: Claude 4.6-style adaptive thinking at an effort level;
    litellm 1.110.2 expresses it as `reasoning_effort=<effort>`, which it maps to
    `thinking={"type": "adaptive"}` + `output_config={"effort": <effort>}` for adaptive models."""
    budget_tokens: int | None = Field(default=None, ge=1024)
    """Thinking budget of type `enabled` (Anthropic's minimum is 1024); absent for other types."""
    effort: Literal["low", "medium", "high"] | None = None
    """Effort level of type `adaptive`; absent for other types."""

    @model_validator(mode="after")
    def _fields_match_type(self) -> Reasoning:
        if self.type == "enabled" and self.budget_tokens is None:
            raise FieldProblem(
                "budget_tokens", "missing; expected an integer >= 1024 for reasoning type enabled"
            )
        if self.type != "enabled" and self.budget_tokens is not None:
            raise FieldProblem(
                "budget_tokens", f"only for reasoning type enabled; expected it absent for {self.type}"
            )
        if self.type == "adaptive" and self.effort is None:
            raise FieldProblem(
                "effort", "missing; expected one of low|medium|high for reasoning type adaptive"
            )
        if self.type != "adaptive" and self.effort is not None:
            raise FieldProblem(
                "effort", f"only for reasoning type adaptive; expected it absent for {self.type}"
            )
        return self

    @property
    def expected(self) -> bool:
        """The entry is configured to reason (any type but `none`), so its replies should carry
        reasoning tokens. `default` sends nothing and trusts the provider's default: GPT-5 reasons
        by default, GPT-5.1 and later do not (no effort sent means no reasoning)."""
        return self.type != "none"

    def litellm_params(self) -> dict[str, Any]:
        if self.type == "enabled":
            return {"thinking": {"type": "enabled", "budget_tokens": self.budget_tokens}}
        if self.type == "adaptive":
            return {"reasoning_effort": self.effort}
        return {}


class Prices(Strict):
    """List prices in USD per million tokens; cost = prices × tokens (no remote cost map)."""

    input: float = Field(ge=0)
    """USD per million prompt tokens."""
    output: float = Field(ge=0)
    """USD per million completion tokens."""


class ModelEntry(Strict):
    """One model: how to call it, how it reasons, its concurrency, prices and API key's env var."""

    litellm_model: Annotated[str, AfterValidator(_litellm_id)]
    """litellm id `provider/model`; built-ins are `memsql/<name>`."""
    kind: Literal["api", "builtin", "local"]
    """`api`: a provider through litellm; `builtin`: an offline reference model; `local`: a local LLM."""
    reasoning: Reasoning
    """How the model reasons (the only place reasoning params come from)."""
    max_concurrency: int = Field(ge=1)
    """Requests of this model in flight at once."""
    price_per_mtok: Prices
    """USD per million {input, output} tokens."""
    enabled: bool
    """Whether the model is evaluated (the sensor creates its partitions)."""
    provider_params: Annotated[dict[str, Any], AfterValidator(_provider_params)] = Field(default_factory=dict)
    """Other litellm params (max_tokens, ...); no reasoning, temperature, api_base or secrets here."""
    api_base: Annotated[str, AfterValidator(_api_base)] | None = None
    """Base URL of the server that serves the model (kind api only), e.g. an OpenAI-compatible one
    (Ollama, vLLM, llama.cpp, `transformers serve`) with `litellm_model: openai/<served name>`;
    absent: the provider's own endpoint. Part of the model's identity: another server may serve
    other weights under the same name."""
    api_key_env: Annotated[str, AfterValidator(_env_name)] | None = None
    """NAME of the environment variable holding the key (kind api only); never the key itself.
    Required unless `api_base` is set (a local server often checks no key)."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature, only for non-reasoning models (reasoning.type none)."""
    description: str = ""
    """What a person should know about the entry."""
    sessions: int | None = Field(default=None, ge=1)
    """Every partition of the model evaluates this deterministic sample of sessions (benchmark/sample.py:
    stratified by source x tier) as its full evaluation, in the partition's own file. Part of the
    fingerprint: a changed sample makes the model's partitions stale. Absent: every session."""
    max_cost_usd: float | None = Field(default=None, ge=0)
    """The most, in USD, the automation may spend on one partition run of this model (the run's
    estimate, else its upper bound: harness/plan.py); a partition above it is skipped and logged.
    Also a live cap on every partition run of the model without `--max-cost` (`memsql eval`,
    `memsql run`, the automation): the run stops, resumable, once the calls it made cost that much.
    Absent: no cap."""

    _key: str = PrivateAttr(default="")

    @model_validator(mode="after")
    def _consistent(self) -> ModelEntry:
        provider, name = self.litellm_model.split("/", 1)
        if self.kind == "api" and provider == BUILTIN_PROVIDER:
            raise FieldProblem(
                "litellm_model", f"'{BUILTIN_PROVIDER}/' models must have kind builtin or local"
            )
        if self.kind != "api" and (provider != BUILTIN_PROVIDER or name not in BUILTIN_NAMES[self.kind]):
            allowed = ", ".join(f"{BUILTIN_PROVIDER}/{n}" for n in BUILTIN_NAMES[self.kind])
            raise FieldProblem(
                "litellm_model", f"expected one of {allowed} for kind {self.kind}, got {self.litellm_model!r}"
            )
        if self.kind == "api" and self.api_key_env is None and self.api_base is None:
            raise FieldProblem(
                "api_key_env",
                "missing required field for kind api (the env var holding the key; optional only "
                "with an api_base, for a server that checks no key)",
            )
        if self.kind != "api" and self.api_key_env is not None:
            raise FieldProblem("api_key_env", f"expected no API key for kind {self.kind}")
        if self.kind != "api" and self.api_base is not None:
            raise FieldProblem("api_base", f"expected no api_base for kind {self.kind} (called in-process)")
        if SIMULATED_LATENCY_PARAM in self.provider_params:
            _simulated_latency(self.kind, self.provider_params[SIMULATED_LATENCY_PARAM])
        if self.temperature is not None and self.reasoning.type != "none":
            # GPT-5 reasoning models reject temperature; Anthropic thinking requires the default.
            raise FieldProblem(
                "temperature",
                f"not accepted by a reasoning model (reasoning.type {self.reasoning.type}); expected it absent",
            )
        return self

    @property
    def key(self) -> str:
        """The entry's partition key (its key under `models:`)."""
        return self._key

    @property
    def price_input_per_mtok(self) -> float:
        return self.price_per_mtok.input

    @property
    def price_output_per_mtok(self) -> float:
        return self.price_per_mtok.output

    @property
    def builtin_name(self) -> str | None:
        """`gold`, `recall-probe`, `smollm2-135m` for built-ins; None for API models."""
        return self.litellm_model.split("/", 1)[1] if self.kind != "api" else None

    def fingerprint(self) -> str:
        """Identity of what is called (model id, params, reasoning) and of the partitions' sample of
        sessions: a change makes its results stale."""
        identity: dict[str, Any] = {"model": self.litellm_model, "params": self.call_params()}
        if self.sessions is not None:  # what the partitions evaluate, not what is called: not in request keys
            identity["sessions"] = self.sessions
        text = json.dumps(identity, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def call_params(self) -> dict[str, Any]:
        """Everything passed to litellm besides model/messages/secrets: part of the request key."""
        params = dict(self.provider_params)
        if self.api_base is not None:
            params["api_base"] = self.api_base
        params.update(self.reasoning.litellm_params())
        if self.temperature is not None:
            params["temperature"] = self.temperature
        return params

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Registry prices × tokens: no remote cost map, so costs are reproducible offline."""
        return (
            prompt_tokens * self.price_input_per_mtok + completion_tokens * self.price_output_per_mtok
        ) / 1e6


class RegistryFile(Strict):
    """The whole file: exactly one top-level key."""

    models: dict[Annotated[str, AfterValidator(_partition_key)], ModelEntry] = Field(min_length=1)
    """Partition key -> model entry, in the order the sensor adds partitions."""


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

    def available(self, key: str, environ: Mapping[str, str], home: Path | None = None) -> tuple[bool, str]:
        """Whether `key` can be called now, and if not, what the user must do. Never raises for a
        registered key: a missing API key or missing weights is a state to report, not a crash.
        `environ` is the caller's (a Dagster resource's), never read here from the process."""
        entry = self.get(key)
        if entry.kind == "api":
            if entry.api_key_env and not environ.get(entry.api_key_env):
                return False, f"set {entry.api_key_env}"
            return True, "ok"
        if entry.kind == "local":
            problems = []
            weights = smollm2_weights_path(home or memsql_home())
            if not weights.exists():
                problems.append(f"model weights missing at {weights}: run `memsql models fetch smollm2`")
            missing = [m for m in LOCAL_MODEL_PACKAGES if importlib.util.find_spec(m) is None]
            if missing:
                problems.append(  # all are memsql's dependencies: the environment is incomplete
                    f"python packages missing: {', '.join(missing)} (dependencies of memsql: reinstall the "
                    "environment with scripts/bootstrap.sh)"
                )
            return (False, "; ".join(problems)) if problems else (True, "ok")
        return True, "ok"


def default_models_file() -> Path:
    env = os.environ.get(MODELS_FILE_ENV)
    return Path(env).expanduser() if env else DEFAULT_MODELS_FILE


def load_registry(path: Path | str | None = None) -> Registry:
    """Read and validate the registry (default: $MEMSQL_MODELS_FILE, else models.yaml at the repo root)."""
    path = Path(path) if path is not None else default_models_file()
    data = read_yaml(path, "models registry")
    if not isinstance(data, dict) or "models" not in data:
        raise ConfigError(path, "models", "expected a top-level mapping with exactly one key, 'models'")
    try:
        parsed = RegistryFile.model_validate(data)
    except ValidationError as exc:
        raise config_error(
            path,
            exc.errors()[0],
            _schema_at,
            empty={"models": "expected a non-empty mapping of partition key -> model entry"},
        ) from None
    for key, entry in parsed.models.items():
        entry._key = key
    return Registry(path=path, entries=MappingProxyType(dict(parsed.models)))


def _schema_at(loc: list[str]) -> type[BaseModel] | None:
    """The pydantic model that validates the mapping at `loc` (for the list of allowed fields)."""
    if not loc:
        return RegistryFile
    if loc[0] != "models" or len(loc) < 2:
        return None
    nested: dict[tuple[str, ...], type[BaseModel]] = {
        (): ModelEntry,
        ("reasoning",): Reasoning,
        ("price_per_mtok",): Prices,
    }
    return nested.get(tuple(loc[2:]))
