"""The fetch tests' mirror: a real HTTP server process over a folder, and the CLI run against it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from memsql_assets.lib.sources.northwind import TABLE_DDL

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
REPO = HERE.parents[1]
FIXTURE_TICKERS = {"TSTA": "0000999999", "TSTB": "0000999998", "TSTC": "0000999997"}


def northwind_dump() -> dict[str, bytes]:
    """The mirror's mini Northwind dump: create.sql is the embedded builder's table DDL followed by
    the fixture rows, as in jpwhite3's src/create.sql; update.sql is the fixture file."""
    folder = FIXTURES / "northwind"
    rows = (folder / "rows.sql").read_text(encoding="utf-8")
    create = "".join(f"{ddl};\n" for _, ddl in TABLE_DDL) + "\n" + rows
    return {"create.sql": create.encode("utf-8"), "update.sql": (folder / "update.sql").read_bytes()}


NORTHWIND_DUMP = northwind_dump()


def northwind_sha256(name: str) -> str:
    return hashlib.sha256(NORTHWIND_DUMP[name]).hexdigest()


@dataclass
class Mirror:
    url: str
    root: Path
    control: Path

    def faults(self, faults: dict[str, list[dict]]) -> None:
        (self.control / "faults.json").write_text(json.dumps(faults))

    def requests(self) -> list[dict]:
        log = self.control / "requests.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@contextlib.contextmanager
def serve(root: Path, control: Path):
    """Start mirror_server.py on 127.0.0.1; yields the running process and its base URL."""
    control.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "mirror_server.py"), str(root), str(control)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:  # a loaded machine can hold a process in disk sleep for seconds past its signal
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=60)


def fixture_fetch_config(path: Path, mirror_url: str, requests_per_second: float = 4) -> Path:
    """A fetch.yaml over the fixture mirror, with the fixtures' real checksums."""
    config = {
        "user_agent": "memsql tests tests@example.org",
        "bird_financial": {"base_url": f"{mirror_url}/bird_financial/", "files": {"loan.csv": None}},
        "northwind": {
            "base_url": f"{mirror_url}/northwind/",
            "files": {name: northwind_sha256(name) for name in NORTHWIND_DUMP},
        },
        "sec_edgar": {
            "base_url": f"{mirror_url}/sec_edgar/",
            "requests_per_second": requests_per_second,
            "companies": FIXTURE_TICKERS,
        },
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def memsql(*args: str, env: dict[str, str], timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memsql_assets.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=timeout,
        **kwargs,
    )
