"""`memsql export-benchmark`: the paper benchmark as JSONL, one object per turn."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("export-benchmark", help="write the benchmark as JSONL (one object per turn)")
@click.argument("path", type=click.Path(path_type=Path))
def command(path: Path) -> int:
    from memsql_assets.lib.benchmark.store import export_jsonl, read_turns
    from memsql_assets.lib.paths import benchmark_dir, memsql_home

    n = export_jsonl(read_turns(benchmark_dir(memsql_home())), path)
    print(f"wrote {n} turns to {path}")
    return 0
