"""Where a command's logs go: Dagster's and dbt's output, and Python's warnings (Dagster's
BetaWarnings at import), to a file under the data directory, never to the user's terminal."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from memsql_assets.lib.paths import run_log_path

WARNINGS_LOGGER = "py.warnings"  # the logger `logging.captureWarnings` writes to


def new_log_path(home: Path, command: str) -> Path:
    """A log file of its own for this invocation of `command`."""
    return run_log_path(home, command, datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ"))


class _FileOnFirstRecord(logging.FileHandler):
    """A file handler that creates the file, and its folder, only when a record comes."""

    def _open(self):  # type: ignore[no-untyped-def]
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()


@contextlib.contextmanager
def warnings_to(log: Path) -> Iterator[None]:
    """Python's warnings that its filters show (Dagster's BetaWarnings, not third parties'
    DeprecationWarnings), as records of the `py.warnings` logger in `log` (created when the first one
    comes) while the block runs."""
    handler = _FileOnFirstRecord(log, delay=True, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s - warning - %(message)s"))
    logger = logging.getLogger(WARNINGS_LOGGER)
    logger.addHandler(handler)
    logger.propagate = False
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        logger.removeHandler(handler)
        logger.propagate = True
        handler.close()
