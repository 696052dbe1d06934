"""One agent turn of the HTTP model in a process of its own, for the kill -9 test.

    python agent_child.py HOME API_BASE DB_PATH

It prints the trace (without measurements) as its last line when the turn ends.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from agent_helpers import CELL, TURN, gateway, registry, turn_messages

from memsql_assets.lib.agent.loop import gateway_complete, run_agent, trace_json
from memsql_assets.lib.agent.turn_tools import TurnTools
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.trajectories.tools import AGENT_OBSERVATION_CHARS, DbTools


def main(home: str, api_base: str, db_path: str) -> None:
    conn = open_readonly(Path(db_path))
    gw = gateway(Path(home), registry(Path(home), api_base))
    complete = gateway_complete(gw, "http-agent", TURN, CELL)
    trace = asyncio.run(run_agent(turn_messages(), TurnTools(DbTools(conn, "bird_financial", observation_chars=AGENT_OBSERVATION_CHARS)), complete))
    print(trace_json(trace, False), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
