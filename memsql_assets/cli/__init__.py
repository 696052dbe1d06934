"""`memsql`: the command line, one module per command, over the orchestration (memsql_assets/
orchestration) and the libraries. Bad input is one line and exit 2; Python's warnings go to the
command's log file under the data directory, never to the terminal."""

from __future__ import annotations

import atexit
import gc
import sys

import click

from memsql_assets.cli import docs, eval, export_benchmark, models, run, sources, trajectory, ui, view
from memsql_assets.cli.options import OptionError
from memsql_assets.lib.errors import MemsqlError

# After a run that loaded torch, Chroma, dbt and Dagster, the interpreter's final garbage collections
# took seconds in every process (this one and each worker): the heap is about to be freed anyway.
atexit.register(gc.freeze)

COMMANDS = (run, eval, models, trajectory, sources, export_benchmark, docs, ui, view)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
def memsql(ctx: click.Context) -> None:
    """Multi-turn text-to-SQL memory benchmark platform."""
    from memsql_assets.lib.paths import memsql_home
    from memsql_assets.orchestration.logs import new_log_path, warnings_to

    ctx.obj = new_log_path(memsql_home(), ctx.invoked_subcommand or "memsql")
    ctx.with_resource(warnings_to(ctx.obj))


for _module in COMMANDS:
    memsql.add_command(_module.command)


def main(argv: list[str] | None = None) -> int:
    """`memsql ARGS`: the command's exit status."""
    try:
        return int(memsql.main(args=argv, prog_name="memsql", standalone_mode=False) or 0)
    except OptionError as exc:
        command = exc.ctx.info_name if exc.ctx is not None else "memsql"
        print(f"memsql {command}: {exc.message}", file=sys.stderr)
        return 2
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.Abort:
        print("Aborted.", file=sys.stderr)
        return 1
    except MemsqlError as exc:
        print(f"memsql: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        return _disk_full_exit(exc)


def _disk_full_exit(exc: Exception) -> int:
    """One line for a disk that filled up under a library's write (Dagster's SQLite storage, ...);
    any other exception goes on as it is."""
    from memsql_assets.lib.atomic import disk_full
    from memsql_assets.lib.paths import memsql_home

    if not disk_full(exc):
        raise exc
    print(f"memsql: error: {memsql_home()}: no space left on device; free some space and re-run to resume", file=sys.stderr)
    return 2
