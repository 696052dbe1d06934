"""`memsql view`: every evaluated turn, and two partitions compared, in the browser."""

from __future__ import annotations

import sys

import click

from memsql_assets.cli.options import server_options
from memsql_assets.lib.ports import VIEWER_PORT


@click.command("view", help="browse every evaluated turn, and compare two partitions, on 127.0.0.1")
@server_options(VIEWER_PORT)
def command(host: str, port: int) -> int:
    from memsql_assets.lib.paths import memsql_home
    from memsql_assets.lib.viewer.data import NoResultsError, TurnIndex
    from memsql_assets.lib.viewer.server import serve, viewer_url
    from memsql_assets.orchestration.servers import port_taken

    if port_taken("view", host, port):
        return 1
    home = memsql_home()
    try:
        TurnIndex(home).connection()
    except NoResultsError as exc:
        print(f"memsql view: {exc}", file=sys.stderr)
        return 1
    print(f"memsql view: turns of {home} on {viewer_url(host, port)} (Ctrl-C to stop)", flush=True)
    serve(home, host, port)
    return 0
