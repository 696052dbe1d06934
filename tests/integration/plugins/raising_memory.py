"""A memory plug-in that fails on purpose, loaded by `module:Class` (PYTHONPATH names this folder): it
raises while retrieving for every session's third turn and while storing its fifth, and otherwise keeps
the session's last turn, so that the harness's memory_error handling runs on a real partition."""

from __future__ import annotations

from memsql_assets.lib.memory.protocol import MemoryBase, MemoryTurn, Retrieval


class RaiseOnTurns(MemoryBase):
    def __init__(self, params=None):
        super().__init__(params)
        self._last: dict[str, dict] = {}

    def retrieve(self, turn: MemoryTurn, vector):
        if turn.turn_index == 3:
            raise RuntimeError(f"retrieve broke on {turn.session_id}#3")
        last = self._last.get(turn.session_id)
        return Retrieval(recent=[last] if last else [])

    def persist(self, payload):
        if payload["turn_index"] == 5:
            raise ValueError("persist broke on turn 5")
        self._last[payload["session_id"]] = payload

    def forget(self, session_id):
        self._last.pop(session_id, None)
