"""The one door to every model: request store lookup, the call, retry policy, typed errors.

API models are called through litellm; built-ins (`memsql/<name>`) in-process (lib/reference/builtins.py,
reached through builtin_serving.py),
behind the same store, records, usage accounting, retry policy and error typing.

Why here and only here: litellm's own retries are off (`num_retries=0`) because they can swallow
429s and double-count attempts; this module applies the one HTTP retry policy (lib/http_retry.py:
exponential backoff with jitter, `Retry-After` honoured; tenacity runs it), the per-model concurrency limit
(adaptive: lib/models/concurrency.py) and
the rule that a model failure becomes a typed error on the turn's reply, never an exception that
drops a row.

What is stored: answers, and failures that the request itself determines (400, content policy,
a malformed reply, a 2xx answer that is not a chat completion), which a re-run replays with zero
calls, labelled as replayed. Never replayed: failures of the endpoint or the environment
(ENDPOINT_FAILURES: connection, timeout, 429, 5xx, a rejected key, `unavailable`,
`internal_error`), so a re-run after the fix asks again; records of them written by older
versions are ignored. `retry_errors` re-asks every recorded failure.

Request key for built-ins: their answer depends on turn fields besides the messages (gold on
gt_sql; recall-probe on the template, key names and stated values), and two turns can share
identical messages (e.g. the same follow-up question under condition A), so the key includes
exactly the fields the built-in reads (lib/reference/builtins.py's BUILTIN_CONTEXT_FIELDS). For API models the turn
context plays no part in the key and is not sent.

Request key and the evaluation cell: a real model's answer is a sample, so the harness passes the
cell (request_store.evaluation_cell: model, condition, session, turn, epoch) and the key includes
it: a cell's answer is reused by that cell only (resume, re-run), never by another cell whose prompt
happens to be identical (turn 1 under A and B). `cell=None` (the `share_identical_prompts` setting)
gives the schema-1 key, shared by identical prompts, which is also how older records are found.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tenacity

from memsql_assets.lib.code_versions import BUILTIN_CODE, code_version
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.http_retry import Retryable, RetryPolicy, retrying
from memsql_assets.lib.models.builtin_serving import builtin_server
from memsql_assets.lib.models.concurrency import AdaptiveLimit
from memsql_assets.lib.models.failures import (
    COST_CAP,
    ENDPOINT_FAILURES,
    Failure,
    classify,
    litellm_module,
)
from memsql_assets.lib.models.registry import ModelEntry, Registry
from memsql_assets.lib.models.replies import (
    Extracted,
    checked_text,
    extract_reply,
    reasoning_tokens,
)
from memsql_assets.lib.models.request_store import RequestStore, request_key, scrub
from memsql_assets.lib.paths import memsql_home

DEFAULT_MAX_CHARS = 200_000

# The key sent to an api_base whose entry names no api_key_env (servers that check none).
NO_API_KEY = "no-key"


@functools.cache
def builtin_code_version() -> str:
    """Part of a built-in's request key: a changed reference model answers anew instead of replaying
    what its old code stored."""
    return code_version(*BUILTIN_CODE)
REPLAYED_NOTE = "replayed from the request store; `memsql eval --retry-errors` asks again"


@dataclass(frozen=True)
class ModelReply:
    text: str
    reasoning: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    cost_usd: float
    cache_hit: bool
    attempts: int  # calls made for this reply now (0 on a cache hit)
    error_type: str | None
    error_message: str | None
    request_key: str
    # Reasoning tokens the provider reported (or counted from its thinking text); 0 when none.
    reasoning_tokens: int = 0
    # Function calls of a reply to a request that offered tools: {"id", "name", "arguments"} with
    # `arguments` the raw text the model wrote (the agent loop parses and checks it).
    tool_calls: tuple[dict[str, str], ...] = ()

    @property
    def ok(self) -> bool:
        return self.error_type is None


class _AttemptFailed(Exception):
    """One model call's failure, classified, and how long the call took."""

    def __init__(self, failure: Failure, latency: float):
        super().__init__(failure.message)
        self.failure = failure
        self.latency = latency


