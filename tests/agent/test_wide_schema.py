"""The agent loop over a wide source (sources.yaml `variant: wide`): every table fits its list, and a
call naming a table the schema lacks gets the tool's error while the turn goes on."""

from __future__ import annotations

import asyncio

from agent_helpers import Scripted, reply

from memsql_assets.lib.agent.loop import TurnOutcome, run_agent
from memsql_assets.lib.agent.turn_tools import CallOutcome, TurnTools
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.trajectories.tools import AGENT_OBSERVATION_CHARS, DbTools

FINAL = 'SELECT COUNT(*) FROM "Orders"'


def test_a_table_the_wide_schema_lacks_is_an_error_the_agent_goes_on_from(wide_dbs):
    conn = open_readonly(wide_dbs["northwind"])
    try:
        tools = TurnTools(DbTools(conn, "northwind", observation_chars=AGENT_OBSERVATION_CHARS))
        model = Scripted(
            reply(("get_ddl", {"table": "orders_v2"})),
            reply(("list_tables", {})),
            reply(("get_ddl", {"table": "stg_orders"}), ("submit_sql", {"sql": FINAL})),
        )
        trace = asyncio.run(run_agent([{"role": "user", "content": "How many orders?"}], tools, model))
    finally:
        conn.close()
    assert (trace.outcome, trace.final_sql) == (TurnOutcome.SUBMITTED, FINAL)
    missing, listed = trace.steps[0].tool_uses[0], model.seen[2][-1]["content"]
    assert (missing.outcome, missing.error) == (CallOutcome.TOOL_ERROR, "no such table: orders_v2")
    assert model.seen[1][-1]["content"] == "error (tool_error): no such table: orders_v2"
    # the whole list reaches the model: all of the wide schema's tables, none cut
    assert listed.startswith(f"{len(tools.db.stats.tables)} tables: ") and "…" not in listed
    assert len(tools.db.stats.tables) >= 80 and "stg_orders(" in listed and "Orders(16282)" in listed
