"""How the gateway reaches the built-in models (`memsql/<name>`) without importing them.

The reference models read the agent's prompts, a layer above the gateway (docs/architecture.md,
"Rooms"), so lib/reference registers its server here when it is imported, and the layers that
build gateways (harness, the trajectory resources, tests' conftest) import lib/reference.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsql_assets.lib.errors import MemsqlError

Messages = list[dict[str, Any]]


class BuiltinRequestError(MemsqlError):
    """A built-in cannot answer this request (the gateway types it `bad_request`, as litellm would)."""


@dataclass(frozen=True)
class BuiltinServer:
    # The turn fields each built-in may read; they are also part of its request key (gateway.py).
    context_fields: Mapping[str, tuple[str, ...]]
    # Built-ins that answer requests offering tools with tool calls (agent_step).
    agents: frozenset[str]
    # (text, prompt_tokens, completion_tokens) of one built-in for (name, messages, context, params, home).
    answer: Callable[[str, Messages, Mapping[str, Any], Mapping[str, Any], Path], Awaitable[tuple[str, int, int]]]
    # (tool calls, prompt_tokens, completion_tokens) of an agent's next step for (name, messages, context, params).
    agent_step: Callable[
        [str, Messages, Mapping[str, Any], Mapping[str, Any]], tuple[tuple[dict[str, str], ...], int, int]
    ]


_served: list[BuiltinServer] = []


def serve_builtins(server: BuiltinServer) -> None:
    _served[:] = [server]


def builtin_server() -> BuiltinServer:
    if not _served:
        raise MemsqlError("the built-in models are not loaded: import memsql_assets.lib.reference before calling one")
    return _served[0]
