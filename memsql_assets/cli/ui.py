"""`memsql ui`: the Dagster UI over this project's instance."""

from __future__ import annotations

import click

from memsql_assets.cli.options import server_options
from memsql_assets.lib.ports import UI_PORT


@click.command("ui", help="serve the Dagster UI over this project's instance")
@server_options(UI_PORT)
def command(host: str, port: int) -> int:
    from memsql_assets.orchestration.servers import port_taken, serve_ui

    return 1 if port_taken("ui", host, port) else serve_ui(host, port)
