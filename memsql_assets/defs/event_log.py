"""Dagster's SQLite event log, with one open engine per database file instead of one per event.

The stock storage builds an engine, opens a connection and disposes both for every event, and an
asset check's event touches three databases, and a metrics run stores one event per dbt test (the
dbt tests are asset checks). Everything else, including its lock that serializes every
connection of the storage, is Dagster's own."""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._core.storage.sql import create_engine
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

# Each run has its own database: a long-lived process (the UI) keeps only the latest few open.
OPEN_DATABASES = 8


def _wal_sync_normal(dbapi_connection: Any, _record: Any) -> None:
    # SQLite's advice for WAL databases: no fsync per commit, never a corrupt file; a crash of the
    # machine (not of a process) may lose the last events.
    dbapi_connection.execute("PRAGMA synchronous=NORMAL")


class PooledSqliteEventLogStorage(SqliteEventLogStorage):
    """`event_log_storage` of the instance memsql writes (defs/instance.py)."""

    def __init__(self, base_dir: str, inst_data: Any = None):
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._engines_pid = os.getpid()
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Any) -> PooledSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:
        with self._db_lock, self._engine(shard).connect() as conn, conn.begin():
            yield conn

    def _engine(self, shard: str) -> Engine:
        if self._engines_pid != os.getpid():  # a forked child must not share its parent's connections
            self._engines, self._engines_pid = OrderedDict(), os.getpid()
        engine = self._engines.get(shard)
        if engine is None:
            engine = create_engine(
                self.conn_string_for_shard(shard), connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS}
            )
            event.listen(engine, "connect", _wal_sync_normal)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            self._engines[shard] = engine
            while len(self._engines) > OPEN_DATABASES:
                self._engines.popitem(last=False)[1].dispose()
        self._engines.move_to_end(shard)
        return engine

    def _dispose_engines(self) -> None:
        with self._db_lock:
            while self._engines:
                self._engines.popitem()[1].dispose()

    def wipe(self) -> None:
        self._dispose_engines()  # wipe deletes the files these connections hold
        super().wipe()

    def dispose(self) -> None:
        super().dispose()
        self._dispose_engines()
