"""A constant's name means one thing across the package: two modules that bind the same UPPER_CASE
name bind the same value (a plain re-export of one object, or an equal value), never two meanings
(`CONDITIONS` once a table of conditions and once a tuple of names)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

import memsql_assets

# Modules that act when imported rather than define: the CLI's `python -m` entry, and the Celery worker's
# app, which connects to the scale-out profile's services.
ENTRY_POINTS = ("memsql_assets.cli.__main__", "memsql_assets.defs.celery_app")
CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*")


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # a value without a truthy equality (a DataFrame): distinct objects differ
        return False


def meanings(modules: dict[str, Any]) -> dict[str, list[str]]:
    """Constant name -> `module: value` of each different value bound to it, for names with several."""
    values: dict[str, list[tuple[str, Any]]] = {}
    for module_name, module in sorted(modules.items()):
        for name, value in vars(module).items():
            if CONSTANT.fullmatch(name):
                seen = values.setdefault(name, [])
                if not any(_same(value, v) for _, v in seen):
                    seen.append((module_name, value))
    return {n: [f"{m}: {v!r:.80}" for m, v in seen] for n, seen in values.items() if len(seen) > 1}


def package_modules() -> dict[str, Any]:
    return {
        info.name: importlib.import_module(info.name)
        for info in pkgutil.walk_packages(memsql_assets.__path__, "memsql_assets.")
        if info.name not in ENTRY_POINTS
    }


def test_no_constant_name_has_two_meanings():
    assert meanings(package_modules()) == {}


def test_a_name_bound_to_two_values_is_found_and_a_re_export_is_not():
    class Module:
        def __init__(self, **names: Any):
            self.__dict__.update(names)

    table = {"A": object()}
    found = meanings(
        {
            "conditions": Module(CONDITIONS=table, TURNS_FILE="turns.jsonl"),
            "plugins": Module(CONDITIONS=table),  # a re-export: the same object
            "store": Module(TURNS_FILE="turns.jsonl"),  # an equal value
            "marts": Module(CONDITIONS=("A", "B")),
        }
    )
    assert list(found) == ["CONDITIONS"]
    assert [line.split(":")[0] for line in found["CONDITIONS"]] == ["conditions", "marts"]
