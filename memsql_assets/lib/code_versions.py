"""Code versions: a hash of the code each asset runs, given to Dagster as the asset's `code_version`.

Dagster records the code version with every materialization and marks a result stale when it differs
from the loaded definitions' (the UI's "Stale" badge and its causes). Hashes are of file contents,
never of paths or times, so every clone of the same commit gets the same versions.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # memsql_assets/
CODE_SUFFIXES = (".py", ".yaml", ".yml", ".jsonl", ".json", ".sql", ".j2", ".html")


def digest(value: Any) -> str:
    """A short hash of a JSON-serialisable value (sorted keys: dict order never matters)."""
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _code_files(part: Path) -> list[Path]:
    if part.is_file():
        return [part]
    return sorted(
        p
        for p in part.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.name.endswith(CODE_SUFFIXES)
    )


def code_version(*parts: str, root: Path = PACKAGE_ROOT, exclude: tuple[str, ...] = ()) -> str:
    """Hash of the code files under `parts` (folders or files relative to memsql_assets/), but
    those under `exclude`."""
    h = hashlib.sha256()
    left_out = [root / e for e in exclude]
    for part in sorted(parts):
        for path in _code_files(root / part):
            if any(path == e or path.is_relative_to(e) for e in left_out):
                continue
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


# What each asset's result is a function of, besides its upstream data. A change in any of these
# files makes Dagster report the asset (every partition, for turn_results) stale.
# The prompts' source guidance is read by the prompts and the synthetic questions, never by the sources'
# builders: editing it leaves the source databases fresh.
SOURCE_GUIDANCE_CODE = "lib/sources/guidance.py"
SOURCES_CODE = ("lib/sources",)
BENCHMARK_CODE = ("lib/benchmark", "lib/sql")
SEMANTIC_CODE = ("lib/memory/semantic.py", "lib/memory/chroma.py", "lib/memory/embeddings.py")
TRAJECTORY_CODE = ("lib/trajectories", "lib/sql", SOURCE_GUIDANCE_CODE, "lib/memory", "lib/context_mode.py")
HARNESS_CODE = (
    "lib/agent",
    "lib/conditions.py",
    "lib/context_mode.py",
    "lib/benchmark",
    "lib/evaluation",
    "lib/harness",
    "lib/memory",
    "lib/models",
    "lib/reference",
    "lib/sql",
    SOURCE_GUIDANCE_CODE,
    "lib/trajectories",
    "lib/vocabulary.py",  # each benchmark's default context mode
)
# What a built-in model's answer is a function of, besides its request: part of its request key, so
# that a changed reference model answers anew instead of replaying what its old code stored.
BUILTIN_CODE = (
    "lib/reference/builtins.py",
    "lib/models/builtin_names.py",
    "lib/models/replies.py",  # message_text: the text a built-in reads and counts
    "lib/reference/reader_probe.py",
    "lib/sql/filters.py",
    "lib/reference/reference_agent.py",
    "lib/sql/syntax.py",
    "lib/agent/prompts.py",
    "lib/benchmark/templates",
)
# Code only the extended benchmark runs: the paper benchmark's assets leave it out of their versions,
# so that editing an extended template never makes the paper benchmark or its evaluations stale.
EXTENDED_ONLY_CODE = ("lib/benchmark/extended", "lib/benchmark/wording.py", "lib/benchmark/templates/extended")
