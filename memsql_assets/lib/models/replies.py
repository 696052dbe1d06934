"""What a provider's reply carries, read once: the answer text (checked), the reasoning kept apart,
the tool calls, and the usage; a reply without usable text is MalformedResponse."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memsql_assets.lib.models.failures import MalformedResponse, litellm_module


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


def message_text(message: Mapping[str, Any]) -> str:
    """The text of one chat message (string content, or the text parts of a content list)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return ""


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
    return int(litellm_module().token_counter(model=model or "", text=reasoning))


def count_prompt_tokens(litellm_model: str, messages: list[dict[str, Any]]) -> int:
    """The prompt tokens of `messages` by litellm's tokenizer for the model (its default where it has none)."""
    return int(litellm_module().token_counter(model=litellm_model, messages=messages))


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
