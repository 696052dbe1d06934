"""sources/fetch.yaml, the mirror and User-Agent settings, and the sources-file edit of --use."""

from __future__ import annotations

import difflib
import email.utils
import sqlite3
import time
from pathlib import Path

import pytest
import yaml
from fetch_mirror import NORTHWIND_DUMP

from memsql_assets.lib.errors import ConfigError
from memsql_assets.lib.http_retry import parse_retry_after
from memsql_assets.lib.sources.config import load_sources, use_real_path
from memsql_assets.lib.sources.fetch import (
    FetchError,
    check_user_agent,
    load_fetch_config,
    resolve_names,
)
from memsql_assets.lib.sources.northwind import TABLE_DDL, build_real

REPO = Path(__file__).resolve().parents[2]


def test_repository_fetch_file_lists_pinned_files_and_twenty_companies():
    config = load_fetch_config(REPO / "sources" / "fetch.yaml", environ={})
    bird, nw, sec = (config.plans[n] for n in ("bird_financial", "northwind", "sec_edgar"))
    assert all(f.url.startswith("https://") for p in (bird, nw, sec) for f in p.files)
    assert len(bird.files) == 7 and all(f.sha256 for f in bird.files)
    assert [f.save_as for f in nw.files] == ["create.sql", "update.sql"] and all(f.sha256 for f in nw.files)
    tickers = [f.save_as.split("_")[0] for f in sec.files]
    assert len(tickers) == len(set(tickers)) == 20
    assert tickers[:10] == ["AAPL", "MSFT", "JPM", "NVDA", "GOOGL", "AMZN", "META", "TSLA", "V", "XOM"]
    assert sec.files[0].url == "https://data.sec.gov/api/xbrl/companyfacts/CIK0000320193.json"
    assert sec.files[0].save_as == "AAPL_CIK0000320193.json" and sec.files[0].sha256 is None
    assert sec.requests_per_second == 10


def test_mirror_replaces_every_base_url():
    config = load_fetch_config(
        REPO / "sources" / "fetch.yaml", environ={"MEMSQL_FETCH_MIRROR": "https://m.example/x/"}
    )
    assert config.plans["northwind"].files[0].url == "https://m.example/x/northwind/create.sql"
    assert config.plans["sec_edgar"].files[0].url == "https://m.example/x/sec_edgar/CIK0000320193.json"


def test_sec_needs_a_contact_in_the_user_agent():
    config = load_fetch_config(REPO / "sources" / "fetch.yaml", environ={})
    assert check_user_agent(config, ["northwind"]) == "memsql-sources-fetch"
    with pytest.raises(FetchError, match="MEMSQL_FETCH_USER_AGENT"):
        check_user_agent(config, ["bird_financial", "sec_edgar"])
    config = load_fetch_config(
        REPO / "sources" / "fetch.yaml", environ={"MEMSQL_FETCH_USER_AGENT": "Jo jo@x.org"}
    )
    assert check_user_agent(config, ["sec_edgar"]) == "Jo jo@x.org"


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda c: c.pop("northwind"), "northwind"),
        (lambda c: c["northwind"].update(base_url="ftp://x/"), "northwind.base_url"),
        (lambda c: c["northwind"]["files"].update({"create.sql": "abc"}), "northwind.files.create.sql"),
        (lambda c: c["sec_edgar"]["companies"].update(AAPL=320193), "sec_edgar.companies.AAPL"),
        (lambda c: c["sec_edgar"].update(requests_per_second=0), "sec_edgar.requests_per_second"),
        (lambda c: c.update(chinook={}), "chinook"),
    ],
)
def test_bad_fetch_file_names_file_and_field(tmp_path, edit, field):
    config = yaml.safe_load((REPO / "sources" / "fetch.yaml").read_text())
    edit(config)
    path = tmp_path / "fetch.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match=rf"{path}: field '{field}'"):
        load_fetch_config(path, environ={})


def test_resolve_names():
    assert resolve_names(["all"]) == ["bird_financial", "sec_edgar", "northwind"]
    assert resolve_names(["northwind", "bird_financial", "northwind"]) == ["bird_financial", "northwind"]
    with pytest.raises(FetchError, match="unknown source 'nw'"):
        resolve_names(["nw"])


def test_retry_after_takes_seconds_or_an_http_date():
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after({"Retry-After": later}) <= 31
    assert parse_retry_after({"Retry-After": "soon"}) is None and parse_retry_after(None) is None


def test_use_real_path_edits_two_lines_and_keeps_the_rest(tmp_path):
    path = tmp_path / "sources.yaml"
    original = (REPO / "sources" / "sources.yaml").read_text()
    path.write_text(original)
    folder = tmp_path / "raw" / "bird_financial"
    folder.mkdir(parents=True)
    use_real_path("bird_financial", folder, path)
    specs = load_sources(path, environ={})
    assert specs["bird_financial"].kind == "real" and specs["bird_financial"].real_path == folder
    assert specs["bird_financial"].options == {"trans_rows": 20000} and specs["bird_financial"].seed == 1999
    assert specs["northwind"].kind == "embedded"
    new = path.read_text().splitlines()
    changes = [d for d in difflib.ndiff(original.splitlines(), new) if d[:1] in "+-"]
    assert changes == ["-   kind: embedded", "+   kind: real", f'+   real_path: "{folder}"']
    use_real_path("bird_financial", folder, path)  # idempotent
    assert path.read_text().splitlines() == new


def test_use_real_path_refuses_a_file_it_cannot_edit(tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text("northwind: {kind: embedded}\n")
    folder = tmp_path / "nw"
    folder.mkdir()
    with pytest.raises(ConfigError, match="northwind"):
        use_real_path("northwind", folder, path)
    assert path.read_text() == "northwind: {kind: embedded}\n"


def test_the_mirrors_northwind_dump_builds_with_the_real_adapter(tmp_path):
    folder = tmp_path / "northwind"
    folder.mkdir()
    for name, data in NORTHWIND_DUMP.items():
        (folder / name).write_bytes(data)
    out = tmp_path / "northwind.sqlite"
    build_real(out, folder)
    conn = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {name for name, _ in TABLE_DDL} <= tables
        orders = conn.execute(
            "SELECT OrderID, OrderDate, ShippedDate FROM Orders ORDER BY OrderID"
        ).fetchall()
        assert orders == [(10248, "2016-07-04", "2016-07-16"), (10249, "2017-07-05", None)]
    finally:
        conn.close()
