"""The registry file: shipped entries, reasoning → litellm params, and every bad-input message."""

from __future__ import annotations

import pytest

from memsql_assets.lib.errors import ConfigError
from memsql_assets.lib.models.registry import DEFAULT_MODELS_FILE, load_registry
from memsql_assets.lib.vocabulary import REFERENCE_MODELS

PAPER_MODELS = {
    "gpt-5-mini": "openai/gpt-5-mini-2025-08-07",
    "gpt-5.2": "openai/gpt-5.2-2025-12-11",
    "claude-sonnet-4.5": "anthropic/claude-sonnet-4-5-20250929",
    "claude-sonnet-4.6": "anthropic/claude-sonnet-4-6",
    "claude-opus-4.6": "anthropic/claude-opus-4-6",
}

GOOD_ENTRY = """
models:
  m1:
    litellm_model: openai/gpt-5-mini-2025-08-07
    kind: api
    reasoning: {type: default}
    api_key_env: OPENAI_API_KEY
    max_concurrency: 2
    price_per_mtok: {input: 0.25, output: 2.0}
    enabled: true
"""


def test_shipped_registry_has_the_paper_models_and_builtins():
    reg = load_registry(DEFAULT_MODELS_FILE)
    for key, litellm_model in PAPER_MODELS.items():
        entry = reg.get(key)
        assert entry.litellm_model == litellm_model
        assert entry.kind == "api" and entry.api_key_env and entry.temperature is None
        assert entry.price_output_per_mtok > entry.price_input_per_mtok > 0
    assert {reg.get(k).kind for k in REFERENCE_MODELS} == {"builtin"}
    assert reg.get("smollm2-135m").kind == "local"
    assert reg.get("gold").cost_usd(10_000, 10_000) == 0.0
    assert set(reg.enabled_keys()) >= set(PAPER_MODELS) | set(REFERENCE_MODELS)


def test_reasoning_becomes_litellm_params():
    reg = load_registry(DEFAULT_MODELS_FILE)
    assert "thinking" not in reg.get("gpt-5-mini").call_params()
    assert "temperature" not in reg.get("gpt-5.2").call_params()
    assert reg.get("claude-sonnet-4.5").call_params() == {
        "max_tokens": 16000,
        "thinking": {"type": "enabled", "budget_tokens": 5000},
    }
    for key in ("claude-sonnet-4.6", "claude-opus-4.6"):
        assert reg.get(key).call_params()["reasoning_effort"] == "medium"


def test_adaptive_effort_maps_to_anthropic_adaptive_thinking():
    """litellm 1.110.2 turns reasoning_effort into adaptive thinking + output_config.effort for 4.6."""
    from litellm.utils import get_optional_params

    params = load_registry(DEFAULT_MODELS_FILE).get("claude-opus-4.6").call_params()
    mapped = get_optional_params(model="claude-opus-4-6", custom_llm_provider="anthropic", **params)
    assert mapped["thinking"]["type"] == "adaptive"
    assert mapped["output_config"] == {"effort": "medium"}


def test_cost_is_prices_times_tokens():
    entry = load_registry(DEFAULT_MODELS_FILE).get("claude-sonnet-4.5")
    assert entry.cost_usd(1_000_000, 100_000) == pytest.approx(3.0 + 1.5)


def test_available_reports_missing_api_key_clearly(tmp_path):
    reg = load_registry(DEFAULT_MODELS_FILE)
    assert reg.available("gpt-5-mini", environ={}) == (False, "set OPENAI_API_KEY")
    assert reg.available("claude-opus-4.6", environ={}) == (False, "set ANTHROPIC_API_KEY")
    assert reg.available("gpt-5-mini", environ={"OPENAI_API_KEY": "sk-x"}) == (True, "ok")
    assert reg.available("gold", environ={}) == (True, "ok")
    ok, reason = reg.available("smollm2-135m", environ={}, home=tmp_path)
    assert not ok and "memsql models fetch smollm2" in reason and str(tmp_path) in reason