def _stored_reasoning_tokens(record: Mapping[str, Any]) -> int:
    """A request-store record's reasoning tokens; a record stored before they were counted gets its
    kept reasoning text counted."""
    usage = record.get("usage") or {}
    if "reasoning_tokens" in usage:
        return int(usage["reasoning_tokens"])
    response = record.get("response") or {}
    return reasoning_tokens(None, str(response.get("reasoning") or ""), record.get("litellm_model"))


def _stored_calls(calls: tuple[dict[str, str], ...]) -> dict[str, Any]:
    """The record's `tool_calls` entry, absent for a text answer (records of text answers keep their shape)."""
    return {"tool_calls": [dict(c) for c in calls]} if calls else {}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class _Call:
    """One call as asked: what its request-store record and reply are made of, whatever its outcome."""

    entry: ModelEntry
    key: str  # its request-store key
    params: Mapping[str, Any]
    messages: list[dict[str, Any]]
    builtin_context: Mapping[str, Any] | None
    cell: Mapping[str, Any] | None
    started_at: str

    def record(self, latency: float, attempts: int) -> dict[str, Any]:
        """The request-store record of the call, before its outcome (response or error) is filled in."""
        return {
            "model_key": self.entry.key,
            "litellm_model": self.entry.litellm_model,
            "request": {"params": scrub(self.params), "messages": self.messages, "builtin_context": self.builtin_context},
            "cell": self.cell,
            "response": None,
            "usage": {"prompt_tokens": 0, "completion_tokens": 0},
            "latency_s": round(latency, 4),
            "cost_usd": 0.0,
            "attempts": attempts,
            "started_at": self.started_at,
            "finished_at": _now(),
            "error": None,
        }


def _code(entry: ModelEntry) -> str | None:
    return builtin_code_version() if entry.builtin_name is not None else None


def endpoint(entry: ModelEntry) -> str:
    """Where a call goes, for error messages: the configured api_base, else the provider's default."""
    return entry.api_base or f"{entry.litellm_model.split('/', 1)[0]}'s default endpoint"


def register_prices(registry: Registry) -> None:
    """Give litellm the registry's prices for API model ids its cost map lacks (custom providers).

    litellm prices every response; for an id it does not know it searches its whole cost map for a
    generalisation, three times per call (a large share of a zero-latency model's call). Costs that
    memsql reports come from the registry either way (ModelEntry.cost_usd), so nothing remote is used.
    """
    api = [e for e in registry.entries.values() if e.kind == "api"]  # built-ins never reach litellm
    litellm = litellm_module()
    unknown = {
        e.litellm_model: {
            "input_cost_per_token": e.price_input_per_mtok / 1e6,
            "output_cost_per_token": e.price_output_per_mtok / 1e6,
            # stated, so that litellm does not warn that they default to 0 (the registry has no cache prices)
            "cache_creation_input_token_cost": 0.0,
            "cache_read_input_token_cost": 0.0,
            "litellm_provider": e.litellm_model.split("/", 1)[0],
            "mode": "chat",
        }
        for e in api
        if e.litellm_model not in litellm.model_cost
    }
    if unknown:
        litellm.register_model(unknown)


