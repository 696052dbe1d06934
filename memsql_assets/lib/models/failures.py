"""A model call's failure as a typed error (`error_type`): which exception means what, which types are
transient (retried) and which say nothing about the request (never replayed). litellm is imported
here on first use only: the built-ins never need it."""

from __future__ import annotations

import asyncio
import functools
import json
import re
import socket
import ssl
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from memsql_assets.lib.http_retry import parse_retry_after
from memsql_assets.lib.models.builtin_serving import BuiltinRequestError


@functools.cache
def litellm_module() -> Any:
    """litellm, imported on the first call of an external model: the import takes seconds in every
    process, and the built-ins never reach it."""
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback" banners in run logs
    return litellm


def litellm_error(exc: BaseException, *names: str) -> bool:
    """`exc` is one of litellm's exception types `names` (never, where nothing imported litellm)."""
    lib = sys.modules.get("litellm")
    return lib is not None and isinstance(exc, tuple(getattr(lib, n) for n in names))


# Typed errors on a reply (error_type). Transient ones are retried; the rest are permanent.
TRANSIENT = frozenset({"rate_limited", "server_error", "timeout", "connection_error"})
# Failures that say nothing about the request (the endpoint, the key, this code): never replayed from
# the request store, and a streak of one of them stops a partition (harness/runner.py).
# `cost_cap`: the run's spend reached its cap (max_cost_usd); the call was not made, and the partition stops.
COST_CAP = "cost_cap"
ENDPOINT_FAILURES = TRANSIENT | {"auth_error", "permission_denied", "unavailable", "internal_error", COST_CAP}

@dataclass(frozen=True)
class Failure:
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


def classify(exc: BaseException) -> Failure:
    """Map an exception from a model call to a typed failure (order: most specific first)."""
    message = str(exc) or type(exc).__name__
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    if isinstance(exc, MalformedResponse):
        return Failure(
            "malformed_response", message, prompt_tokens=exc.usage[0], completion_tokens=exc.usage[1]
        )
    if isinstance(exc, BuiltinRequestError):
        return Failure("bad_request", message, None, None)
    unreadable = _not_a_completion(exc)
    if unreadable is not None:
        return Failure("malformed_response", unreadable)
    cause = _cannot_connect(exc)
    if cause is not None:
        # aiohttp's text names the SSL context object (an address that differs per run): drop it.
        text = re.sub(r" ssl:<[^>]*>", "", str(cause) or type(cause).__name__)
        return Failure("connection_error", f"cannot connect: {text}", None, None, cannot_connect=True)
    if litellm_error(exc, "RateLimitError") or status == 429:
        return Failure("rate_limited", message, parse_retry_after(_headers_of(exc)), 429)
    if isinstance(exc, asyncio.TimeoutError | TimeoutError) or litellm_error(exc, "Timeout") or status == 408:
        return Failure("timeout", message, None, status)
    if litellm_error(exc, "ContextWindowExceededError"):
        return Failure("context_window_exceeded", message, None, status)
    if litellm_error(exc, "ContentPolicyViolationError"):
        return Failure("content_policy", message, None, status)
    if litellm_error(exc, "AuthenticationError") or status == 401:
        return Failure("auth_error", message, None, status)
    if litellm_error(exc, "PermissionDeniedError") or status == 403:
        return Failure("permission_denied", message, None, status)
    if litellm_error(exc, "NotFoundError") or status == 404:
        return Failure("not_found", message, None, status)
    if litellm_error(exc, "APIConnectionError"):
        return Failure("connection_error", message, None, status)
    if litellm_error(exc, "InternalServerError", "ServiceUnavailableError") or (
        status is not None and status >= 500
    ):
        return Failure("server_error", message, parse_retry_after(_headers_of(exc)), status)
    if litellm_error(exc, "BadRequestError") or (status is not None and 400 <= status < 500):
        return Failure("bad_request", message, None, status)
    if isinstance(exc, ConnectionError):
        return Failure("connection_error", message, None, None)
    return Failure("internal_error", f"{type(exc).__name__}: {message}", None, status)
