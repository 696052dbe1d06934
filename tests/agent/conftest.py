"""Fixtures of the agent-loop tests."""

from __future__ import annotations

import pytest

from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.trajectories.tools import AGENT_OBSERVATION_CHARS, DbTools


@pytest.fixture()
def bird(embedded_dbs):
    """The tool box over the embedded bird_financial database, on a sandboxed read-only connection."""
    conn = open_readonly(embedded_dbs["bird_financial"])
    yield DbTools(conn, "bird_financial", observation_chars=AGENT_OBSERVATION_CHARS)
    conn.close()
