"""Serving the viewer on 127.0.0.1 with uvicorn, and the URL other commands print."""

from __future__ import annotations

from pathlib import Path

from memsql_assets.lib.ports import LOOPBACK, VIEWER_PORT, url
from memsql_assets.lib.vocabulary import PAPER_BENCHMARK

DEFAULT_HOST = LOOPBACK
DEFAULT_PORT = VIEWER_PORT


def viewer_url(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> str:
    return f"{url(port, host)}/"


def partition_url(
    model: str,
    condition: str,
    benchmark: str = PAPER_BENCHMARK,
    history: str = "model",
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
) -> str:
    """The viewer's list of one partition's turns; a gold-history evaluation's under its history filter."""
    told = "" if history == "model" else f"&history={history}"
    return f"{viewer_url(host, port)}?benchmark={benchmark}&model={model}&condition={condition}{told}"


def serve(home: Path, host: str, port: int) -> None:
    import uvicorn

    from memsql_assets.lib.viewer.app import create_app

    uvicorn.run(create_app(home), host=host, port=port, log_level="warning")
