"""Content-addressed store of every model request and its response.

It is the cache (a re-run makes zero calls), the resume point (a killed run finds what it already
paid for), the audit trail and the cost ledger. The key is the sha256 of the canonical JSON of
{litellm_model, params, messages[, builtin_context][, cell]}: everything that determines the answer,
and the evaluation cell (model, condition, session, turn, epoch) the answer is a sample for, and
nothing else (no secrets, no timestamps). With the cell in the key, two cells whose prompts are
identical (turn 1 under A and B) each get their own sample of the model; without it (cell=None, the
`share_identical_prompts` setting, and every record written before schema 2) identical prompts
share one answer. One JSON file per key, written atomically, so a kill -9 leaves either the old
state or the complete record, never half a file. Each record carries a `checksum` (sha256 of its
canonical JSON without it): a record damaged on disk (bytes flipped, written short) is a miss,
counted in `rejected`, and the request is made again; it is never replayed.

Secrets never reach disk: params/headers whose names look like credentials are scrubbed from the
key material and the record, and any known secret value (the API keys the registry points at) is
redacted from the serialized record wherever it appears (e.g. echoed in a provider error).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memsql_assets.lib.atomic import write_text_atomic
from memsql_assets.lib.models.registry import is_secret_name

log = logging.getLogger(__name__)

REDACTED = "[redacted]"
SHARDS = tuple(f"{i:02x}" for i in range(256))  # records live under root/<first two hex digits of the key>/
RECORD_SCHEMA = 2  # 2: the evaluation cell in the key and the record (schema 1 records still read)


def scrub(obj: Any) -> Any:
    """A copy of `obj` without any mapping entry whose name looks like a credential (for params
    and headers, recursively: `extra_headers: {"x-api-key": ...}` goes too)."""
    if isinstance(obj, Mapping):
        return {str(k): scrub(v) for k, v in obj.items() if not is_secret_name(str(k))}
    if isinstance(obj, list | tuple):
        return [scrub(v) for v in obj]
    return obj


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def request_key(
    litellm_model: str,
    params: Mapping[str, Any],
    messages: list[dict[str, Any]],
    builtin_context: Mapping[str, Any] | None = None,
    cell: Mapping[str, Any] | None = None,
    builtin_code: str | None = None,
) -> str:
    """sha256 of what determines the answer. `builtin_context` and `builtin_code` are only for
    built-ins, whose answer also depends on the turn fields they read (see gateway.py for why) and on
    their code's version; `cell` (evaluation_cell) makes the answer that cell's own sample. Without
    them, the key is the schema-1 key of the same request."""
    material: dict[str, Any] = {
        "litellm_model": litellm_model,
        "params": scrub(params),
        "messages": messages,
    }
    if builtin_context is not None:
        material["builtin_context"] = builtin_context
    if cell is not None:
        material["cell"] = cell
    if builtin_code is not None:
        material["builtin_code"] = builtin_code
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()


def evaluation_cell(model: str, condition: str, turn_id: str, epoch: int = 1) -> dict[str, Any]:
    """The cell a request is a sample for; `turn_id` is agent.turn_context's `<session_id>#<turn_index>`."""
    session, sep, turn = turn_id.rpartition("#")
    if not sep or not session or not turn.isdigit():
        raise ValueError(f"turn_id {turn_id!r}: expected <session_id>#<turn_index>")
    return {"model": model, "condition": condition, "session": session, "turn": int(turn), "epoch": epoch}


def secret_list(values: Iterable[str]) -> list[str]:
    """The values worth redacting, longest first: short strings would redact innocent text, real keys are long."""
    return sorted({s for s in values if s and len(s) >= 8}, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret (from secret_list) replaced, in its JSON-escaped spelling too."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
        escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
        if escaped != secret:
            text = text.replace(escaped, REDACTED)
    return text


def checksum(record: Mapping[str, Any]) -> str:
    """sha256 of a record's canonical JSON (without its own `checksum`)."""
    return hashlib.sha256(canonical_json(record).encode("utf-8")).hexdigest()


def requests_dir(home: Path) -> Path:
    return Path(home) / "requests"


class RequestStore:
    """`root/<k[:2]>/<k>.json`; `secret_values` are redacted from every record written."""

    def __init__(self, root: Path, secret_values: Iterable[str] = ()):
        self.root = Path(root)
        self.secrets = secret_list(secret_values)
        self.rejected = 0  # damaged records read by this store (unparseable, wrong key or checksum)

    @classmethod
    def at_home(cls, home: Path, secret_values: Iterable[str] = ()) -> RequestStore:
        return cls(requests_dir(home), secret_values)

    def add_secret_values(self, values: Iterable[str]) -> None:
        self.secrets = secret_list([*self.secrets, *values])

    def make_shards(self) -> None:
        """Create the 256 folders records go into, once per store (a partition's setup calls it): a
        new folder costs a disk round trip, which a fresh store's first writes would otherwise pay one
        by one inside their turns. The last folder made marks the set done."""
        if (self.root / SHARDS[-1]).is_dir():
            return
        for shard in SHARDS:
            (self.root / shard).mkdir(parents=True, exist_ok=True)

    def path_for(self, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not a request key (sha256 hex): {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record, or None. A damaged file (unreadable, another key, a checksum that
        does not match) counts as a miss: the request is made again and the file replaced, which is
        always safe for a cache. Records written before checksums have none and are read as they are."""
        path = self.path_for(key)
        try:
            record = json.loads(path.read_bytes())  # UTF-8 by construction; bytes skip a text layer
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            return self._reject(path, f"unreadable ({exc})")
        if not isinstance(record, dict) or record.get("key") != key:
            return self._reject(path, "it does not carry its key")
        stored = record.pop("checksum", None)
        if stored is not None and stored != checksum(record):
            return self._reject(path, "its checksum does not match its content")
        return record

    def _reject(self, path: Path, why: str) -> None:
        self.rejected += 1
        log.warning("request store: ignoring damaged record %s: %s; asking again", path, why)

    def put(self, key: str, record: Mapping[str, Any]) -> Path:
        """Write `record` under `key`. Name-based scrubbing applies to the request's params and
        headers (where credentials travel); value-based redaction applies to the whole text."""
        body = dict(record)
        request = body.get("request")
        if isinstance(request, Mapping):
            request = dict(request)
            for part in ("params", "headers"):
                if part in request:
                    request[part] = scrub(request[part])
            body["request"] = request
        body["key"] = key
        body.setdefault("schema", RECORD_SCHEMA)
        plain = canonical_json(body)
        text = redact(plain, self.secrets)
        if text != plain:  # a redacted key may sort elsewhere: the canonical JSON of what is stored
            text = canonical_json(json.loads(text))
        # The record is its canonical JSON with the checksum of that JSON as its last member (one
        # serialization per call: this runs on every model call's path).
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        text = f'{text[:-1]},"checksum":"{digest}"}}'
        path = self.path_for(key)
        # No fsync: the rename already survives kill -9, and a record lost to an OS crash costs only
        # a repeated request, while an fsync per call would sit on the harness's path.
        write_text_atomic(path, text + "\n", durable=False)
        return path

    def __contains__(self, key: str) -> bool:
        return self.path_for(key).exists()

    def count(self) -> int:
        return sum(1 for _ in self.root.glob("??/*.json")) if self.root.exists() else 0
