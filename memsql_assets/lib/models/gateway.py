"""The one door to every model: request store lookup, the call, retry policy, typed errors.

API models are called through litellm; built-ins (`memsql/<name>`) in-process (builtins.answer),
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
exactly the fields the built-in reads (builtins.BUILTIN_CONTEXT_FIELDS). For API models the turn
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
import json
import os
import random
import re
import socket
import ssl
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import tenacity

from memsql_assets.lib.code_versions import BUILTIN_CODE, code_version
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.http_retry import Retryable, RetryPolicy, parse_retry_after, retrying
from memsql_assets.lib.models.builtins import (
    AGENT_BUILTINS,
    BUILTIN_CONTEXT_FIELDS,
    BuiltinRequestError,
    agent_step,
    answer,
    message_text,
)
from memsql_assets.lib.models.concurrency import AdaptiveLimit
from memsql_assets.lib.models.registry import ModelEntry, Registry
from memsql_assets.lib.models.request_store import RequestStore, request_key, scrub
from memsql_assets.lib.paths import memsql_home


@functools.cache
def _litellm() -> Any:
    """litellm, imported on the first call of an external model: the import takes seconds in every
    process, and the built-ins never reach it."""
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banners in run logs
    return litellm


def _litellm_error(exc: BaseException, *names: str) -> bool:
    """`exc` is one of litellm's exception types `names` (never, where nothing imported litellm)."""
    lib = sys.modules.get("litellm")
    return lib is not None and isinstance(exc, tuple(getattr(lib, n) for n in names))


DEFAULT_MAX_CHARS = 200_000

# Typed errors on a reply (error_type). Transient ones are retried; the rest are permanent.
TRANSIENT = frozenset({"rate_limited", "server_error", "timeout", "connection_error"})
# Failures that say nothing about the request (the endpoint, the key, this code): never replayed from
# the request store, and a streak of one of them stops a partition (harness/runner.py).
# `cost_cap`: the run's spend reached its cap (max_cost_usd); the call was not made, and the partition stops.
COST_CAP = "cost_cap"
ENDPOINT_FAILURES = TRANSIENT | {"auth_error", "permission_denied", "unavailable", "internal_error", COST_CAP}
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


@dataclass(frozen=True)
class _Failure:
    error_type: str
    message: str
    retry_after_s: float | None = None
    status_code: int | None = None
    cannot_connect: bool = False
    # What the provider reported using (a malformed reply is billed too); 0 when it reported nothing.
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def transient(self) -> bool:
        return self.error_type in TRANSIENT


class _AttemptFailed(Exception):
    """One model call's failure, classified, and how long the call took."""

    def __init__(self, failure: _Failure, latency: float):
        super().__init__(failure.message)
        self.failure = failure
        self.latency = latency


class MalformedResponse(Exception):
    """The provider answered, but not with usable text; `usage` is what it reported using."""

    def __init__(self, message: str, usage: tuple[int, int] = (0, 0)):
        super().__init__(message)
        self.usage = usage


def _headers_of(exc: BaseException) -> Mapping[str, str] | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers:
        return headers
    return getattr(exc, "litellm_response_headers", None)


# The exceptions, anywhere in the chain, of a call that never reached the endpoint. litellm maps
# them to InternalServerError (status 500) for some providers, so the chain decides, not the class.
_CANNOT_CONNECT = (httpx.ConnectError, ConnectionRefusedError, socket.gaierror, ssl.SSLError)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and its causes (explicit or implicit), each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        yield current
        seen.add(id(current))
        current = current.__cause__ or current.__context__


def _cannot_connect(exc: BaseException) -> BaseException | None:
    return next((e for e in _chain(exc) if isinstance(e, _CANNOT_CONNECT)), None)


# litellm 1.110.2's words for a 2xx answer that is not a chat completion (`{"foo": 1}`, HTML, a JSON
# list, malformed tool calls), which it reports as a 500 of its own making; tests/models/test_gateway.py pins them.
_NOT_A_COMPLETION = (
    "Empty or invalid response from LLM endpoint",
    "provider returned a response with no 'choices'",
    "provider returned 'choices' that is not a list",
    "Invalid response object",  # e.g. `tool_calls` without a function (tests/hardening/test_fault_server.py)
)
_MAX_ANSWER_CHARS = 300  # of an unreadable answer quoted in the error (it may be a whole web page)


