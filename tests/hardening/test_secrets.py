"""Secrets and bind addresses.

A recognisable fake API key travels the whole path: registry entry -> environment -> Dagster run
of one turn_results partition -> gateway -> a provider that echoes the key in its error messages.
Afterwards the key must appear nowhere: not in the request store, the result parquet, the summary,
the checkpoints (inspected while the run is in flight), the Dagster instance's storage (event log,
runs), the Dagster event metadata, nor any captured log or console output.

Servers the project starts bind to 127.0.0.1 or a unix socket by default: the private redis-server
has no TCP port, `memsql ui` and `memsql docs` default to 127.0.0.1.
"""

from __future__ import annotations

import logging
from pathlib import Path

import dagster as dg
import pytest
from dagster._serdes import serialize_value
from model_fakes import FAKE_KEY_ENV, FAKE_SECRET, TEST_REGISTRY

from memsql_assets.definitions import defs
from memsql_assets.defs.evaluation.partitions import partition_key
from memsql_assets.defs.jobs import EVALUATE_JOB
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, progress_dir
from memsql_assets.lib.harness.summary import SUMMARY_FILE
from memsql_assets.lib.memory.redis_service import RedisServer

SECRET = FAKE_SECRET.encode()


def _files_with_secret(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and SECRET in p.read_bytes()]


def test_fake_key_never_leaves_the_environment(home, tmp_path, fake_provider, monkeypatch, caplog, capfd):
    registry_file = tmp_path / "models.yaml"
    registry_file.write_text(TEST_REGISTRY, encoding="utf-8")
    monkeypatch.setenv("MEMSQL_MODELS_FILE", str(registry_file))
    monkeypatch.setenv("MEMSQL_HOME", str(home))
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_SECRET)
    # The provider echoes the key in auth errors; 429@0 is retried at once; none_content is malformed.
    fake_provider.script("flaky", "401-echo", "ok", "429@0", "ok", "401-echo", "none_content")
    leaked_checkpoints: list[Path] = []
    checkpoints = progress_dir(home, "flaky", "B")
    original = fake_provider.acompletion

    async def spying(model, messages, *args, **kwargs):
        leaked_checkpoints.extend(_files_with_secret(checkpoints) if checkpoints.exists() else [])
        return await original(model, messages, *args, **kwargs)

    fake_provider.acompletion = spying

    caplog.set_level(logging.INFO)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("model", ["flaky"])
        result = defs.resolve_job_def(EVALUATE_JOB).execute_in_process(
            instance=instance, partition_key=partition_key("flaky", "B")
        )
        assert result.success
        assert all(c["api_key"] == FAKE_SECRET for c in fake_provider.calls), "the key did reach the provider"
        (mat,) = result.get_asset_materialization_events()
        meta = mat.materialization.metadata
        events = instance.all_logs(result.run_id)
        event_text = "\n".join(serialize_value(e) for e in events)
        instance_files = _files_with_secret(Path(instance.root_directory))

    summary = (partition_dir(home, "flaky", "B") / SUMMARY_FILE).read_text()
    errors = meta["model_errors"].value
    assert errors.get("auth_error", 0) >= 2 and errors.get("malformed_response", 0) >= 1, errors
    assert f'"auth_error": {errors["auth_error"]}' in summary, "metadata and summary.json agree"

    assert (partition_dir(home, "flaky", "B") / RESULT_FILE).exists()
    assert not leaked_checkpoints, leaked_checkpoints
    assert not _files_with_secret(home), "request store, results, summary, Redis log"
    assert not instance_files, instance_files
    assert FAKE_SECRET not in event_text and FAKE_SECRET not in repr(dict(meta))
    out, err = capfd.readouterr()
    assert FAKE_SECRET not in caplog.text and FAKE_SECRET not in out + err
    assert "[redacted]" in (home / "results").joinpath(
        "model=flaky", "condition=B", RESULT_FILE
    ).read_bytes().decode("latin-1"), "the echoed key was replaced, not the row dropped"


def test_private_redis_has_no_tcp_port(tmp_path):
    with RedisServer(tmp_path / "r.sock") as server:
        client = server.client()
        try:
            config = client.config_get("port")
            assert config["port"] == "0", "no TCP listener: only the unix socket"
            assert client.config_get("bind")["bind"].split() == ["127.0.0.1"]
            assert client.config_get("unixsocketperm")["unixsocketperm"] == "700"
        finally:
            client.close()


@pytest.mark.parametrize("command", ["ui", "docs"])
def test_cli_servers_default_to_loopback(command, tmp_path, monkeypatch):
    """Without --host, the host actually handed to `dagster dev` / `dbt docs serve` is the loopback."""
    import socket

    from memsql_assets import cli
    from memsql_assets.orchestration import servers

    with socket.socket() as s:  # the default port may be held by a real server on this machine
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    launched: list[list[str]] = []
    monkeypatch.setattr(servers, "serve", lambda cmd, **kw: launched.append(cmd) or 0)
    monkeypatch.setattr(servers, "run_dbt", lambda *a, **kw: None)  # `docs generate`: not what is tested
    assert cli.main([command, "--port", str(port)]) == 0
    (cmd,) = launched
    flag = "-h" if command == "ui" else "--host"
    assert cmd[cmd.index(flag) + 1] == "127.0.0.1", cmd
