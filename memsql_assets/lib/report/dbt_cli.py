"""Running the project's dbt (dbt_project/) from Python: environment, parse, build, docs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.paths import REPO_ROOT

DBT_DIR = REPO_ROOT / "dbt_project"
MANIFEST = DBT_DIR / "target" / "manifest.json"


def dbt_executable() -> str:
    """The venv's dbt: its bin/ is not necessarily on PATH."""
    candidate = Path(sys.executable).with_name("dbt")
    return str(candidate) if candidate.exists() else "dbt"


def dbt_env(home: Path) -> dict[str, str]:
    """dbt renders every path from MEMSQL_HOME, and DuckDB needs its folder to exist."""
    (home / "dbt").mkdir(parents=True, exist_ok=True)
    os.environ["MEMSQL_HOME"] = str(home)
    os.environ["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "False"
    return dict(os.environ)


def run_dbt(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [dbt_executable(), *args, "--project-dir", str(DBT_DIR), "--profiles-dir", str(DBT_DIR)]
    proc = subprocess.run(cmd, cwd=DBT_DIR, env=dbt_env(home), capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise MemsqlError(f"`dbt {' '.join(args)}` failed in {DBT_DIR}:\n{tail}")
    return proc


def _newest_project_file() -> float:
    files = [DBT_DIR / "dbt_project.yml"]
    for sub in ("models", "seeds", "macros", "tests"):
        files.extend(p for p in (DBT_DIR / sub).rglob("*") if p.is_file())
    return max(p.stat().st_mtime for p in files)


def ensure_manifest(home: Path) -> Path:
    """dagster-dbt loads target/manifest.json at import: parse the project if the manifest is missing
    or older than a project file (a stale one would hide new models and seeds from Dagster)."""
    if not MANIFEST.exists() or MANIFEST.stat().st_mtime < _newest_project_file():
        run_dbt(home, "parse", "--quiet")
    return MANIFEST