def _not_a_completion(exc: BaseException) -> str | None:
    """What the endpoint answered, when it answered (no HTTP error status anywhere in the chain) with
    something that is not an OpenAI chat completion: a body that is not JSON, or JSON of another
    shape. None otherwise, e.g. for a real 500, which stays a retried `server_error`."""
    chain = list(_chain(exc))
    if any(isinstance(e, httpx.HTTPStatusError) for e in chain):
        return None
    if not any(isinstance(e, json.JSONDecodeError) or any(m in str(e) for m in _NOT_A_COMPLETION) for e in chain):
        return None
    text = " ".join(str(exc).split())
    if len(text) > _MAX_ANSWER_CHARS:
        text = f"{text[:_MAX_ANSWER_CHARS]}... ({len(text):,} chars)"
    return f"the endpoint answered, but not with an OpenAI chat completion: {text}"


def classify(exc: BaseException) -> _Failure:
    """Map an exception from a model call to a typed failure (order: most specific first)."""
    message = str(exc) or type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    if isinstance(exc, MalformedResponse):
        return _Failure(
            "malformed_response", message, prompt_tokens=exc.usage[0], completion_tokens=exc.usage[1]
        )
    if isinstance(exc, BuiltinRequestError):
        return _Failure("bad_request", message, None, None)
    unreadable = _not_a_completion(exc)
    if unreadable is not None:
        return _Failure("malformed_response", unreadable)
    cause = _cannot_connect(exc)
    if cause is not None:
        # aiohttp's text names the SSL context object (an address that differs per run): drop it.
        text = re.sub(r" ssl:<[^>]*>", "", str(cause) or type(cause).__name__)
        return _Failure("connection_error", f"cannot connect: {text}", None, None, cannot_connect=True)
    if _litellm_error(exc, "RateLimitError") or status == 429:
        return _Failure("rate_limited", message, parse_retry_after(_headers_of(exc)), 429)
    if isinstance(exc, asyncio.TimeoutError | TimeoutError) or _litellm_error(exc, "Timeout") or status == 408:
        return _Failure("timeout", message, None, status)
    if _litellm_error(exc, "ContextWindowExceededError"):
        return _Failure("context_window_exceeded", message, None, status)
    if _litellm_error(exc, "ContentPolicyViolationError"):
        return _Failure("content_policy", message, None, status)
    if _litellm_error(exc, "AuthenticationError") or status == 401:
        return _Failure("auth_error", message, None, status)
    if _litellm_error(exc, "PermissionDeniedError") or status == 403:
        return _Failure("permission_denied", message, None, status)
    if _litellm_error(exc, "NotFoundError") or status == 404:
        return _Failure("not_found", message, None, status)
    if _litellm_error(exc, "APIConnectionError"):
        return _Failure("connection_error", message, None, status)
    if _litellm_error(exc, "InternalServerError", "ServiceUnavailableError") or (
        status is not None and status >= 500
    ):
        return _Failure("server_error", message, parse_retry_after(_headers_of(exc)), status)
    if _litellm_error(exc, "BadRequestError") or (status is not None and 400 <= status < 500):
        return _Failure("bad_request", message, None, status)
    if isinstance(exc, ConnectionError):
        return _Failure("connection_error", message, None, None)
    return _Failure("internal_error", f"{type(exc).__name__}: {message}", None, status)


@dataclass(frozen=True)
class Extracted:
    """What one provider reply carries: its answer text, its reasoning (kept apart), and its usage."""

    text: str
    reasoning: str
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int
    tool_calls: tuple[dict[str, str], ...] = ()


def tool_calls_of(message: Any) -> tuple[dict[str, str], ...]:
    """The function calls of a reply message, as {"id", "name", "arguments"} (arguments as sent)."""
    out = []
    for i, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        arguments = getattr(function, "arguments", None)
        out.append({
            "id": str(getattr(call, "id", None) or f"call_{i}"),
            "name": str(getattr(function, "name", None) or ""),
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        })
    return tuple(out)


