"""Test doubles for the model layer: a scripted litellm custom provider and a test registry.

The fake provider is a real litellm `CustomLLM` registered in `litellm.custom_provider_map`, so the
gateway under test goes through litellm exactly as it does for real providers (exception mapping,
response objects); only the remote server is replaced by a script.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import defaultdict, deque
from collections.abc import Iterator
from typing import Any

import httpx
import litellm
from litellm import CustomLLM

FAKE_PROVIDER = "memsqltest"
FAKE_KEY_ENV = "MEMSQL_TEST_API_KEY"
FAKE_SECRET = "sk-test-MEMSQLSECRET123"
USAGE = {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}


def _response(content: Any, **message: Any) -> litellm.ModelResponse:
    return litellm.ModelResponse(
        choices=[
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content, **message},
            }
        ],
        usage=USAGE,
    )


def make_outcome(spec: str, model: str) -> Any:
    """An exception to raise or a response to return, from a short spec."""
    req = httpx.Request("POST", "http://fake.invalid/v1/chat/completions")
    if spec == "ok":
        return _response("SELECT 1", reasoning_content="I think SELECT 2 is wrong")
    if spec.startswith("429"):
        headers = {}
        if spec.startswith("429@"):
            headers["retry-after"] = spec[4:]
        return litellm.RateLimitError(
            "rate limited",
            llm_provider=FAKE_PROVIDER,
            model=model,
            response=httpx.Response(429, headers=headers, request=req),
        )
    if spec == "500":
        return litellm.InternalServerError("upstream exploded", llm_provider=FAKE_PROVIDER, model=model)
    if spec == "timeout":
        return litellm.Timeout("request timed out", model=model, llm_provider=FAKE_PROVIDER)
    if spec == "400":
        return litellm.BadRequestError("invalid request: bad param", model=model, llm_provider=FAKE_PROVIDER)
    if spec == "400-echo":  # a permanent failure that is stored, echoing the key
        return litellm.BadRequestError(
            f"invalid request for key {FAKE_SECRET}", model=model, llm_provider=FAKE_PROVIDER
        )
    if spec == "401-echo":
        return litellm.AuthenticationError(
            f"Incorrect API key provided: {FAKE_SECRET}", llm_provider=FAKE_PROVIDER, model=model
        )
    if spec == "none_content":
        return _response(None)
    if spec == "no_choices":
        return litellm.ModelResponse(choices=[], usage=USAGE)
    if spec == "huge":
        return _response("SELECT " + "x" * 3_000_000)
    if spec == "non_utf8":
        return _response("SELECT '\udcff'")
    if spec.startswith("sleep:"):
        return float(spec[6:])
    raise ValueError(spec)


class ScriptedProvider(CustomLLM):
    """Per model name, a queue of outcomes (then `default`); or failures at a seeded rate."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: dict[str, deque[str]] = defaultdict(deque)
        self.default = "ok"
        self.fail_rate = 0.0
        self.fail_cycle = ("429", "500", "timeout")
        self.rng = random.Random(7)
        self.calls: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.delay_s = 0.0

    def script(self, model: str, *specs: str) -> None:
        self.scripts[model].extend(specs)

    async def acompletion(
        self, model: str, messages: list, *args: Any, **kwargs: Any
    ) -> litellm.ModelResponse:
        api_key = kwargs["api_key"] if "api_key" in kwargs else (args[5] if len(args) > 5 else None)
        self.calls.append({"model": model, "api_key": api_key, "messages": messages})
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            if self.scripts[model]:
                spec = self.scripts[model].popleft()
            elif self.fail_rate and self.rng.random() < self.fail_rate:
                spec = self.rng.choice(self.fail_cycle)
            else:
                spec = self.default
            # "numbered": a different answer to every request, as a sampled LLM may give
            outcome = _response(f"SELECT {len(self.calls)}") if spec == "numbered" else make_outcome(spec, model)
            if isinstance(outcome, float):
                await asyncio.sleep(outcome)
                outcome = make_outcome("ok", model)
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome
        finally:
            self.in_flight -= 1


TEST_REGISTRY = f"""
models:
  flaky:
    litellm_model: {FAKE_PROVIDER}/flaky
    kind: api
    reasoning: {{type: default}}
    provider_params: {{max_tokens: 64}}
    api_key_env: {FAKE_KEY_ENV}
    max_concurrency: 3
    price_per_mtok: {{input: 2.0, output: 10.0}}
    enabled: true
  gold:
    litellm_model: memsql/gold
    kind: builtin
    reasoning: {{type: none}}
    max_concurrency: 16
    price_per_mtok: {{input: 0, output: 0}}
    enabled: true
  recall-probe:
    litellm_model: memsql/recall-probe
    kind: builtin
    reasoning: {{type: none}}
    max_concurrency: 16
    price_per_mtok: {{input: 0, output: 0}}
    enabled: true
  smollm2-135m:
    litellm_model: memsql/smollm2-135m
    kind: local
    reasoning: {{type: none}}
    max_concurrency: 1
    price_per_mtok: {{input: 0, output: 0}}
    enabled: false
"""


@contextlib.contextmanager
def registered_provider() -> Iterator[ScriptedProvider]:
    """A fresh ScriptedProvider in litellm.custom_provider_map (other providers kept), removed after."""
    provider = ScriptedProvider()
    before = list(litellm.custom_provider_map)
    litellm.custom_provider_map = [p for p in before if p.get("provider") != FAKE_PROVIDER] + [
        {"provider": FAKE_PROVIDER, "custom_handler": provider}
    ]
    try:
        yield provider
    finally:
        litellm.custom_provider_map = [
            p for p in litellm.custom_provider_map if p.get("provider") != FAKE_PROVIDER
        ]
