"""Run by test_context_modes.py in its own process (MEMSQL_HOME, MEMSQL_CONDITIONS_FILE and PYTHONPATH
set): evaluates one model under each condition named on the command line, every condition's real memory
wrapped in a recorder of what the harness hands it (each MemoryTurn and each payload), and writes the
rows, the recorded calls and the partition summaries as JSON to the path given first. The trajectory
memory (E, E_prompt) reads the trajectory store under MEMSQL_HOME, as the evaluation assets do.

    python context_mode_child.py OUT.json MODEL CONDITION [CONDITION ...]
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import memsql_assets  # noqa: F401  (the offline switches first)
from memsql_assets.lib.errors import MemsqlError
from memsql_assets.lib.harness import services
from memsql_assets.lib.harness.evaluate import evaluate_partition
from memsql_assets.lib.trajectories.lookup import trajectory_lookup

ROW_FIELDS = ("session_id", "turn_index", "memory_critical", "ex_strict", "request_key", "error_class", "missing_keys")


class Recorder:
    """The condition's memory, unchanged, with every retrieve's turn and every persist's payload recorded."""

    def __init__(self, inner: Any, calls: list[dict[str, Any]]):
        self.inner, self.calls = inner, calls

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _turn(self, turn: Any) -> None:
        fields = {k: getattr(turn, k) for k in ("session_id", "turn_index", "source", "question")}
        self.calls.append({"call": "retrieve", "turn": fields, "referenced_keys": type(turn.referenced_keys).__name__})

    def retrieve(self, turn: Any, vector: Any) -> Any:
        self._turn(turn)
        return self.inner.retrieve(turn, vector)

    async def aretrieve(self, turn: Any, vector: Any) -> Any:
        self._turn(turn)
        return await self.inner.aretrieve(turn, vector)

    def persist(self, payload: dict[str, Any]) -> None:
        self.calls.append({"call": "persist", "payload": dict(payload)})
        self.inner.persist(payload)


def main(out: Path, model: str, conditions: list[str]) -> None:
    calls: dict[str, list[dict[str, Any]]] = {}
    real = services.build_memory
    result: dict[str, Any] = {}
    for condition in conditions:
        calls[condition] = []
        services.build_memory = lambda c, _log=calls[condition]: Recorder(real(c), _log)
        try:
            home = Path(os.environ["MEMSQL_HOME"])
            outcome = evaluate_partition(home, model, condition, trajectory_factory=trajectory_lookup)
        except MemsqlError as exc:
            result[condition] = {"error": str(exc)}
            continue
        rows = [{k: r[k] for k in ROW_FIELDS} for r in outcome.rows]
        result[condition] = {"rows": rows, "calls": calls[condition], "summary": outcome.summary}
    out.write_text(json.dumps(result, default=str), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], sys.argv[3:])
