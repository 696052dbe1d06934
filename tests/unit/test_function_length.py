"""No function in memsql_assets/ is over MAX_LINES lines unless a `# long:` comment beside it says why.

The comment goes on the line just above the `def` (or above its first decorator), or on the lines
from the `def` to its first body statement."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "memsql_assets"
MAX_LINES = 60
MARKER = "# long:"


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _has_reason(lines: list[str], node: Function) -> bool:
    """A `# long:` comment above the def or its decorators, or between the def and its body."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    candidates = [lines[i - 1] for i in {first - 1, node.lineno - 1} if i >= 1]
    candidates += lines[node.lineno - 1 : node.body[0].lineno]
    return any(line.strip().startswith(MARKER) or f"  {MARKER}" in line for line in candidates)


def long_functions(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, length) of each function over MAX_LINES lines without a reason."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, Function):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_LINES and not _has_reason(lines, node):
                found.append((node.name, node.lineno, length))
    return found


def _function(name: str, body_lines: int, before: str = "", first: str = "") -> str:
    body = [f"    x{i} = {i}" for i in range(body_lines)]
    if first:
        body.insert(0, f"    {first}")
    return f"{before}\ndef {name}():\n" + "\n".join(body) + "\n"


def test_checker_flags_a_long_function_and_accepts_a_reason() -> None:
    assert long_functions(_function("short", MAX_LINES - 1)) == []
    assert long_functions(_function("long", MAX_LINES)) == [("long", 2, MAX_LINES + 1)]
    assert long_functions(_function("why", MAX_LINES, before="# long: one table per branch")) == []
    assert long_functions(_function("why", MAX_LINES, first="# long: one table per branch")) == []
    assert long_functions(_function("not_why", MAX_LINES, before="# longer than it should be")) != []
    decorated = "# long: a route table\n@staticmethod\n" + _function("d", MAX_LINES).lstrip("\n")
    assert long_functions(decorated) == []
    nested = "def outer():\n" + _function("inner", MAX_LINES).replace("\n", "\n    ") + "\n    return 1\n"
    assert [name for name, _line, _n in long_functions(nested)] == ["outer", "inner"]


def test_no_function_over_the_limit_without_a_reason() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for name, line, length in long_functions(path.read_text(encoding="utf-8")):
            offenders.append(f"memsql_assets/{rel}:{line} {name} ({length} lines)")
    assert not offenders, (
        f"functions over {MAX_LINES} lines: split them, or put a '{MARKER} <reason>' comment "
        "just above the def:\n" + "\n".join(offenders)
    )
