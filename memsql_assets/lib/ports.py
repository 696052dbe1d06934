"""The servers `memsql` starts, and where: each port defined once, on the loopback by default."""

LOOPBACK = "127.0.0.1"
VIEWER_PORT = 8765  # `memsql view`: the turn viewer (lib/viewer/server.py)
UI_PORT = 3333  # `memsql ui`: Dagster's UI
DOCS_PORT = 8080  # `memsql docs`: dbt's docs


def url(port: int, host: str = LOOPBACK) -> str:
    return f"http://{host}:{port}"
