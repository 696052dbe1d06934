"""`memsql run`: the main job, then the reference models under every condition, then the metrics."""

from __future__ import annotations

import json

import click

from memsql_assets.cli.options import cost_options, json_flag, wave_size_option


@click.command(
    "run",
    help="the main job, then the reference models under every condition. MEMSQL_BENCHMARK_SESSIONS=N builds "
    "the paper benchmark at N sessions (9 to 300: the sample `eval --sessions N` takes; docs/guide.md)",
)
@json_flag("print the summary as JSON")
@click.option("--skip-eval", is_flag=True, help="only the unpartitioned assets")
@click.option(
    "--verbose",
    is_flag=True,
    help="print Dagster's and dbt's logs as they come (default: one line per stage; the logs go to "
    "a file under the data directory, named in the summary)",
)
@click.option("--force", is_flag=True, help="recompute everything (default: only what Dagster reports missing or stale)")
@cost_options
@wave_size_option
def command(
    as_json: bool,
    skip_eval: bool,
    verbose: bool,
    force: bool,
    dry_run: bool,
    max_cost: float | None,
    wave_size: int | None,
) -> int:
    from memsql_assets.orchestration.selection import chosen_cells

    cells = chosen_cells()  # a bad conditions or sources file: one line, before anything is imported or built
    if dry_run:  # nothing imported that writes to the data directory (the Dagster definitions' warnings)
        from memsql_assets.cli.eval import print_plans
        from memsql_assets.orchestration.budget import main_run_plans

        return print_plans(main_run_plans(cells), max_cost, dry_run=True)
    import dagster as dg

    from memsql_assets.cli.render import print_run_summary
    from memsql_assets.defs.instance import ensure_dagster_home
    from memsql_assets.lib.console import captured
    from memsql_assets.lib.paths import memsql_home
    from memsql_assets.orchestration.main_run import run_main

    home = memsql_home()
    ensure_dagster_home(home)
    log = None if verbose else click.get_current_context().obj  # the command's log file (cli/__init__.py)
    with captured("memsql run", log) as console, dg.DagsterInstance.get() as instance:
        summary = run_main(instance, cells, console.stage, force, skip_eval, max_cost, wave_size, log)
    if as_json:
        print(json.dumps(summary.as_json(), indent=2))
    else:
        print_run_summary(summary)
    return 0 if summary.ok else 1