def test_env_var_overrides_the_registry_path(write_registry, monkeypatch):
    path = write_registry(GOOD_ENTRY, "other.yaml")
    monkeypatch.setenv("MEMSQL_MODELS_FILE", str(path))
    reg = load_registry()
    assert reg.path == path and reg.keys() == ["m1"]


BAD_CASES = [
    # (replace this, with that) in GOOD_ENTRY, expected field, expected words
    ("enabled: true", "enabled: true\n    kind: api", "models.m1.kind", "duplicate key"),
    ("    max_concurrency: 2\n", "", "models.m1.max_concurrency", "missing required field"),
    ("max_concurrency: 2", "max_concurrency: two", "models.m1.max_concurrency", "expected an integer"),
    ("max_concurrency: 2", "max_concurrency: 0", "models.m1.max_concurrency", "expected an integer >= 1"),
    ("enabled: true", "enabled: yes please", "models.m1.enabled", "expected true or false"),
    (
        "{input: 0.25, output: 2.0}",
        "{input: cheap, output: 2.0}",
        "models.m1.price_per_mtok.input",
        "expected a number",
    ),
    ("{input: 0.25, output: 2.0}", "{input: 0.25}", "models.m1.price_per_mtok.output", "missing required field"),
    (
        "{input: 0.25, output: 2.0}",
        "{input: -1, output: 2.0}",
        "models.m1.price_per_mtok.input",
        "expected a number >= 0",
    ),
    (
        "{type: default}",
        "{type: turbo}",
        "models.m1.reasoning.type",
        "expected one of none|default|enabled|adaptive, got 'turbo'",
    ),
    ("{type: default}", "{type: enabled, budget_tokens: 512}", "models.m1.reasoning.budget_tokens", ">= 1024"),
    ("{type: default}", "{type: default, colour: blue}", "models.m1.reasoning.colour", "type, budget_tokens"),
    ("max_concurrency: 2", "max_concurrency: true", "models.m1.max_concurrency", "expected an integer"),
    (
        "{type: default}",
        "{type: enabled}",
        "models.m1.reasoning.budget_tokens",
        "expected an integer >= 1024",
    ),
    ("{type: default}", "{type: adaptive, effort: extreme}", "models.m1.reasoning.effort", "low|medium|high"),
    (
        "{type: default}",
        "{type: default, budget_tokens: 5000}",
        "models.m1.reasoning.budget_tokens",
        "only for",
    ),
    ("kind: api", "kind: remote", "models.m1.kind", "api|builtin|local"),
    ("enabled: true", "enabled: true\n    temperature: 0.0", "models.m1.temperature", "reasoning model"),
    ("enabled: true", "enabled: true\n    colour: blue", "models.m1.colour", "unknown field"),
    (
        "api_key_env: OPENAI_API_KEY",
        "api_key_env: sk-proj-abcdef123",
        "models.m1.api_key_env",
        "never the key itself",
    ),
    ("    api_key_env: OPENAI_API_KEY\n", "", "models.m1.api_key_env", "missing required field"),
    (
        "enabled: true",
        "enabled: true\n    provider_params: {api_key: sk-x}",
        "models.m1.provider_params.api_key",
        "secrets",
    ),
    (
        "enabled: true",
        "enabled: true\n    provider_params: {extra_headers: {Authorization: Bearer x}}",
        "models.m1.provider_params.extra_headers.Authorization",
        "secrets",
    ),
    (
        "enabled: true",
        "enabled: true\n    provider_params: {thinking: {type: enabled}}",
        "models.m1.provider_params.thinking",
        "reasoning",
    ),
    (
        "enabled: true",
        "enabled: true\n    provider_params: {api_base: 'http://127.0.0.1:8000/v1'}",
        "models.m1.provider_params.api_base",
        "expected it in api_base",
    ),
    ("enabled: true", "enabled: true\n    api_base: 127.0.0.1:8000", "models.m1.api_base", "http(s)://"),
    ("enabled: true", "enabled: true\n    api_base: 'ftp://host/v1'", "models.m1.api_base", "http(s)://"),
    ("enabled: true", "enabled: true\n    api_base: 'http://h:port/v1'", "models.m1.api_base", "http(s)://"),
    ("enabled: true", "enabled: true\n    api_base: 'http://u:pw@h/v1'", "models.m1.api_base", "secrets"),
    ("enabled: true", "enabled: true\n    api_base: 'http://h/v1?key=x'", "models.m1.api_base", "secrets"),
    ("openai/gpt-5-mini-2025-08-07", "gpt-5-mini", "models.m1.litellm_model", "provider/model"),
    ("kind: api", "kind: builtin", "models.m1.litellm_model", "memsql/gold"),
    (
        "enabled: true",
        "enabled: true\n    provider_params: {simulated_latency_ms: 200}",
        "models.m1.provider_params.simulated_latency_ms",
        "only for the reference models (kind builtin)",
    ),
]