def extract_reply(response: Any, max_chars: int, model: str | None = None) -> Extracted:
    """The reply's text, reasoning and usage. Text comes from message content only; reasoning
    (reasoning_content / thinking blocks) is kept apart and never used for SQL. A malformed reply
    raises MalformedResponse carrying the usage the provider reported."""
    usage = getattr(response, "usage", None)
    tokens = (int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0))
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedResponse("response has no choices", tokens)
    message = getattr(choices[0], "message", None)
    if message is None:
        raise MalformedResponse("first choice has no message", tokens)
    content = getattr(message, "content", None)
    if isinstance(content, list):  # content blocks: keep text blocks only
        content = message_text({"content": content})
    calls = tool_calls_of(message)
    if calls and content is None:  # a reply of function calls only
        content = ""
    content = checked_text(content, tokens, max_chars)
    reasoning = getattr(message, "reasoning_content", None) or ""
    if not reasoning:
        blocks = getattr(message, "thinking_blocks", None) or []
        reasoning = "\n".join(str(b.get("thinking", "")) for b in blocks if isinstance(b, Mapping))
    return Extracted(content, str(reasoning), *tokens, reasoning_tokens(usage, str(reasoning), model), calls)


def reasoning_tokens(usage: Any, reasoning: str, model: str | None) -> int:
    """usage.completion_tokens_details.reasoning_tokens where the provider reports it; else the
    tokens of the thinking text it returned, counted with litellm's tokenizer for `model`."""
    details = getattr(usage, "completion_tokens_details", None)
    if isinstance(details, Mapping):
        reported = details.get("reasoning_tokens")
    else:
        reported = getattr(details, "reasoning_tokens", None)
    if reported:
        return int(reported)
    if not reasoning:
        return 0
    return int(_litellm().token_counter(model=model or "", text=reasoning))


def count_prompt_tokens(litellm_model: str, messages: list[dict[str, Any]]) -> int:
    """The prompt tokens of `messages` by litellm's tokenizer for the model (its default where it has none)."""
    return int(_litellm().token_counter(model=litellm_model, messages=messages))


def _stored_reasoning_tokens(record: Mapping[str, Any]) -> int:
    """A request-store record's reasoning tokens; a record stored before they were counted gets its
    kept reasoning text counted."""
    usage = record.get("usage") or {}
    if "reasoning_tokens" in usage:
        return int(usage["reasoning_tokens"])
    response = record.get("response") or {}
    return reasoning_tokens(None, str(response.get("reasoning") or ""), record.get("litellm_model"))


def checked_text(content: Any, tokens: tuple[int, int], max_chars: int) -> str:
    """`content` if it is usable answer text (a string, valid UTF-8, at most `max_chars`), else
    MalformedResponse carrying the usage `tokens` the provider reported."""
    if content is None:
        raise MalformedResponse("message content is None", tokens)
    if not isinstance(content, str):
        raise MalformedResponse(f"message content is {type(content).__name__}, expected text", tokens)
    try:
        content.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MalformedResponse(f"message content is not valid UTF-8 ({exc.reason})", tokens) from None
    if len(content) > max_chars:
        raise MalformedResponse(
            f"message content is {len(content):,} chars, over the {max_chars:,} limit", tokens
        )
    return content


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
    litellm = _litellm()
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
        fields = BUILTIN_CONTEXT_FIELDS[name]
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
            response = await _litellm().acompletion(
                model=entry.litellm_model, messages=messages, num_retries=0, timeout=self.timeout_s, **call_kwargs
            )
            return extract_reply(response, self.max_chars, entry.litellm_model)
        if entry.builtin_name in AGENT_BUILTINS and call_kwargs.get("tools"):
            calls, p_tok, c_tok = agent_step(entry.builtin_name, messages, builtin_context, call_kwargs)
            return Extracted("", "", p_tok, c_tok, 0, calls)
        text, p_tok, c_tok = await answer(entry.builtin_name, messages, builtin_context, call_kwargs, self.home)
        return Extracted(checked_text(text, (p_tok, c_tok), self.max_chars), "", p_tok, c_tok, 0)

    def _finish_error(self, call: _Call, failure: _Failure, attempts: int, latency: float) -> ModelReply:
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
