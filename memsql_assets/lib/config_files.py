"""Reading the project's YAML configuration files (the model registry, the conditions file): strict
pydantic schemas, and one error per file that names the file, the field path and what was expected.

A typo in such a file silently changes which experiment runs, so unknown fields, duplicated keys and
wrong types are errors, each reported as `<file>: field '<path>': <what was expected>`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict
from pydantic_core import ErrorDetails

from memsql_assets.lib.errors import ConfigError

# libyaml where PyYAML has it: the pure-Python loader is far slower per read of a file
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Which pydantic model validates the mapping at a field path (for the list of allowed fields).
SchemaAt = Callable[[list[str]], "type[BaseModel] | None"]


class FieldProblem(ValueError):
    """A validator's complaint about `field` (a dotted path below the value it validates)."""

    def __init__(self, field: str, problem: str):
        self.field = field
        self.problem = problem
        super().__init__(problem)


class Strict(BaseModel):
    """A configuration schema: unknown fields are errors, values keep their YAML types, and each
    field's docstring is its description."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, use_attribute_docstrings=True)


def read_yaml(path: Path, what: str) -> Any:
    """The file's YAML document, after proving no mapping repeats a key (PyYAML keeps the last of
    duplicate keys silently, which would hide an entry). `what` names the file in errors."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(path, "(file)", f"cannot read the {what}: {exc.strerror or exc}") from None
    try:
        root_node = yaml.compose(text, Loader=YAML_LOADER)
    except yaml.YAMLError as exc:
        raise ConfigError(path, "(file)", f"malformed YAML: {exc}") from None
    if root_node is not None:
        _reject_duplicate_keys(path, root_node, "")
    return yaml.load(text, Loader=YAML_LOADER)


def _reject_duplicate_keys(path: Path, node: yaml.Node, where: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            name = str(key_node.value)
            here = f"{where}.{name}" if where else name
            line = key_node.start_mark.line + 1
            if name in seen:
                raise ConfigError(
                    path, here, f"duplicate key (lines {seen[name]} and {line}); expected each key once"
                )
            seen[name] = line
            _reject_duplicate_keys(path, value_node, here)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _reject_duplicate_keys(path, item, f"{where}[{i}]")


# What each pydantic error type means for a person editing the file.
_EXPECTED = {
    "int_type": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "bool_type": "expected true or false",
    "string_type": "expected a string",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
}


def config_error(
    path: Path, error: ErrorDetails, schema_at: SchemaAt, empty: dict[str, str] | None = None
) -> ConfigError:
    """The first validation error as file + dotted field path + what was expected. `schema_at`
    names the model of a mapping (for unknown fields); `empty` gives, per path, what a too-short
    mapping there should have held."""
    loc = [str(part) for part in error["loc"] if part != "[key]"]
    value, kind, ctx = error.get("input"), error["type"], error.get("ctx") or {}
    if isinstance(ctx.get("error"), FieldProblem):
        problem: FieldProblem = ctx["error"]
        loc += [p for p in problem.field.split(".") if p]
        return ConfigError(path, ".".join(loc), problem.problem)
    where = ".".join(loc)
    if kind == "missing":
        return ConfigError(path, where, "missing required field")
    if kind == "extra_forbidden":
        parent = schema_at(loc[:-1])
        names = ", ".join(parent.model_fields) if parent else "none"
        return ConfigError(path, where, f"unknown field; expected one of {names}")
    if kind == "literal_error":
        options = "|".join(re.findall(r"'([^']*)'", ctx.get("expected", "")))
        return ConfigError(path, where, f"expected one of {options}, got {value!r}")
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        op, bound = next((sym, ctx[k]) for k, sym in _BOUNDS.items() if k in ctx)
        what = "an integer" if isinstance(bound, int) else "a number"  # the field's type, via its bound
        return ConfigError(path, where, f"expected {what} {op} {bound:g}, got {value!r}")
    if kind == "too_short" and empty and where in empty:
        return ConfigError(path, where, empty[where])
    expected = _EXPECTED.get(kind, error["msg"])
    return ConfigError(path, where, f"{expected}, got {type(value).__name__} {value!r}")


_BOUNDS = {"ge": ">=", "le": "<=", "gt": ">", "lt": "<"}
