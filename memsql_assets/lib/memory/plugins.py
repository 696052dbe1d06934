"""Which class implements a condition's memory, and its parameters, checked before anything runs.

A condition's `memory.implementation` (conditions.yaml) is, in this order:

1. a built-in name (`BUILTIN_MEMORIES`);
2. the name of an entry point of the group `memsql.memory` of an installed package (its
   pyproject's `[project.entry-points."memsql.memory"]`: `name = "package.module:Class"`);
3. `package.module:Class` of an importable module.

The class implements the memory protocol (protocol.py; subclassing `MemoryBase` gives the defaults)
and declares its parameters as a pydantic model `Params`; the condition's `params` are validated by
it. Every problem is one line naming the conditions file, the field and the cause: an unknown
implementation, a plug-in that cannot be imported, a class that is not a memory, parameters that
fail validation.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from memsql_assets.lib.conditions import CONDITIONS, Condition
from memsql_assets.lib.context_mode import ContextMode
from memsql_assets.lib.errors import ConfigError, MemsqlError
from memsql_assets.lib.memory.protocol import Memory, MemoryBase, MemoryTurn, NoParams, Retrieval
from memsql_assets.lib.memory.resolution import Payload
from memsql_assets.lib.vocabulary import ANALYST_BENCHMARKS, BENCHMARKS

ENTRY_POINT_GROUP = "memsql.memory"
BUILTIN_MEMORIES: dict[str, str] = {
    "none": "memsql_assets.lib.memory.builtin:Stateless",
    "window": "memsql_assets.lib.memory.builtin:Window",
    "episodic": "memsql_assets.lib.memory.builtin:Episodic",
    "trajectory": "memsql_assets.lib.memory.builtin:Trajectory",
    "summary": "memsql_assets.lib.memory.summary:RollingSummary",
    "mem0": "memsql_assets.lib.memory.mem0_memory:Mem0Memory",
}
# What every memory must have (the rest has defaults in MemoryBase, or is looked up with one).
REQUIRED_METHODS = ("retrieve", "persist")


def _entry_points() -> dict[str, str]:
    return {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def implementation_target(condition: Condition) -> str:
    """`module:Class` of the condition's memory: a built-in, an entry point, or the name itself."""
    name = condition.implementation
    if name in BUILTIN_MEMORIES:
        return BUILTIN_MEMORIES[name]
    plugins = _entry_points()
    if name in plugins:
        return plugins[name]
    if ":" in name:
        return name
    known = ", ".join([*BUILTIN_MEMORIES, *sorted(plugins)])
    raise ConfigError(
        condition.file,
        condition.field_path("memory", "implementation"),
        f"unknown memory implementation {name!r}; expected one of {known} (built in, or entry points of the "
        f"group {ENTRY_POINT_GROUP}) or package.module:Class",
    )


def memory_class(condition: Condition) -> type:
    """The class of the condition's memory, imported (a failure is one line naming the field)."""
    target = implementation_target(condition)
    where = condition.field_path("memory", "implementation")
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a plug-in's own import error, whatever its type
        raise ConfigError(
            condition.file, where, f"cannot import {module_name} for {condition.implementation!r}: {type(exc).__name__}: {exc}"
        ) from None
    cls = getattr(module, class_name, None) if class_name else None
    if not isinstance(cls, type):
        raise ConfigError(condition.file, where, f"{module_name} has no class {class_name!r} ({target})")
    missing = [m for m in REQUIRED_METHODS if not callable(getattr(cls, m, None))]
    if missing:
        raise ConfigError(
            condition.file, where, f"{target} is not a memory: it lacks {', '.join(missing)} (memory protocol)"
        )
    return cls


def memory_params(condition: Condition, cls: type) -> BaseModel | None:
    """The condition's params validated by the class's `Params` (None: the class declares none, and
    none may be given)."""
    schema = getattr(cls, "Params", None)
    if schema is None:
        if condition.params:
            field = condition.field_path("memory", "params", next(iter(condition.params)))
            raise ConfigError(condition.file, field, f"{cls.__name__} takes no parameters")
        return None
    try:
        return schema.model_validate(dict(condition.params))
    except ValidationError as exc:
        raise _params_error(condition, exc) from None


def _field_loc(error: Any) -> list[str]:
    """A validation error's field path, without the names pydantic gives the members of a union."""
    return [str(p) for p in error["loc"] if re.fullmatch(r"\w+", str(p))]


def _params_error(condition: Condition, exc: ValidationError) -> ConfigError:
    """The first failing parameter, with what each form it may take expected (a union's members)."""
    errors = exc.errors()
    loc = _field_loc(errors[0])
    field = condition.field_path("memory", "params", *loc)
    if errors[0]["type"] == "extra_forbidden":
        return ConfigError(condition.file, field, "unknown parameter")
    if errors[0]["type"] == "missing":
        return ConfigError(condition.file, field, "missing required parameter")
    expected = list(dict.fromkeys(e["msg"] for e in errors if _field_loc(e) == loc))
    return ConfigError(condition.file, field, f"{' or '.join(expected)}, got {errors[0].get('input')!r}")


