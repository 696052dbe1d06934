"""The agent loop's tools in the OpenAI function-tools format, and the check of a call's arguments.

The exploration tools are trajectories/tools.py's (same names, same arguments); `submit_sql` ends
the turn. litellm maps this format to other providers' (Anthropic's tool use among them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# The tool that ends an agent's turn with its final SQL (loop.py offers it).
SUBMIT_TOOL = "submit_sql"
# The tool that loads one phase segment of the retrieved trajectory (offered when there is one).
LOAD_PHASE_TOOL = "load_trajectory_phase"
_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 1}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    properties: dict[str, dict[str, Any]]
    required: tuple[str, ...]

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": self.properties,
                    "required": list(self.required),
                    "additionalProperties": False,
                },
            },
        }


TOOL_SPECS: dict[str, ToolSpec] = {
    s.name: s
    for s in (
        ToolSpec("list_tables", "List the database's tables with their row counts.", {}, ()),
        ToolSpec(
            "get_ddl", "Columns, types, primary and foreign keys of one table.", {"table": _STR}, ("table",)
        ),
        ToolSpec("sample_rows", "The first n rows of a table.", {"table": _STR, "n": _INT}, ("table",)),
        ToolSpec(
            "distinct_values",
            "The most frequent values of one column, with their counts.",
            {"table": _STR, "column": _STR, "limit": _INT},
            ("table", "column"),
        ),
        ToolSpec(
            "column_stats",
            "Rows, NULLs, distinct values, min, max and mean of one column.",
            {"table": _STR, "column": _STR},
            ("table", "column"),
        ),
        ToolSpec(
            "find_join_path",
            "The shortest foreign-key join path between two tables.",
            {"source": _STR, "target": _STR},
            ("source", "target"),
        ),
        ToolSpec(
            "execute_sql", "Run one read-only SQLite query; shows the first rows.", {"sql": _STR}, ("sql",)
        ),
        ToolSpec(
            "validate_result",
            "Run a candidate answer and check it is non-empty, not all NULL and of a sane size.",
            {"sql": _STR},
            ("sql",),
        ),
        ToolSpec(
            SUBMIT_TOOL,
            "Submit the one final SQLite query that answers the question; ends the turn.",
            {"sql": _STR},
            ("sql",),
        ),
    )
}


def openai_tools() -> list[dict[str, Any]]:
    return [s.openai() for s in TOOL_SPECS.values()]


class ArgumentError(ValueError):
    """Arguments that are not JSON (`kind` invalid_json) or fail the tool's schema (invalid_arguments)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _type_ok(value: Any, schema: dict[str, Any]) -> bool:
    kind = schema["type"]
    if kind == "string":
        return isinstance(value, str) and value in schema.get("enum", (value,))
    if kind == "array":
        n = schema["minItems"]
        return isinstance(value, list) and len(value) == n and all(isinstance(v, dict) for v in value)
    return isinstance(value, int) and not isinstance(value, bool) and value >= schema.get("minimum", value)


def _expected(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(schema["enum"])
    if schema["type"] == "array":
        return f"a list of {schema['minItems']} argument objects"
    return f"{schema['type']}" + (f" >= {schema['minimum']}" if "minimum" in schema else "")


def check_arguments(spec: ToolSpec, args: Any) -> dict[str, Any]:
    """`args` if they meet the spec's schema, else ArgumentError (invalid_arguments)."""
    if not isinstance(args, dict):
        raise ArgumentError(
            "invalid_arguments", f"{spec.name}: arguments must be a JSON object, got {type(args).__name__}"
        )
    unknown = sorted(set(args) - set(spec.properties))
    missing = [k for k in spec.required if k not in args]
    wrong = [k for k, v in args.items() if k in spec.properties and not _type_ok(v, spec.properties[k])]
    problems = [
        *(f"unknown argument '{k}'" for k in unknown),
        *(f"missing argument '{k}'" for k in missing),
        *(f"'{k}' must be {_expected(spec.properties[k])}" for k in wrong),
    ]
    if problems:
        raise ArgumentError("invalid_arguments", f"{spec.name}: " + "; ".join(problems))
    return args


def parse_arguments(spec: ToolSpec, raw: str) -> dict[str, Any]:
    """The call's arguments as a dict, or ArgumentError. An empty text counts as `{}`."""
    try:
        args = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise ArgumentError("invalid_json", f"arguments are not valid JSON: {exc}") from None
    return check_arguments(spec, args)


def composite_spec(name: str, steps: tuple[str, ...]) -> ToolSpec:
    """A composite tool (trajectories/composites.py) as one tool: `calls` holds each step's arguments."""
    return ToolSpec(
        name,
        f"Runs {', then '.join(steps)} in one step. `calls`: the arguments of each, in that order.",
        {
            "calls": {
                "type": "array",
                "items": {"type": "object"},
                "minItems": len(steps),
                "maxItems": len(steps),
            }
        },
        ("calls",),
    )


def phase_load_spec(phases: tuple[str, ...]) -> ToolSpec:
    return ToolSpec(
        LOAD_PHASE_TOOL,
        "Load the reference trajectory's steps of one phase (how a similar question was executed or validated).",
        {"phase": {"type": "string", "enum": list(phases)}},
        ("phase",),
    )
