"""The sources configuration (`sources/sources.yaml`): which database each source asset builds."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from memsql_assets.lib.atomic import atomic_path
from memsql_assets.lib.errors import ConfigError
from memsql_assets.lib.paths import REPO_ROOT
from memsql_assets.lib.sources.wide import VARIANTS
from memsql_assets.lib.vocabulary import BENCHMARKS, SOURCE_NAMES, SOURCE_PREFIXES

PREFIX = SOURCE_PREFIXES
DEFAULT_SOURCES_FILE = REPO_ROOT / "sources" / "sources.yaml"
# The top-level key of the sources file that chooses the benchmarks one home builds and evaluates.
BENCHMARKS_KEY = "benchmarks"


@dataclass(frozen=True)
class SourceSpec:
    name: str
    kind: Literal["embedded", "real"]
    seed: int = 0
    real_path: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)
    variant: str = VARIANTS[0]  # standard, or wide: the same data plus a warehouse's tables (wide.py)

    @property
    def prefix(self) -> str:
        return PREFIX[self.name]


def env_var_for(name: str) -> str:
    return f"MEMSQL_SOURCE_{name.upper()}"


def sources_file() -> Path:
    return Path(os.environ.get("MEMSQL_SOURCES_FILE", DEFAULT_SOURCES_FILE)).expanduser().resolve()


def _read_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise ConfigError(path, "<file>", "sources configuration file does not exist")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(path, "<file>", f"not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(path, "<top level>", "expected a mapping of source name -> settings")
    return raw


def _benchmarks(path: Path, raw: dict[str, Any]) -> tuple[str, ...]:
    chosen = raw.get(BENCHMARKS_KEY, list(BENCHMARKS))
    choices = ", ".join(BENCHMARKS)
    if not isinstance(chosen, list) or not chosen:
        raise ConfigError(
            path, BENCHMARKS_KEY, f"expected a non-empty list of benchmark names from {choices}"
        )
    for i, name in enumerate(chosen):
        if name not in BENCHMARKS:
            raise ConfigError(
                path, f"{BENCHMARKS_KEY}[{i}]", f"unknown benchmark {name!r}; expected one of {choices}"
            )
    return tuple(b for b in BENCHMARKS if b in chosen)  # in vocabulary order, each once


def load_benchmarks(path: Path | None = None) -> tuple[str, ...]:
    """The benchmarks the sources file chooses (`benchmarks:`, every one by default), in vocabulary order."""
    path = path or sources_file()
    return _benchmarks(path, _read_file(path))


def load_sources(path: Path | None = None, environ: dict[str, str] | None = None) -> dict[str, SourceSpec]:
    """Parse the sources file, apply MEMSQL_SOURCE_<NAME> overrides, and validate every field (the
    benchmark choice included: a home is never built from a file that names an unknown benchmark)."""
    path = path or sources_file()
    env = os.environ if environ is None else environ
    raw = _read_file(path)
    _benchmarks(path, raw)
    raw = {k: v for k, v in raw.items() if k != BENCHMARKS_KEY}
    unknown = set(raw) - set(SOURCE_NAMES)
    if unknown:
        raise ConfigError(path, sorted(unknown)[0], f"unknown source; expected one of {list(SOURCE_NAMES)}")
    specs: dict[str, SourceSpec] = {}
    for name in SOURCE_NAMES:
        entry = raw.get(name) or {}
        if not isinstance(entry, dict):
            raise ConfigError(path, name, "expected a mapping with kind/seed/real_path/options/variant")
        kind = entry.get("kind", "embedded")
        real_path = entry.get("real_path")
        override = env.get(env_var_for(name))
        if override:
            kind, real_path = "real", override
        if kind not in ("embedded", "real"):
            raise ConfigError(path, f"{name}.kind", f"got {kind!r}; expected 'embedded' or 'real'")
        seed = entry.get("seed", 0)
        if not isinstance(seed, int):
            raise ConfigError(path, f"{name}.seed", f"got {seed!r}; expected an integer")
        options = entry.get("options") or {}
        if not isinstance(options, dict):
            raise ConfigError(path, f"{name}.options", "expected a mapping")
        variant = entry.get("variant", VARIANTS[0])
        if variant not in VARIANTS:
            raise ConfigError(path, f"{name}.variant", f"got {variant!r}; expected one of {', '.join(VARIANTS)}")
        resolved: Path | None = None
        if real_path:
            resolved = Path(str(real_path)).expanduser()
            if not resolved.is_absolute():
                resolved = (path.parent / resolved).resolve()
        if kind == "real":
            if resolved is None:
                raise ConfigError(path, f"{name}.real_path", "kind is 'real' but no real_path is set")
            if not resolved.exists():
                raise ConfigError(path, f"{name}.real_path", f"{resolved} does not exist")
        specs[name] = SourceSpec(name, kind, seed, resolved, options, variant)
    return specs


def use_real_path(name: str, real_path: Path, path: Path | None = None) -> Path:
    """Set `kind: real` and `real_path` of source `name` in the sources file, keeping its comments.

    The edit touches only the two lines of that source's block; the result is validated before it
    replaces the file (atomically), so a failure leaves the file as it was."""
    path = path or sources_file()
    load_sources(path, environ={})  # the file must be valid before we edit it
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == f"{name}:"), None)
    if start is None:
        raise ConfigError(
            path, name, f"no block '{name}:' to edit; add kind: real and real_path: {real_path}"
        )
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i][:1] not in ("", " ", "#", "\n")), len(lines)
    )
    body = lines[start + 1 : end]
    settings = {"kind": "real", "real_path": json.dumps(str(real_path))}
    after = 0  # real_path goes right after kind when it is new
    for key, value in settings.items():
        at = next((i for i, line in enumerate(body) if re.match(rf"  {key}:", line)), None)
        if at is None:
            at = after
            body.insert(at, "")
        body[at] = f"  {key}: {value}\n"
        after = at + 1
    text = "".join(lines[: start + 1] + body + lines[end:])
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
        spec = load_sources(tmp, environ={})[name]
        if spec.kind != "real" or spec.real_path != real_path:
            raise ConfigError(
                path, name, f"editing the block did not yield kind: real and real_path: {real_path}"
            )
    return path