class PluginMemory(MemoryBase):
    """A plug-in that does not subclass MemoryBase, with MemoryBase's defaults for what it lacks: every
    memory then has every method the harness calls."""

    OPTIONAL = ("open", "reset", "forget", "end_wave", "commit", "identity", "size", "stored_turns", "close")

    def __init__(self, inner: Any):
        super().__init__(NoParams())
        self.inner = inner
        for name in ("visibility", "uses_vectors", "blocking", "stateful"):
            if hasattr(inner, name):
                setattr(self, name, getattr(inner, name))
        for name in self.OPTIONAL:
            if callable(getattr(inner, name, None)):
                setattr(self, name, getattr(inner, name))

    def retrieve(self, turn: MemoryTurn, vector: list[float] | None) -> Retrieval:
        return self.inner.retrieve(turn, vector)

    def persist(self, payload: Payload) -> None:
        self.inner.persist(payload)


def build_memory(condition: Condition) -> Memory:
    """A fresh, unopened memory for one partition run of `condition`."""
    cls = memory_class(condition)
    params = memory_params(condition, cls)
    memory = cls(params) if params is not None else cls()
    return memory if isinstance(memory, MemoryBase) else PluginMemory(memory)


def condition_fingerprint(condition: Condition) -> str:
    """What a condition's results are a function of besides memsql's own code: its memory implementation,
    parameters, tools, context mode and history, and for a plug-in its module's source (a changed plug-in makes them stale)."""
    target = implementation_target(condition)
    module = target.partition(":")[0]
    source = None
    if not module.startswith("memsql_assets."):  # memsql's own code is in the assets' code version
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None else None
        source = hashlib.sha256(Path(origin).read_bytes()).hexdigest() if origin and Path(origin).is_file() else None
    spec_text = json.dumps(
        {
            "target": target,
            "params": dict(condition.params),
            "tools": condition.tools,
            "source": source,
            "context_mode": condition.context_mode,
            # A condition's own history; absent when unset, so that older fingerprints stay valid.
            **({"history": condition.history} if condition.history else {}),
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(spec_text.encode()).hexdigest()[:16]


def check_conditions(names: Iterable[str] | None = None) -> None:
    """Every condition's (or those named) memory imports and accepts its parameters, and its `main_run`
    names benchmarks it applies to; else one line."""
    for name in names if names is not None else CONDITIONS:
        check_condition(CONDITIONS[name])


def check_condition(condition: Condition) -> None:
    """`check_conditions` for one condition."""
    memory_params(condition, memory_class(condition))
    for benchmark in () if isinstance(condition.main_run, bool) else condition.main_run:
        if benchmark not in BENCHMARKS:
            raise ConfigError(
                condition.file,
                condition.field_path("main_run"),
                f"expected true, false or a list of benchmarks ({', '.join(BENCHMARKS)}), got {benchmark!r}",
            )
        check_benchmark(condition, benchmark)


def needs_analysts(condition: Condition) -> bool:
    """Whether the condition's memory is scoped to the analyst (`scope: analyst`, the episodic and mem0
    memories' parameter; a plug-in's params may say it too): it reads the sessions' analyst column."""
    return getattr(memory_params(condition, memory_class(condition)), "scope", None) == "analyst"


def applies(condition: Condition, benchmark: str) -> bool:
    """Whether the condition can be evaluated on `benchmark`: a memory scoped to the analyst needs analysts."""
    return benchmark in ANALYST_BENCHMARKS or not needs_analysts(condition)


def check_benchmark(condition: Condition, benchmark: str) -> None:
    """One line naming the condition when its memory needs analysts that `benchmark`'s sessions do not name."""
    if not applies(condition, benchmark):
        raise NoAnalystsError(
            f"condition {condition.name} ({condition.file}): its memory has scope: analyst, but the {benchmark} "
            f"benchmark's sessions name no analyst; evaluate it on {' or '.join(ANALYST_BENCHMARKS)}"
        )


def in_main_run(condition: Condition, benchmark: str) -> bool:
    """Whether `memsql run` evaluates the condition on `benchmark` (its `main_run`, where it applies)."""
    listed = condition.main_run if isinstance(condition.main_run, bool) else benchmark in condition.main_run
    return listed and applies(condition, benchmark)


class NoAnalystsError(MemsqlError):
    """A condition scoped to the analyst asked to run on a benchmark whose sessions name no analyst."""


class ReadsWithheldKeysError(MemsqlError):
    """A plug-in whose code reads `MemoryTurn.referenced_keys` asked to run in observed context mode."""


def check_context_mode(condition: Condition, mode: ContextMode) -> None:
    """In observed mode a plug-in whose module reads `referenced_keys` cannot run: refused before the
    partition starts (a read the source does not spell out raises at the read: context_mode.WithheldKeys)."""
    if mode != ContextMode.OBSERVED or condition.implementation in BUILTIN_MEMORIES:
        return
    module = importlib.import_module(memory_class(condition).__module__)
    origin = getattr(module, "__file__", None)
    if not origin or not Path(origin).is_file():
        return
    tree = ast.parse(Path(origin).read_text(encoding="utf-8"))
    lines = sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "referenced_keys"})
    if lines:
        raise ReadsWithheldKeysError(
            f"condition {condition.name} ({condition.file}): its memory {condition.implementation} reads "
            f"MemoryTurn.referenced_keys ({origin}, line {', '.join(map(str, lines))}), which {mode} context mode "
            f"withholds; read the question and the stored turns instead, or give the condition "
            f"`context_mode: {ContextMode.ANNOTATED}`"
        )
