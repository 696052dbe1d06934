"""A registry model as a plain `messages -> text` function, for offline builders that ask an LLM
(synthetic questions, the LLM explorer). Calls go through the gateway: cached, retried, audited."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.models.gateway import ModelGateway


def proposer(gateway: ModelGateway, model_key: str) -> Callable[[list[dict[str, str]]], str]:
    def propose(messages: list[dict[str, str]]) -> str:
        reply = asyncio.run(gateway.acomplete(model_key, messages, {}))
        if not reply.ok:
            raise MemsqlError(f"model {model_key}: {reply.error_type}: {reply.error_message}")
        return reply.text

    return propose
