"""Memory conditions (SPEC §2, DESIGN decisions 5 and 13), declared as data in `conditions.yaml`.

Each condition names its memory implementation with that implementation's parameters
(lib/memory/plugins.py resolves and validates them), whether its turns run through the agent loop
with tools, whether their first message carries the schema, whether the paper evaluates it, and
whether `memsql run` evaluates it. The file beside
models.yaml holds the built-in conditions; `MEMSQL_CONDITIONS_FILE` names a user's file whose
conditions are added after them (a name the built-in file uses is refused there). Everything else
derives from this table: the vocabulary's names, the Dagster `condition` partitions, dbt's accepted
values and the report.

The file's shape is checked when this module is imported (every process reads it once); whether
each implementation can be imported and accepts its parameters is checked before anything runs
(`check_conditions` in lib/memory/plugins.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationError, model_validator

from memsql_assets.lib.config_files import FieldProblem, Strict, config_error, read_yaml
from memsql_assets.lib.context_mode import CONTEXT_MODES, ContextMode
from memsql_assets.lib.errors import ConfigError, MemsqlError
from memsql_assets.lib.history import HISTORIES, History

CONDITIONS_FILE_ENV = "MEMSQL_CONDITIONS_FILE"
BUILTIN_CONDITIONS_FILE = Path(__file__).resolve().parents[2] / "conditions.yaml"
# A partition key that is also a safe folder name (condition=<name>) and SQL string.
CONDITION_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")


def _condition_name(name: str) -> str:
    if not CONDITION_NAME_RE.match(name):
        raise FieldProblem("", "expected a name of letters, digits and _ starting with a letter (at most 32)")
    return name


def _context_mode(mode: str) -> str:
    if mode not in CONTEXT_MODES:
        raise FieldProblem("", f"expected one of {'|'.join(CONTEXT_MODES)}, got {mode!r}")
    return mode


def _main_run(value: Any) -> bool | list[str]:
    if isinstance(value, bool) or (isinstance(value, list) and value and all(isinstance(v, str) for v in value)):
        return value
    raise FieldProblem("", f"expected true, false or a non-empty list of benchmark names, got {value!r}")


def _history(history: str) -> str:
    if history not in HISTORIES:
        raise FieldProblem("", f"expected one of {'|'.join(HISTORIES)}, got {history!r}")
    return history


class MemorySpec(Strict):
    """Which memory implementation a condition's turns read and write, and its parameters."""

    implementation: str = Field(min_length=1)
    """A built-in name (none, window, episodic, trajectory, summary, mem0), the name of an entry point of
    the group `memsql.memory`, or `package.module:Class` of an installed package."""
    params: dict[str, Any] = Field(default_factory=dict)
    """The implementation's parameters; its own schema (`Params`) validates them before anything runs."""


class ConditionSpec(Strict):
    """One memory condition: a Dagster `condition` partition."""

    memory: MemorySpec
    """The memory implementation and its parameters."""
    description: str = ""
    """What a person should know about the condition."""
    tools: bool = False
    """Each turn runs through the agent loop with the exploration tools (lib/agent/loop.py)."""
    schema_in_prompt: bool | None = None
    """The first message carries the source guidance and the whole schema (its DDL). Default: true
    for a single-shot condition; false under `tools: true`, where the agent finds the schema with
    its tools (AgentSM's setting: schemas too large for a prompt). false needs `tools: true`."""
    paper: bool = False
    """The paper evaluates this condition: its claims are checked in these (dbt var `paper_conditions`)."""
    main_run: Annotated[Any, AfterValidator(_main_run)] = True
    """`memsql run` evaluates the reference models under it (conditions with tools never: `memsql eval`):
    on every benchmark it applies to (true), on none (false), or on those listed. A memory scoped to the
    analyst applies only to benchmarks whose sessions name their analyst; lib/memory/plugins.py checks
    the names (`check_conditions`)."""
    context_mode: Annotated[str, AfterValidator(_context_mode)] | None = None
    """What its memory is given (lib/context_mode.py): annotated or observed; unset: the benchmark's default."""
    history: Annotated[str, AfterValidator(_history)] | None = None
    """Whose earlier answers its memory stores (lib/history.py): model or gold; unset: model,
    unless `memsql eval --history` asks."""

    @model_validator(mode="after")
    def _answerable(self) -> ConditionSpec:
        if self.schema_in_prompt is False and not self.tools:
            raise FieldProblem(
                "schema_in_prompt",
                "false needs tools: true (a single-shot model without the schema cannot answer)",
            )
        return self

    @property
    def schema_shown(self) -> bool:
        """Whether the first message carries the schema, the default applied."""
        return not self.tools if self.schema_in_prompt is None else self.schema_in_prompt


