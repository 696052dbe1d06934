"""`memsql docs`: generate the dbt docs and serve them on 127.0.0.1."""

from __future__ import annotations

import click

from memsql_assets.cli.options import server_options
from memsql_assets.lib.ports import DOCS_PORT


@click.command("docs", help="generate the dbt docs and serve them on 127.0.0.1")
@server_options(DOCS_PORT)
def command(host: str, port: int) -> int:
    from memsql_assets.orchestration.servers import port_taken, serve_docs

    return 1 if port_taken("docs", host, port) else serve_docs(host, port)
