"""`memsql sources`: inspect the source databases, fetch the real data."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from memsql_assets.cli.options import json_flag
from memsql_assets.lib.vocabulary import SOURCE_NAMES


@click.group("sources", help="inspect the source databases, fetch the real data")
def command() -> None:
    pass


def _row(name: str, spec: Any) -> dict[str, Any]:
    from memsql_assets.lib.paths import memsql_home, source_db_path
    from memsql_assets.lib.sources.build import describe_source

    path = source_db_path(memsql_home(), name)
    row: dict[str, Any] = {
        "name": name,
        "kind": spec.kind,
        "path": str(path),
        "real_path": str(spec.real_path) if spec.kind == "real" else None,
        "built": path.exists(),
        "row_counts": None,
    }
    if path.exists():
        built = describe_source(name, path)
        row.update(
            built_kind=built.kind, synthetic=built.synthetic, row_counts=built.row_counts, content_hash=built.content_hash
        )
    return row


@command.command("list", help="name, kind, path and row counts of each source")
@json_flag()
def list_sources(as_json: bool) -> int:
    from memsql_assets.lib.console import table
    from memsql_assets.lib.sources.config import load_sources

    rows = [_row(name, spec) for name, spec in load_sources().items()]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0

    def state(r: dict[str, Any]) -> str:
        return f"{sum(r['row_counts'].values()):,} rows" if r["row_counts"] else "not built (run `memsql run`)"

    print("\n".join(table([(r["name"], r["kind"], state(r), r["path"]) for r in rows])))
    return 0


@command.command(
    "fetch",
    help="download real public data into $MEMSQL_HOME/raw/<name>/ (sources/fetch.yaml); "
    f"NAME: {', '.join(SOURCE_NAMES)} or all",
)
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
@click.option("--use", is_flag=True, help="then set kind: real and real_path in the sources file")
def fetch(names: tuple[str, ...], use: bool) -> int:
    from memsql_assets.lib.paths import memsql_home
    from memsql_assets.lib.sources.config import env_var_for, use_real_path
    from memsql_assets.lib.sources.fetch import (
        Downloader,
        check_user_agent,
        fetch_source,
        load_fetch_config,
        resolve_names,
        setting_for,
    )

    chosen = resolve_names(names)
    config = load_fetch_config()
    downloader = Downloader(check_user_agent(config, chosen), lambda line: print(line, file=sys.stderr, flush=True))
    for name in chosen:
        print(f"{name}: fetching {len(config.plans[name].files)} files", file=sys.stderr, flush=True)
        got = fetch_source(config.plans[name], memsql_home(), downloader)
        checked = f", {got.verified} sha256-verified" if got.verified else ""
        print(f"{name}: {got.files} files in {got.folder} ({got.downloaded_bytes:,} bytes downloaded){checked}; the {name} adapter accepts them "
              f"({sum(got.row_counts.values()):,} rows)")  # fmt: skip
        if not use:
            print(f"  to use it: {setting_for(name, got.folder)}   (or run again with --use)")
            continue
        print(f"{name}: now real in {use_real_path(name, got.folder)} (kind: real, real_path: {got.folder})")
        if os.environ.get(env_var_for(name)):
            print(f"{name}: note: {env_var_for(name)} is set and overrides that file")
    return 0
