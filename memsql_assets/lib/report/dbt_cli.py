"""Running the project's dbt (dbt_project/) from Python: environment, vars, parse, build, docs."""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from memsql_assets.lib.atomic import write_text_atomic
from memsql_assets.lib.context_mode import CONTEXT_MODES, ContextMode
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.harness.summary import summary_column_docs, summary_columns
from memsql_assets.lib.harness.turn_result import column_docs, dbt_columns
from memsql_assets.lib.paths import REPO_ROOT
from memsql_assets.lib.vocabulary import (
    AGENT_BASELINE_CONDITION,
    AGENT_CONDITIONS,
    AGENT_SCHEMA_CONDITIONS,
    AGENTSM_CONDITION,
    ALL_SOURCES,
    BENCHMARKS,
    CONDITION_NAMES,
    CROSS_SESSION_TAGS,
    ERROR_CLASSES,
    EXTENDED_BENCHMARK,
    FLOOR_CONDITION,
    GUESS_FLOOR_MAX_PCT,
    GUESS_PROBE,
    MUST_SCORE_100,
    PAPER_BENCHMARK,
    PAPER_CONDITIONS,
    PHENOMENA,
    PROMPT_TRAJECTORY_CONDITION,
    REFERENCE_AGENT,
    REFERENCE_MODELS,
    REPORT_SOURCES,
    WINDOW_CONDITION,
)

DBT_DIR = REPO_ROOT / "dbt_project"
# What dbt reads when it parses; target/, logs/ and the like are its output.
PROJECT_INPUTS = (
    "dbt_project.yml",
    "profiles.yml",
    "models",
    "macros",
    "tests",
    "seeds",
    "analyses",
    "snapshots",
)


def dbt_vars() -> dict[str, Any]:
    """What dbt_project/ reads with `var(...)`: accepted values, report order, the ablation's terms,
    and the result row's columns with their types and descriptions (TurnResult, turn_result.py)."""
    return {
        "conditions": list(CONDITION_NAMES),
        "sources": list(REPORT_SOURCES),
        "all_sources": ALL_SOURCES,
        "error_classes": list(ERROR_CLASSES),
        "reference_models": [*REFERENCE_MODELS, REFERENCE_AGENT],
        "reference_agent": REFERENCE_AGENT,
        "must_score_100": list(MUST_SCORE_100),
        "guess_probe": GUESS_PROBE,
        "floor_condition": FLOOR_CONDITION,
        "window_condition": WINDOW_CONDITION,
        "agentsm_condition": AGENTSM_CONDITION,
        "agent_baseline_condition": AGENT_BASELINE_CONDITION,
        "agent_pairs": [
            {"baseline": t, "agentsm": e, "schema_in_prompt": shown}
            for (t, e), shown in ((AGENT_CONDITIONS, False), (AGENT_SCHEMA_CONDITIONS, True))
        ],
        "prompt_trajectory_condition": PROMPT_TRAJECTORY_CONDITION,
        "guess_floor_max_pct": GUESS_FLOOR_MAX_PCT,
        "benchmarks": list(BENCHMARKS),
        "paper_benchmark": PAPER_BENCHMARK,
        "extended_benchmark": EXTENDED_BENCHMARK,
        "phenomena": list(PHENOMENA),
        "cross_session_tags": list(CROSS_SESSION_TAGS),
        "context_modes": list(CONTEXT_MODES),
        # Partitions written before context modes existed ran the paper's, annotated.
        "annotated_context_mode": ContextMode.ANNOTATED.value,
        # A paper claim "in each condition" is checked in these, "in each memory condition" in all but A.
        "paper_conditions": list(PAPER_CONDITIONS),
        "result_columns": dbt_columns(),
        "result_column_docs": column_docs(),
        "summary_columns": summary_columns(),
        "summary_column_docs": summary_column_docs(),
    }


def dbt_vars_arg() -> str:
    """`dbt_vars()` as the value of dbt's `--vars` flag (JSON is valid YAML)."""
    return json.dumps(dbt_vars(), sort_keys=True)


def dbt_executable() -> str:
    """The venv's dbt: its bin/ is not necessarily on PATH."""
    candidate = Path(sys.executable).with_name("dbt")
    return str(candidate) if candidate.exists() else "dbt"


# What dagster-dbt runs as dbt: the launcher answers `--version` without dbt's request to pypi.org.
DBT_LAUNCHER = Path(__file__).with_name("dbt_launcher.sh")


def dbt_env(home: Path) -> dict[str, str]:
    """dbt renders every path from MEMSQL_HOME, and DuckDB needs its folder to exist; the launcher
    needs the dbt it hands commands to and the installed version."""
    (home / "dbt").mkdir(parents=True, exist_ok=True)
    os.environ["MEMSQL_HOME"] = str(home)
    os.environ["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "False"
    os.environ["MEMSQL_DBT"] = dbt_executable()
    os.environ["MEMSQL_DBT_CORE_VERSION"] = importlib.metadata.version("dbt-core")
    return dict(os.environ)


def dbt_args(*args: str) -> list[str]:
    """`args` plus the vocabulary as --vars: every dbt command of the project needs them."""
    return [*args, "--vars", dbt_vars_arg()]


def run_dbt(home: Path, *args: str, project_dir: Path = DBT_DIR) -> subprocess.CompletedProcess[str]:
    cmd = [
        dbt_executable(),
        *dbt_args(*args),
        "--project-dir",
        str(project_dir),
        "--profiles-dir",
        str(project_dir),
    ]
    proc = subprocess.run(cmd, cwd=project_dir, env=dbt_env(home), capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise MemsqlError(f"`dbt {' '.join(args)}` failed in {project_dir}:\n{tail}")
    return proc


def project_fingerprint(project_dir: Path = DBT_DIR) -> str:
    """SHA-256 over every file dbt parses (path and content) and the vars passed to it."""
    h = hashlib.sha256(dbt_vars_arg().encode())
    for name in PROJECT_INPUTS:
        root = project_dir / name
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            h.update(str(path.relative_to(project_dir)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def ensure_manifest(home: Path, project_dir: Path = DBT_DIR) -> Path:
    """dagster-dbt builds the asset graph from target/manifest.json at import: parse the project
    whenever a file under it (or the vocabulary) changed since the manifest was written."""
    manifest = project_dir / "target" / "manifest.json"
    stamp = manifest.with_name("memsql_project.sha256")
    fingerprint = project_fingerprint(project_dir)

    def current() -> bool:
        return (
            manifest.exists() and stamp.exists() and stamp.read_text(encoding="utf-8").strip() == fingerprint
        )

    if current():
        return manifest
    # Processes that import the definitions at once (test workers, `memsql run`'s workers) parse one
    # at a time: dbt writes manifest.json in place, and a reader must never see half of it.
    manifest.parent.mkdir(parents=True, exist_ok=True)
    with open(manifest.with_name("memsql_parse.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not current():
            run_dbt(home, "parse", "--quiet", project_dir=project_dir)
            write_text_atomic(stamp, fingerprint + "\n")
    return manifest


if __name__ == "__main__":  # `dbt ... --vars "$(python -m memsql_assets.lib.report.dbt_cli)"` by hand
    print(dbt_vars_arg())
