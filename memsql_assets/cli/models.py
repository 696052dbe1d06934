"""`memsql models`: the model registry, and fetching a local model's weights."""

from __future__ import annotations

import json
import os

import click

from memsql_assets.cli.options import json_flag


@click.group("models", help="the model registry")
def command() -> None:
    pass


@command.command("list", help="every registry entry and whether it can run here")
@json_flag()
def list_models(as_json: bool) -> int:
    from memsql_assets.lib.console import table
    from memsql_assets.lib.models.registry import load_registry

    registry = load_registry()
    rows = []
    for key in registry.keys():  # noqa: SIM118 (Registry is not a dict)
        entry = registry.get(key)
        available, reason = registry.available(key, os.environ)
        rows.append(
            {"key": key, "litellm_model": entry.litellm_model, "kind": entry.kind, "enabled": entry.enabled,
             "available": available, "reason": reason}  # fmt: skip
        )
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    state = {True: "ready"}
    print("\n".join(table([
        (r["key"], r["kind"], "on" if r["enabled"] else "off", state.get(r["available"], f"unavailable: {r['reason']}"))
        for r in rows
    ])))  # fmt: skip
    return 0


@command.command("fetch", help="fetch a local model's weights (explicit, never at run time)")
@click.argument("name", type=click.Choice(["smollm2"]))
def fetch(name: str) -> int:
    from memsql_assets.lib.paths import memsql_home
    from memsql_assets.lib.reference.builtins import fetch_smollm2

    print(f"smollm2 weights at {fetch_smollm2(memsql_home())}")
    return 0
