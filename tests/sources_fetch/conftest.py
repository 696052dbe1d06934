"""Fixtures of the fetch tests: a mirror of the repository's fixture files, a user's environment."""

from __future__ import annotations

import os
import shutil

import pytest
from fetch_mirror import FIXTURE_TICKERS, FIXTURES, NORTHWIND_DUMP, REPO, Mirror, fixture_fetch_config, serve


@pytest.fixture()
def mirror(tmp_path):
    """The repository's fixture files, laid out as <name>/<url path>: a mini Northwind dump and one
    SEC companyfacts payload served under three CIKs."""
    root = tmp_path / "mirror"
    (root / "northwind").mkdir(parents=True)
    for name, data in NORTHWIND_DUMP.items():
        (root / "northwind" / name).write_bytes(data)
    payload = (FIXTURES / "sec_edgar" / "CIK0000999999.json").read_bytes()
    (root / "sec_edgar").mkdir()
    for cik in FIXTURE_TICKERS.values():
        (root / "sec_edgar" / f"CIK{cik}.json").write_bytes(payload)
    with serve(root, tmp_path / "control") as url:
        yield Mirror(url, root, tmp_path / "control")


@pytest.fixture()
def cli_env(tmp_path, mirror):
    """Environment of a user whose data directory, sources file and fetch file are their own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSQL_")}
    env["MEMSQL_HOME"] = str(tmp_path / "home")
    env["MEMSQL_SOURCES_FILE"] = str(tmp_path / "sources.yaml")
    shutil.copyfile(REPO / "sources" / "sources.yaml", tmp_path / "sources.yaml")
    env["MEMSQL_FETCH_FILE"] = str(fixture_fetch_config(tmp_path / "fetch.yaml", mirror.url))
    return env