class ModelGateway:
    """`acomplete(model_key, messages, turn_context) -> ModelReply`; safe to call concurrently."""

    def __init__(
        self,
        registry: Registry,
        store: RequestStore,
        *,
        home: Path | None = None,
        retry: RetryPolicy | None = None,
        timeout_s: float = 300.0,
        max_chars: int = DEFAULT_MAX_CHARS,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        retry_errors: bool = False,
        max_cost_usd: float | None = None,
    ):
        """`max_cost_usd`: a live cap; once the calls this gateway made cost that much, every call
        not in the request store is answered `cost_cap` without being made."""
        self.registry = registry
        self.store = store
        self.home = Path(home) if home is not None else memsql_home()
        self.retry = retry or RetryPolicy()
        self.timeout_s = timeout_s
        self.max_chars = max_chars
        self.environ = os.environ if environ is None else environ
        self.sleep = sleep
        self.retry_errors = retry_errors  # re-ask turns whose stored record is a failure
        self._rng = random.Random(self.retry.seed)
        self._limits: dict[str, AdaptiveLimit] = {}
        self.calls = 0  # model calls made by this gateway (all models, all attempts)
        self.max_cost_usd = max_cost_usd
        self.spent_usd = 0.0  # what the calls made by this gateway cost, as recorded
        self._open_calls = 0  # calls made and not yet stored
        # Every key value the registry points at is redacted from stored records.
        store.add_secret_values(
            self.environ.get(e.api_key_env, "") for e in registry.entries.values() if e.api_key_env
        )
        self._priced = False  # litellm gets the registry's prices on the first external call

    def limit(self, model_key: str) -> AdaptiveLimit:
        """The model's adaptive in-flight limit (lib/models/concurrency.py), at most its max_concurrency."""
        found = self._limits.get(model_key)
        if found is None:
            found = self._limits[model_key] = AdaptiveLimit(self.registry.get(model_key).max_concurrency)
        return found

    def request_key_for(
        self,
        model_key: str,
        messages: list[dict[str, Any]],
        turn_context: Mapping[str, Any],
        cell: Mapping[str, Any] | None = None,
    ) -> str:
        entry = self.registry.get(model_key)
        builtin_context = self._builtin_context(entry, turn_context)
        return request_key(entry.litellm_model, entry.call_params(), messages, builtin_context, cell, _code(entry))

    @staticmethod
    def _builtin_context(entry: ModelEntry, turn_context: Mapping[str, Any]) -> dict[str, Any] | None:
        name = entry.builtin_name
        if name is None:
            return None
        fields = builtin_server().context_fields[name]
        missing = [f for f in fields if f not in turn_context]
        if missing:  # a wiring bug in the caller, not a model failure: fail loudly
            raise MemsqlError(
                f"model {entry.key}: turn_context lacks {', '.join(missing)} (needs {', '.join(fields)})"
            )
        return {f: turn_context[f] for f in fields}

    async def acomplete(
        self,
        model_key: str,
        messages: list[dict[str, Any]],
        turn_context: Mapping[str, Any] | None = None,
        cell: Mapping[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ModelReply:
        """`cell`: the evaluation cell this answer is a sample for (None: shared by identical prompts).
        `tools`: OpenAI-format function tools offered to the model (part of the request key)."""
        entry = self.registry.get(model_key)
        params = {**entry.call_params(), "tools": tools} if tools else entry.call_params()
        builtin_context = self._builtin_context(entry, turn_context or {})
        key = request_key(entry.litellm_model, params, messages, builtin_context, cell, _code(entry))

        record = self.store.get(key)
        if record is not None and self._replayable(record):
            return self._reply_from_record(record, key)

        available, reason = self.registry.available(model_key, environ=self.environ, home=self.home)
        if not available:
            return self._error_reply(
                key, "unavailable", f"model {model_key} unavailable: {reason}", attempts=0
            )

        if self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd:
            return await self._capped(model_key, key)
        self._open_calls += 1
        try:
            return await self._ask(entry, key, params, messages, builtin_context, cell)
        finally:
            self._open_calls -= 1

    async def _capped(self, model_key: str, key: str) -> ModelReply:
        """The `cost_cap` reply, once the calls already under way are answered and stored: the run stops
        on it, and its resume replays them instead of paying for them again."""
        while self._open_calls:
            await asyncio.sleep(0.01)
        spent = f"this run's recorded spend ${self.spent_usd:,.4f} reached its cost cap ${self.max_cost_usd:,.4f}"
        return self._error_reply(key, COST_CAP, f"model {model_key}: {spent} (--max-cost, max_cost_usd)", attempts=0)

    async def _ask(
        self,
        entry: ModelEntry,
        key: str,
        params: Mapping[str, Any],
        messages: list[dict[str, Any]],
        builtin_context: Mapping[str, Any] | None,
        cell: Mapping[str, Any] | None,
    ) -> ModelReply:
        """The call with its retries, stored and turned into a reply."""
        call_kwargs = self._call_kwargs(entry, params)
        call = _Call(entry, key, params, messages, builtin_context, cell, _now())
        attempts = 0
        try:
            async for attempt in self._retrying(self.limit(entry.key)):
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    got, latency = await self._attempt(entry, messages, call_kwargs, builtin_context)
        except _AttemptFailed as failed:
            failure = failed.failure
            gave_up = f"gave up after {attempts} attempts: " if failure.transient else ""
            failure = replace(failure, message=f"model {entry.key} at {endpoint(entry)}: {gave_up}{failure.message}")
            return self._finish_error(call, failure, attempts, failed.latency)
        return self._finish_success(call, got, attempts, latency)

    def _call_kwargs(self, entry: ModelEntry, params: Mapping[str, Any]) -> dict[str, Any]:
        """The model's call parameters plus the API key it is called with."""
        call_kwargs: dict[str, Any] = dict(params)
        if entry.api_key_env:
            call_kwargs["api_key"] = self.environ[entry.api_key_env]
        elif entry.kind == "api":
            # A server that checks no key (api_base without api_key_env). Stated, so that litellm never
            # falls back on a provider key of the environment (OPENAI_API_KEY) and sends it there.
            call_kwargs["api_key"] = NO_API_KEY
        return call_kwargs

    def _finish_success(self, call: _Call, got: Extracted, attempts: int, latency: float) -> ModelReply:
        """Store the record of an answered call and return its reply."""
        cost = call.entry.cost_usd(got.prompt_tokens, got.completion_tokens)
        self.spent_usd += cost
        record = call.record(latency, attempts)
        record.update(
            response={"text": got.text, "reasoning": got.reasoning, **_stored_calls(got.tool_calls)},
            usage={
                "prompt_tokens": got.prompt_tokens,
                "completion_tokens": got.completion_tokens,
                "reasoning_tokens": got.reasoning_tokens,
            },
            cost_usd=cost,
        )
        # On the loop, as the lookup above: writing a few-KB file costs less than a thread hand-off
        # there and back under a busy GIL (docs/performance.md).
        self.store.put(call.key, record)
        return ModelReply(
            got.text, got.reasoning, got.prompt_tokens, got.completion_tokens, latency, cost, False, attempts,
            None, None, call.key, reasoning_tokens=got.reasoning_tokens, tool_calls=got.tool_calls,
        )

    def _retrying(self, limit: AdaptiveLimit) -> tenacity.BaseRetrying:
        """The retry policy as tenacity runs it: only transient failures are tried again, up to the
        attempts their kind allows (RetryPolicy.attempts_for), after RetryPolicy.delay (a server's
        Retry-After first), slept through the gateway's `sleep` and counted by the model's `limit`;
        the last failure is raised as it is."""

        def retryable(exc: BaseException) -> Retryable | None:
            if not isinstance(exc, _AttemptFailed) or not exc.failure.transient:
                return None
            failure = exc.failure
            rate_limited = failure.error_type == "rate_limited"
            return Retryable(failure.retry_after_s, failure.cannot_connect, rate_limited=rate_limited)

        backoff = functools.partial(limit.backoff, sleep=self.sleep)
        return retrying(self.retry, retryable, backoff, self._rng, asynchronous=True)

    async def _attempt(
        self,
        entry: ModelEntry,
        messages: list[dict[str, Any]],
        call_kwargs: Mapping[str, Any],
        builtin_context: Mapping[str, Any] | None,
    ) -> tuple[Extracted, float]:
        """One call, in a slot of the model's limit, and its latency; a failure raises _AttemptFailed,
        classified (a refusal for the rate, 429 or Retry-After, cuts the limit)."""
        async with self.limit(entry.key).slot() as slot:
            self.calls += 1
            t0 = time.monotonic()
            try:
                # Also bounds providers that ignore `timeout`; unlike wait_for, no extra task per call.
                async with asyncio.timeout(self.timeout_s):
                    got = await self._call(entry, messages, call_kwargs, builtin_context)
            except Exception as exc:  # noqa: BLE001 - every failure becomes a typed error
                failure = classify(exc)
                slot.rate_limited = failure.error_type == "rate_limited" or failure.retry_after_s is not None
                raise _AttemptFailed(failure, time.monotonic() - t0) from exc
            return got, time.monotonic() - t0

    async def _call(
        self,
        entry: ModelEntry,
        messages: list[dict[str, Any]],
        call_kwargs: Mapping[str, Any],
        builtin_context: Mapping[str, Any] | None,
    ) -> Extracted:
        """One attempt's reply; a failure raises."""
        if entry.builtin_name is None or builtin_context is None:
            if not self._priced:
                register_prices(self.registry)
                self._priced = True
            response = await litellm_module().acompletion(
                model=entry.litellm_model, messages=messages, num_retries=0, timeout=self.timeout_s, **call_kwargs
            )
            return extract_reply(response, self.max_chars, entry.litellm_model)
        server = builtin_server()
        if entry.builtin_name in server.agents and call_kwargs.get("tools"):
            calls, p_tok, c_tok = server.agent_step(entry.builtin_name, messages, builtin_context, call_kwargs)
            return Extracted("", "", p_tok, c_tok, 0, calls)
        text, p_tok, c_tok = await server.answer(entry.builtin_name, messages, builtin_context, call_kwargs, self.home)
        return Extracted(checked_text(text, (p_tok, c_tok), self.max_chars), "", p_tok, c_tok, 0)

    def _finish_error(self, call: _Call, failure: Failure, attempts: int, latency: float) -> ModelReply:
        """Store the record of a failure the request determines (not an endpoint's) and return its reply."""
        p_tok, c_tok = failure.prompt_tokens, failure.completion_tokens
        cost = call.entry.cost_usd(p_tok, c_tok)  # what the provider billed, even for a useless reply
        self.spent_usd += cost
        if failure.error_type not in ENDPOINT_FAILURES:
            record = call.record(latency, attempts)
            record.update(
                error={
                    "type": failure.error_type,
                    "message": failure.message,
                    "status_code": failure.status_code,
                },
                usage={"prompt_tokens": p_tok, "completion_tokens": c_tok},
                cost_usd=cost,
            )
            self.store.put(call.key, record)
        return ModelReply(
            "", "", p_tok, c_tok, latency, cost, False, attempts, failure.error_type, failure.message, call.key
        )

    def _replayable(self, record: Mapping[str, Any]) -> bool:
        """An answer, or a failure the request determines (unless `retry_errors`). Records of endpoint
        failures come only from older versions, which stored them: they are asked again."""
        error = record.get("error")
        if not error:
            return True
        return not self.retry_errors and error.get("type") not in ENDPOINT_FAILURES

    @staticmethod
    def _error_reply(
        key: str, error_type: str, message: str, attempts: int, latency: float = 0.0
    ) -> ModelReply:
        return ModelReply("", "", 0, 0, latency, 0.0, False, attempts, error_type, message, key)

    @staticmethod
    def _reply_from_record(record: Mapping[str, Any], key: str) -> ModelReply:
        usage = record.get("usage") or {}
        error = record.get("error") or None
        response = record.get("response") or {}
        return ModelReply(
            text=response.get("text", "") if response else "",
            reasoning=response.get("reasoning", "") if response else "",
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            reasoning_tokens=_stored_reasoning_tokens(record),
            latency_s=float(record.get("latency_s", 0.0)),
            cost_usd=float(record.get("cost_usd", 0.0)),
            cache_hit=True,
            attempts=0,
            error_type=error["type"] if error else None,
            error_message=f"{error['message']} ({REPLAYED_NOTE})" if error else None,
            request_key=key,
            tool_calls=tuple(dict(c) for c in response.get("tool_calls") or ()) if response else (),
        )