LOCAL_SERVER = """
models:
  local:
    litellm_model: openai/qwen2.5-coder:7b
    kind: api
    api_base: http://127.0.0.1:11434/v1
    reasoning: {type: none}
    temperature: 0
    max_concurrency: 1
    price_per_mtok: {input: 0, output: 0}
    enabled: true
"""


def test_an_openai_compatible_server_is_an_api_base_and_its_key_is_optional(write_registry):
    entry = load_registry(write_registry(LOCAL_SERVER)).get("local")
    assert entry.api_base == "http://127.0.0.1:11434/v1" and entry.api_key_env is None
    assert entry.call_params() == {"api_base": "http://127.0.0.1:11434/v1", "temperature": 0}
    moved = load_registry(write_registry(LOCAL_SERVER.replace("11434", "8000"))).get("local")
    assert moved.fingerprint() != entry.fingerprint(), "another server may serve other weights"
    assert load_registry(write_registry(LOCAL_SERVER)).available("local", environ={}) == (True, "ok")
    keyed = LOCAL_SERVER.replace("enabled: true", "enabled: true\n    api_key_env: VLLM_API_KEY")
    reg = load_registry(write_registry(keyed))
    assert reg.available("local", environ={}) == (False, "set VLLM_API_KEY")
    with pytest.raises(ConfigError) as err:
        load_registry(write_registry(BUILTIN_ENTRY.replace("LATENCY", "0") + "    api_base: http://h/v1\n"))
    assert err.value.field == "models.gold.api_base" and "kind builtin" in str(err.value)


BUILTIN_ENTRY = """
models:
  gold:
    litellm_model: memsql/gold
    kind: builtin
    reasoning: {type: none}
    provider_params: {simulated_latency_ms: LATENCY}
    max_concurrency: 16
    price_per_mtok: {input: 0, output: 0}
    enabled: true
"""


def test_simulated_latency_is_a_reference_model_param(write_registry):
    entry = load_registry(write_registry(BUILTIN_ENTRY.replace("LATENCY", "200"))).get("gold")
    assert entry.call_params() == {"simulated_latency_ms": 200}  # part of the request key and fingerprint
    for bad in ("-5", "fast", "true"):
        with pytest.raises(ConfigError) as err:
            load_registry(write_registry(BUILTIN_ENTRY.replace("LATENCY", bad)))
        assert err.value.field == "models.gold.provider_params.simulated_latency_ms"
        assert "expected a number of milliseconds >= 0" in str(err.value)


