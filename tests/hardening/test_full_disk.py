"""A full disk mid-partition: the home on a small tmpfs (mounted by the test; skipped where it cannot
mount one) fills up while a partition writes. The run stops with one line naming the path and "no
space left"; nothing published is corrupt; once space is freed the re-run resumes and ends with the
rows of an uninterrupted run; `memsql eval` on the full disk exits non-zero with one line."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import copy_home, row_diffs
from test_fault_server import run

from memsql_assets.lib.atomic import DiskFullError
from memsql_assets.lib.harness.results import RESULT_FILE, partition_dir, progress_dir, read_checkpoints
from memsql_assets.lib.models.fault_server import fault_registry, fault_server
from memsql_assets.lib.models.registry import MODELS_FILE_ENV
from memsql_assets.lib.models.request_store import RequestStore
from memsql_assets.lib.paths import REPO_ROOT

FREE_KIB = 160  # left on the disk when the partition starts: room for a few dozen records


@contextlib.contextmanager
def small_disk(where: Path, size_mib: int = 12) -> Iterator[Path]:
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mib}m", "tmpfs", str(where)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (root and CAP_SYS_ADMIN needed): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def fill(disk: Path, leave_kib: int) -> Path:
    """A file taking all the free space of `disk` but `leave_kib`."""
    filler = disk / "filler"
    stat = os.statvfs(disk)
    free = stat.f_bavail * stat.f_frsize - leave_kib * 1024
    with open(filler, "ab") as fh:
        fh.write(b"\0" * max(0, free))
    return filler


def test_a_full_disk_stops_the_run_in_one_line_and_the_resume_matches(small_home, tmp_path):
    reference = copy_home(small_home, tmp_path / "reference")
    with small_disk(tmp_path / "disk") as disk, fault_server(tmp_path) as server:
        home = copy_home(small_home, disk / "home")
        registry = fault_registry(tmp_path / "models.yaml", server.url, max_concurrency=4)
        clean = run(reference, registry)
        filler = fill(disk, FREE_KIB)
        with pytest.raises(DiskFullError) as stopped:
            run(home, registry)
        line = str(stopped.value)
        print(line)
        assert "\n" not in line and "no space left" in line and str(disk) in line
        store = RequestStore.at_home(home)
        records = list(store.root.glob("??/*.json"))
        assert 0 < len(records) < len(clean.rows), "stopped mid-partition"
        assert all(store.get(r.stem) is not None for r in records), "every record whole"
        assert store.rejected == 0
        read_checkpoints(progress_dir(home, "faulty", "A"))  # parses, or discards with a warning
        assert not (partition_dir(home, "faulty", "A") / RESULT_FILE).exists(), "nothing half-published"
        filler.unlink()
        resumed = run(home, registry)
        fill(disk, FREE_KIB)
        done = memsql_eval(home, tmp_path / "models.yaml", "B")
    assert not row_diffs(resumed.rows, clean.rows)
    console = (done.stdout + done.stderr).strip()
    print(console)
    assert done.returncode != 0
    assert [line for line in console.splitlines() if "no space left" in line.lower()] == console.splitlines()[-1:]
    assert "Traceback" not in console


def memsql_eval(home: Path, registry_file: Path, condition: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMSQL_HOME": str(home), MODELS_FILE_ENV: str(registry_file)}
    env.pop("DAGSTER_HOME", None)
    cmd = [sys.executable, "-m", "memsql_assets.cli", "eval", "--model", "faulty", "--condition", condition]
    return subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