class ConditionsFile(Strict):
    """The whole file: exactly one top-level key."""

    conditions: dict[Annotated[str, AfterValidator(_condition_name)], ConditionSpec] = Field(min_length=1)
    """Condition name (its partition key) -> condition, in report order."""


@dataclass(frozen=True)
class Condition:
    name: str
    implementation: str
    params: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    tools: bool = False  # the turn runs through the agent loop, with the exploration tools
    schema_in_prompt: bool = True  # the first message carries the source guidance and the schema
    paper: bool = False
    main_run: bool | tuple[str, ...] = True  # true, false, or the benchmarks `memsql run` evaluates it on
    context_mode: ContextMode | None = None  # None: the benchmark's default (vocabulary.context_mode)
    history: History | None = None  # None: the run's setting, else the model's own (history.py)
    file: Path = BUILTIN_CONDITIONS_FILE  # where it is declared: errors about it name this file

    def field_path(self, *parts: str) -> str:
        """`conditions.<name>.<parts>`: how an error names one of this condition's fields."""
        return ".".join(("conditions", self.name, *parts))


def _schema_at(loc: list[str]) -> type[Strict] | None:
    nested: dict[tuple[str, ...], type[Strict]] = {(): ConditionSpec, ("memory",): MemorySpec}
    if not loc:
        return ConditionsFile
    if loc[0] != "conditions" or len(loc) < 2:
        return None
    return nested.get(tuple(loc[2:]))


def read_conditions_file(path: Path) -> dict[str, Condition]:
    """The conditions one file declares, validated (an error names the file and the field)."""
    data = read_yaml(path, "conditions file")
    if not isinstance(data, dict) or "conditions" not in data:
        raise ConfigError(path, "conditions", "expected a top-level mapping with exactly one key, 'conditions'")
    try:
        parsed = ConditionsFile.model_validate(data)
    except ValidationError as exc:
        empty = {"conditions": "expected a non-empty mapping of condition name -> condition"}
        raise config_error(path, exc.errors()[0], _schema_at, empty=empty) from None
    return {
        name: Condition(
            name=name,
            implementation=spec.memory.implementation,
            params=MappingProxyType(dict(spec.memory.params)),
            description=spec.description,
            tools=spec.tools,
            schema_in_prompt=spec.schema_shown,
            paper=spec.paper,
            main_run=spec.main_run if isinstance(spec.main_run, bool) else tuple(spec.main_run),
            context_mode=ContextMode(spec.context_mode) if spec.context_mode else None,
            history=History(spec.history) if spec.history else None,
            file=path,
        )
        for name, spec in parsed.conditions.items()
    }


def load_conditions(user_file: Path | str | None = None) -> Mapping[str, Condition]:
    """The built-in conditions, then those of `user_file` (default: $MEMSQL_CONDITIONS_FILE, if set)."""
    table = read_conditions_file(BUILTIN_CONDITIONS_FILE)
    extra = user_file if user_file is not None else os.environ.get(CONDITIONS_FILE_ENV) or None
    if extra is not None:
        path = Path(extra).expanduser()
        for name, condition in read_conditions_file(path).items():
            if name in table:
                raise ConfigError(
                    path,
                    condition.field_path(),
                    f"clashes with the built-in condition {name} of {BUILTIN_CONDITIONS_FILE}; choose another name",
                )
            table[name] = condition
    return MappingProxyType(table)


CONDITIONS: Mapping[str, Condition] = load_conditions()


class UnknownConditionError(MemsqlError):
    pass


def single_shot(names: Iterable[str]) -> list[str]:
    """The conditions of `names` whose turns are one model call (no tools)."""
    return [n for n in names if not get_condition(n).tools]


def get_condition(name: str) -> Condition:
    try:
        return CONDITIONS[name]
    except KeyError:
        raise UnknownConditionError(
            f"unknown condition {name!r}; expected one of {sorted(CONDITIONS)}"
        ) from None