@pytest.mark.parametrize(
    ("old", "new", "field", "words"), BAD_CASES, ids=[c[2] + ":" + c[3] for c in BAD_CASES]
)
def test_bad_entries_name_file_field_and_expectation(write_registry, old, new, field, words):
    assert old in GOOD_ENTRY
    path = write_registry(GOOD_ENTRY.replace(old, new, 1))
    with pytest.raises(ConfigError) as err:
        load_registry(path)
    assert err.value.field == field
    assert str(path) in str(err.value)
    assert words in str(err.value)


def test_duplicate_model_key_is_an_error(write_registry):
    body = GOOD_ENTRY.split("models:\n", 1)[1]
    path = write_registry("models:\n" + body + body)
    with pytest.raises(ConfigError) as err:
        load_registry(path)
    assert err.value.field == "models.m1" and "duplicate key (lines 2 and 10)" in str(err.value)


def test_malformed_yaml_names_the_file(write_registry):
    path = write_registry("models:\n  m1: {litellm_model: [unclosed\n")
    with pytest.raises(ConfigError) as err:
        load_registry(path)
    assert str(path) in str(err.value) and "malformed YAML" in str(err.value)


def test_missing_file_and_wrong_top_level(write_registry, tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_registry(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError) as err:
        load_registry(write_registry("- just a list\n"))
    assert err.value.field == "models"
    with pytest.raises(ConfigError) as err:
        load_registry(write_registry("models:\n  Bad|Key: {}\n"))
    assert err.value.field == "models.Bad|Key" and "partition key" in str(err.value)


@pytest.mark.slow
def test_registry_and_builtins_do_not_import_each_other():
    """Each loads in a fresh interpreter without pulling in the other (no import cycle)."""
    import subprocess
    import sys

    registry, builtins = "memsql_assets.lib.models.registry", "memsql_assets.lib.reference.builtins"
    for module, other in ((registry, builtins), (builtins, registry)):
        code = f"import sys, {module}; sys.exit('{other}' in sys.modules)"
        assert subprocess.run([sys.executable, "-c", code]).returncode == 0, f"{module} imports {other}"


def test_every_schema_field_has_a_docstring():
    from memsql_assets.lib.models.registry import ModelEntry, Prices, Reasoning, RegistryFile

    for schema in (RegistryFile, ModelEntry, Reasoning, Prices):
        undocumented = [name for name, f in schema.model_fields.items() if not f.description]
        assert not undocumented, f"{schema.__name__}: {undocumented}"


def test_api_keys_come_from_dagster_env_vars_when_asked(monkeypatch):
    """The defs layer reads each key the registry names through dg.EnvVar at call time (a key set
    later counts) and hands lib/ the mapping; an unset key leaves its model unavailable."""
    from memsql_assets.defs.resources import model_api_keys

    reg = load_registry(DEFAULT_MODELS_FILE)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert model_api_keys(reg) == {}
    assert reg.available("gpt-5-mini", model_api_keys(reg)) == (False, "set OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-later")
    keys = model_api_keys(reg)
    assert keys == {"OPENAI_API_KEY": "sk-later"}
    assert reg.available("gpt-5-mini", keys) == (True, "ok")
    assert reg.available("claude-opus-4.6", keys) == (False, "set ANTHROPIC_API_KEY")


def test_the_documented_openai_compatible_entries_are_valid(write_registry):
    """docs/reference_models.md's models.yaml example (and the guide's entry) load as written."""
    import re

    from memsql_assets.lib.paths import REPO_ROOT

    blocks = re.findall(r"```yaml\n(.*?)```", (REPO_ROOT / "docs" / "reference_models.md").read_text(), re.S)
    reg = load_registry(write_registry(next(b for b in blocks if "api_base" in b)))
    assert len(reg.entries) == 4 and all(e.api_base for e in reg.entries.values())
    readme = re.findall(r"```yaml\n(.*?)```", (REPO_ROOT / "docs" / "guide.md").read_text(), re.S)
    entry = next(b for b in readme if "api_base" in b)
    assert load_registry(write_registry("models:\n" + entry)).get("qwen-coder-local").api_key_env is None
