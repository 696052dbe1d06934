"""The `memsql` command's entry point: the CLI, or one line naming the file, field and cause when a
configuration read at import (the conditions file, which the vocabulary derives from) is malformed."""

from __future__ import annotations

import sys


def main() -> int:
    from memsql_assets.lib.errors import MemsqlError

    try:
        from memsql_assets.cli import main as cli_main
    except MemsqlError as exc:
        print(f"memsql: error: {exc}", file=sys.stderr)
        return 2
    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
