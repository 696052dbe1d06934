"""Helpers shared by the memory-store tests (imported by module name: tests/ has no packages)."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def payload(session_id: str, turn_index: int, **state: object) -> dict:
    return {
        "session_id": session_id,
        "turn_index": turn_index,
        "question": f"question {turn_index} of {session_id}",
        "sql": f"SELECT {turn_index}",
        "result_summary": f"1 row: {turn_index}",
        "state_updates": dict(state),
    }
