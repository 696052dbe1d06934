"""`memsql sources fetch` as a user runs it (a subprocess) against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import resource
import socket
import time
from pathlib import Path

from fetch_mirror import FIXTURE_TICKERS, NORTHWIND_DUMP, memsql, northwind_sha256

from memsql_assets.lib.atomic import sha256_file
from memsql_assets.lib.sources.config import load_sources

CREATE = "/northwind/create.sql"


def home(env) -> Path:
    return Path(env["MEMSQL_HOME"])


def leftovers(env) -> list[str]:
    """Anything under raw/ besides installed folders: partial downloads, staging, probes."""
    raw = home(env) / "raw"
    return sorted(
        str(p.relative_to(raw)) for p in raw.rglob("*") if p.name.startswith(".") or p.suffix == ".part"
    )


def one_error_line(proc) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("memsql: error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def built_database(env) -> tuple[Path, str]:
    """A database as an earlier `memsql run` left it: it must come out of any fetch untouched."""
    db = home(env) / "sources" / "northwind.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"SQLite format 3\x00 built earlier")
    return db, sha256_file(db)


def test_fetch_with_use_installs_verified_files_and_makes_sources_real(cli_env, mirror):
    proc = memsql("sources", "fetch", "northwind", "sec_edgar", "--use", env=cli_env)
    assert proc.returncode == 0, proc.stderr
    raw = home(cli_env) / "raw"
    for name in ("create.sql", "update.sql"):
        assert sha256_file(raw / "northwind" / name) == northwind_sha256(name)
    assert sorted(p.name for p in (raw / "sec_edgar").iterdir()) == sorted(
        f"{t}_CIK{c}.json" for t, c in FIXTURE_TICKERS.items()
    )
    assert leftovers(cli_env) == []
    specs = load_sources(Path(cli_env["MEMSQL_SOURCES_FILE"]), environ={})
    assert specs["northwind"].kind == "real" and specs["northwind"].real_path == raw / "northwind"
    assert specs["sec_edgar"].kind == "real" and specs["sec_edgar"].real_path == raw / "sec_edgar"
    assert specs["bird_financial"].kind == "embedded"
    text = Path(cli_env["MEMSQL_SOURCES_FILE"]).read_text()
    assert "# Which database each source asset builds." in text and "trans_rows: 20000" in text
    assert "2 sha256-verified" in proc.stdout and "GET " in proc.stderr
    requests = mirror.requests()
    assert {r["user_agent"] for r in requests} == {"memsql tests tests@example.org"}
    sec_times = [r["time"] for r in requests if r["path"].startswith("/sec_edgar/")]
    assert len(sec_times) == 3
    # The fixture's fetch.yaml allows 4 requests per second: three requests span at least 0.5 s
    # (the server logs when it handles a request; 0.1 s covers its scheduling on a busy machine).
    assert sec_times[-1] - sec_times[0] >= 0.4


def test_without_use_prints_the_setting_and_a_second_fetch_reuses_pinned_files(cli_env, mirror):
    proc = memsql("sources", "fetch", "northwind", env=cli_env)
    assert proc.returncode == 0, proc.stderr
    folder = home(cli_env) / "raw" / "northwind"
    assert f"export MEMSQL_SOURCE_NORTHWIND={folder}" in proc.stdout
    assert load_sources(Path(cli_env["MEMSQL_SOURCES_FILE"]), environ={})["northwind"].kind == "embedded"
    again = memsql("sources", "fetch", "northwind", env=cli_env)
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("already fetched, checksum ok") == 2
    assert [r["path"] for r in mirror.requests()] == [CREATE, "/northwind/update.sql"]


def test_429_with_retry_after_is_honoured(cli_env, mirror):
    mirror.faults({CREATE: [{"status": 429, "retry_after": "2"}]})
    proc = memsql("sources", "fetch", "northwind", env=cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "HTTP 429" in proc.stderr and "retrying in 2 s (Retry-After)" in proc.stderr
    first, second = [r for r in mirror.requests() if r["path"] == CREATE]
    assert (first["status"], second["status"]) == (429, 200)
    assert second["time"] - first["time"] >= 1.9


def test_503_is_retried_with_backoff(cli_env, mirror):
    mirror.faults({CREATE: [{"status": 503}, {"status": 503}]})
    proc = memsql("sources", "fetch", "northwind", env=cli_env)
    assert proc.returncode == 0, proc.stderr
    statuses = [r["status"] for r in mirror.requests() if r["path"] == CREATE]
    assert statuses == [503, 503, 200]
    assert "retrying in 1 s (backoff)" in proc.stderr and "retrying in 2 s (backoff)" in proc.stderr
    assert sha256_file(home(cli_env) / "raw" / "northwind" / "create.sql") == northwind_sha256("create.sql")


def test_503_that_never_ends_is_a_clear_error_and_installs_nothing(cli_env, mirror):
    mirror.faults({CREATE: [{"status": 503, "retry_after": "0"}] * 6})
    line = one_error_line(memsql("sources", "fetch", "northwind", env=cli_env))
    assert f"{mirror.url}{CREATE}: HTTP 503" in line and "after 6 attempts" in line
    assert not (home(cli_env) / "raw" / "northwind").exists()
    assert not list((home(cli_env) / "raw").rglob("*.part"))


def test_connection_dropped_mid_file_resumes_with_a_range_request(cli_env, mirror):
    mirror.faults({CREATE: [{"drop_after": 2000}]})
    proc = memsql("sources", "fetch", "northwind", env=cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "connection dropped at 2,000 bytes, resuming" in proc.stderr
    first, second = [r for r in mirror.requests() if r["path"] == CREATE]
    assert first["range"] is None and second["range"] == "bytes=2000-" and second["status"] == 206
    assert sha256_file(home(cli_env) / "raw" / "northwind" / "create.sql") == northwind_sha256("create.sql")
    assert leftovers(cli_env) == []


def test_a_server_that_ignores_range_makes_the_download_restart(cli_env, mirror):
    mirror.faults({CREATE: [{"drop_after": 2000}, {"ignore_range": True}]})
    proc = memsql("sources", "fetch", "northwind", env=cli_env)
    assert proc.returncode == 0, proc.stderr
    statuses = [r["status"] for r in mirror.requests() if r["path"] == CREATE]
    assert statuses == [200, 200]
    assert sha256_file(home(cli_env) / "raw" / "northwind" / "create.sql") == northwind_sha256("create.sql")


def test_a_range_the_client_did_not_ask_for_makes_the_download_restart(cli_env, mirror):
    mirror.faults({CREATE: [{"drop_after": 2000}, {"wrong_range": True}]})
    proc = memsql("sources", "fetch", "northwind", env=cli_env)
    assert proc.returncode == 0, proc.stderr
    requests = [r for r in mirror.requests() if r["path"] == CREATE]
    assert [(r["range"], r["status"]) for r in requests] == [(None, 200), ("bytes=2000-", 206), (None, 200)]
    assert sha256_file(home(cli_env) / "raw" / "northwind" / "create.sql") == northwind_sha256("create.sql")


def test_an_interrupted_fetch_resumes_where_the_killed_process_stopped(cli_env, mirror):
    stage = home(cli_env) / "raw" / ".northwind.partial"
    stage.mkdir(parents=True)
    data = NORTHWIND_DUMP["create.sql"]
    (stage / "create.sql.part").write_bytes(data[:3000])
    (stage / "update.sql").write_bytes(NORTHWIND_DUMP["update.sql"])
    proc = memsql("sources", "fetch", "northwind", env=cli_env)
    assert proc.returncode == 0, proc.stderr
    assert [(r["path"], r["range"]) for r in mirror.requests()] == [(CREATE, "bytes=3000-")]
    assert (home(cli_env) / "raw" / "northwind" / "create.sql").read_bytes() == data
    assert leftovers(cli_env) == []


def test_wrong_checksum_is_refused_and_leaves_no_file(cli_env, mirror):
    mirror.faults({CREATE: [{"drop_after": 1000}]})  # the discarded file was resumed, too
    (mirror.root / "northwind" / "create.sql").write_text("-- not the pinned file\n" * 100)
    db, digest = built_database(cli_env)
    line = one_error_line(memsql("sources", "fetch", "northwind", "--use", env=cli_env))
    assert f"{mirror.url}{CREATE}: checksum mismatch" in line and "expected" in line
    assert not (home(cli_env) / "raw" / "northwind").exists()
    assert not list((home(cli_env) / "raw").rglob("*.part"))
    assert sha256_file(db) == digest
    assert load_sources(Path(cli_env["MEMSQL_SOURCES_FILE"]), environ={})["northwind"].kind == "embedded"


def test_unknown_source_name(cli_env, mirror):
    line = one_error_line(memsql("sources", "fetch", "northwind", "chinook", env=cli_env))
    assert "unknown source 'chinook'" in line and "bird_financial, sec_edgar, northwind or all" in line
    assert mirror.requests() == []


def test_unreachable_host_is_one_line_with_url_and_cause_within_30_s(cli_env, mirror):
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(cli_env, MEMSQL_FETCH_MIRROR=f"http://127.0.0.1:{port}/data")
    started = time.monotonic()
    line = one_error_line(memsql("sources", "fetch", "all", env=env, timeout=60))
    assert time.monotonic() - started < 30
    assert f"http://127.0.0.1:{port}/data/bird_financial/loan.csv: cannot connect: Connection refused" in line


def test_a_disk_without_room_is_a_clear_error_and_leaves_nothing_half_written(cli_env, mirror):
    # The file-size limit makes write() fail as a full disk does; Python ignores SIGXFSZ, so the
    # write raises OSError(EFBIG) instead of killing the process.
    limit = 4096

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    db, digest = built_database(cli_env)
    proc = memsql("sources", "fetch", "northwind", "--use", env=cli_env, preexec_fn=small_disk)
    line = one_error_line(proc)
    assert f"{mirror.url}{CREATE}: no room to write" in line and "create.sql.part" in line
    assert not list((home(cli_env) / "raw").rglob("*.part"))
    assert not (home(cli_env) / "raw" / "northwind").exists()
    assert sha256_file(db) == digest
    assert load_sources(Path(cli_env["MEMSQL_SOURCES_FILE"]), environ={})["northwind"].kind == "embedded"


def test_files_the_adapter_rejects_install_nothing(cli_env, mirror):
    assert memsql("sources", "fetch", "sec_edgar", env=cli_env).returncode == 0
    installed = home(cli_env) / "raw" / "sec_edgar"
    before = {p.name: sha256_file(p) for p in installed.iterdir()}
    sources_before = Path(cli_env["MEMSQL_SOURCES_FILE"]).read_text()
    db, digest = built_database(cli_env)
    cik = FIXTURE_TICKERS["TSTB"]
    (mirror.root / "sec_edgar" / f"CIK{cik}.json").write_text('{"cik": 999998, "entityName": "Testco"}')

    line = one_error_line(memsql("sources", "fetch", "sec_edgar", "--use", env=cli_env))
    assert "the sec_edgar adapter rejects the downloaded files" in line and f"TSTB_CIK{cik}.json" in line
    assert {p.name: sha256_file(p) for p in installed.iterdir()} == before
    assert Path(cli_env["MEMSQL_SOURCES_FILE"]).read_text() == sources_before
    assert sha256_file(db) == digest
    rejected = home(cli_env) / "raw" / ".sec_edgar.rejected"
    assert (rejected / f"TSTB_CIK{cik}.json").is_file() and str(rejected) in line
    assert not (home(cli_env) / "raw" / ".sec_edgar.partial").exists()


def test_sec_needs_a_declared_contact(cli_env, mirror, tmp_path):
    fetch_yaml = Path(cli_env["MEMSQL_FETCH_FILE"])
    fetch_yaml.write_text(fetch_yaml.read_text().replace("memsql tests tests@example.org", "memsql"))
    line = one_error_line(memsql("sources", "fetch", "all", env=cli_env))
    assert "sec_edgar" in line and "MEMSQL_FETCH_USER_AGENT" in line
    assert mirror.requests() == []
    ok = memsql(
        "sources", "fetch", "sec_edgar", env=dict(cli_env, MEMSQL_FETCH_USER_AGENT="Jo jo@example.org")
    )
    assert ok.returncode == 0, ok.stderr
    assert {r["user_agent"] for r in mirror.requests()} == {"Jo jo@example.org"}


def test_http_404_names_the_url(cli_env, mirror):
    (mirror.root / "northwind" / "update.sql").unlink()
    line = one_error_line(memsql("sources", "fetch", "northwind", env=cli_env))
    assert f"{mirror.url}/northwind/update.sql: HTTP 404" in line
    assert not (home(cli_env) / "raw" / "northwind").exists()


def test_stale_files_of_an_earlier_configuration_are_not_installed(cli_env, mirror):
    stage = home(cli_env) / "raw" / ".northwind.partial"
    stage.mkdir(parents=True)
    (stage / "northwind.db").write_bytes(b"left by another configuration")
    assert memsql("sources", "fetch", "northwind", env=cli_env).returncode == 0
    assert sorted(p.name for p in (home(cli_env) / "raw" / "northwind").iterdir()) == [
        "create.sql",
        "update.sql",
    ]
