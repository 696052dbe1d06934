"""Options shared by several commands, and the typed option values whose bad input is one line
`memsql COMMAND: ...` (exit 2) naming the flag and what was expected."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

from memsql_assets.lib.errors import MemsqlError

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class OptionError(click.BadParameter):
    """A bad option value: `main` prints `memsql COMMAND: <message>` alone."""


class MaxCost(click.ParamType):
    name = "USD"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not number >= 0 or math.isinf(number):
            raise OptionError(f"--max-cost {value}: expected a number of USD >= 0", ctx, param)
        return number


class WaveSize(click.ParamType):
    name = "W"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        from memsql_assets.lib.harness.settings import resolve_wave_size

        try:
            parsed: object = int(value)
        except ValueError:
            parsed = value
        try:
            return resolve_wave_size(parsed, 1)  # type: ignore[arg-type]
        except MemsqlError as exc:
            raise OptionError(f"--wave-size: {exc}", ctx, param) from None


class Epochs(click.ParamType):
    name = "N"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        from memsql_assets.lib.harness.settings import EpochsError, check_epochs

        try:
            return check_epochs(int(value), name="--epochs")
        except ValueError:
            raise OptionError(f"--epochs {value}: expected an integer >= 1", ctx, param) from None
        except EpochsError as exc:
            raise OptionError(str(exc), ctx, param) from None


def json_flag(help: str | None = None) -> Decorator:
    return click.option("--json", "as_json", is_flag=True, help=help)


def cost_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option(
        "--max-cost",
        type=MaxCost(),
        help="per partition: leave out a partition run whose estimated cost exceeds USD (a number >= 0), "
        "and stop a partition run, resumable, once the calls it made cost USD (the registry's max_cost_usd "
        "when unset); under `memsql run` each partition has its own cap, so the whole run can spend up to "
        "USD times the partitions it runs",
    )(f)
    return click.option(
        "--dry-run",
        is_flag=True,
        help="print, per partition, the model calls the run would make (answers not in the request store), "
        "their estimated cost and its upper bound; change nothing",
    )(f)


def wave_size_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--wave-size",
        type=WaveSize(),
        help="conditions C and D run sessions in waves of W, a session never seeing one of its own wave "
        "(an integer >= 1; 1: the paper's strictly sequential order; default: the model's max_concurrency, at most the largest W that keeps every analyst's history reachable)",
    )(f)


def server_options(default_port: int) -> Decorator:
    """--host (loopback by default) and --port of a command that serves until Ctrl-C."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        from memsql_assets.lib.ports import LOOPBACK

        f = click.option("--port", type=int, default=default_port, show_default=True)(f)
        return click.option("--host", default=LOOPBACK, show_default=True)(f)

    return decorate
