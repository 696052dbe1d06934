"""Dagster's UI and dbt's docs as `memsql ui` and `memsql docs` serve them (ports: lib/ports.py)."""

from __future__ import annotations

import os
import sys

from memsql_assets.defs.instance import ensure_dagster_home
from memsql_assets.lib.paths import REPO_ROOT, WORKSPACE_FILE, memsql_home
from memsql_assets.lib.ports import url
from memsql_assets.lib.process_group import port_in_use, serve
from memsql_assets.lib.report.dbt_cli import DBT_DIR, dbt_env, dbt_executable, run_dbt


def port_taken(command: str, host: str, port: int) -> bool:
    """Say in one line that host:port is taken (before anything starts), and whether it is."""
    if not port_in_use(host, port):
        return False
    print(
        f"memsql {command}: {host}:{port} is already in use (another `memsql {command}`?); stop it or pass --port",
        file=sys.stderr,
    )
    return True


def serve_ui(host: str, port: int) -> int:
    """`dagster dev` over this project's instance until Ctrl-C."""
    ensure_dagster_home(memsql_home())
    cmd = [sys.executable, "-m", "dagster", "dev", "-w", str(WORKSPACE_FILE), "-h", host, "-p", str(port)]
    return serve(cmd, cwd=REPO_ROOT, env=os.environ)


def serve_docs(host: str, port: int) -> int:
    """Generate the dbt docs, then `dbt docs serve` until Ctrl-C."""
    home = memsql_home()
    run_dbt(home, "docs", "generate")
    print(f"dbt docs on {url(port, host)} (Ctrl-C to stop)")
    cmd = [
        dbt_executable(), "docs", "serve", "--host", host, "--port", str(port), "--no-browser",
        "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR),
    ]  # fmt: skip
    return serve(cmd, cwd=DBT_DIR, env=dbt_env(home))
