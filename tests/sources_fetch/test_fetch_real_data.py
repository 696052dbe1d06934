"""`memsql sources fetch all --use`, then `memsql run --skip-eval`, from a local HTTP mirror of the
real public files (MEMSQL_REAL_DATA; skipped when absent): the repository's pinned checksums match
the real files, and the benchmark built from them passes every check."""

from __future__ import annotations

import ast
import gzip
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from fetch_mirror import REPO, memsql, serve

from memsql_assets.lib.atomic import sha256_file

pytestmark = [pytest.mark.realdata, pytest.mark.integration]


def _companyfacts(path: Path) -> dict:
    """The JSON SEC serves, from a saved payload (.json, .json.gz, or a Python repr of it)."""
    name = path.name.lower()
    if name.endswith(".gz"):
        return json.loads(gzip.decompress(path.read_bytes()))
    if name.endswith(".pyrepr.txt"):
        return ast.literal_eval(path.read_text(encoding="utf-8"))
    return json.loads(path.read_bytes())


@pytest.fixture(scope="module")
def real_mirror(tmp_path_factory, shared_data):
    """The real files laid out as data.sec.gov and raw.githubusercontent.com serve them."""
    root = tmp_path_factory.mktemp("real_mirror")
    shutil.copytree(shared_data("bird_financial", "berka_raw"), root / "bird_financial")
    shutil.copytree(shared_data("northwind"), root / "northwind")
    (root / "sec_edgar").mkdir()
    ciks = []
    for path in sorted(shared_data("sec_edgar", "companyfacts").iterdir()):
        payload = _companyfacts(path)
        cik = f"{int(payload['cik']):010d}"
        (root / "sec_edgar" / f"CIK{cik}.json").write_text(json.dumps(payload), encoding="utf-8")
        ciks.append(cik)
    with serve(root, tmp_path_factory.mktemp("real_mirror_control")) as url:
        yield url, root, ciks


def test_fetch_all_use_then_run_builds_a_valid_benchmark_from_real_data(real_mirror, tmp_path):
    url, root, ciks = real_mirror
    # The repository's fetch.yaml, through MEMSQL_FETCH_MIRROR; SEC limited to the companies the
    # mirror holds (the full set of 20 is not available offline).
    config = yaml.safe_load((REPO / "sources" / "fetch.yaml").read_text())
    config["sec_edgar"]["companies"] = {
        t: c for t, c in config["sec_edgar"]["companies"].items() if c in ciks
    }
    assert sorted(config["sec_edgar"]["companies"]) == ["AAPL", "GOOGL", "META", "MSFT", "NVDA", "TSLA"]
    (tmp_path / "fetch.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    shutil.copyfile(REPO / "sources" / "sources.yaml", tmp_path / "sources.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSQL_")}
    env.update(
        MEMSQL_HOME=str(tmp_path / "home"),
        MEMSQL_SOURCES_FILE=str(tmp_path / "sources.yaml"),
        MEMSQL_FETCH_FILE=str(tmp_path / "fetch.yaml"),
        MEMSQL_FETCH_MIRROR=url,
        MEMSQL_FETCH_USER_AGENT="memsql tests tests@example.org",
    )

    fetched = memsql("sources", "fetch", "all", "--use", env=env)
    assert fetched.returncode == 0, fetched.stderr
    assert "7 sha256-verified" in fetched.stdout and "2 sha256-verified" in fetched.stdout
    raw = tmp_path / "home" / "raw"
    for name in ("create.sql", "update.sql"):
        assert sha256_file(raw / "northwind" / name) == sha256_file(root / "northwind" / name)
    assert len(list((raw / "sec_edgar").glob("*_CIK*.json"))) == 6

    run = memsql("run", "--skip-eval", "--json", env=env, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout)
    assert summary["success"] and summary["checks"] and all(summary["checks"].values()), summary["checks"]
    assert {s["kind"] for s in summary["sources"].values()} == {"real"}
    assert summary["benchmark"]["sessions"] == 300 and summary["benchmark"]["turns"] == 1400
    assert summary["benchmark"]["memory_critical"] == 1100
