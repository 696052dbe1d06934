"""A memory plug-in that reads the annotated key names of the turn (`MemoryTurn.referenced_keys`): it runs
in annotated context mode, and observed mode refuses it before its partition starts."""

from __future__ import annotations

from memsql_assets.lib.memory.protocol import MemoryBase, MemoryTurn, PromptBlock, Retrieval


class PeekKeys(MemoryBase):
    def retrieve(self, turn: MemoryTurn, vector):
        return Retrieval(blocks=[PromptBlock("Keys:", ", ".join(turn.referenced_keys))])

    def persist(self, payload):
        return None
