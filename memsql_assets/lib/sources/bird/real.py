"""BIRD `financial`: the real-data adapter.

Real inputs (`build_real`) may be BIRD's `financial.sqlite` itself, or a folder of the original
PKDD'99 files in either public form: the raw `.asc` layout (`;`-separated, `YYMMDD` dates, client
`birth_number`, district key `A1`) or the CTU relational-repository export (`,`-separated, ISO
dates, client `gender` + `birth_date`, district key `district_id`). The layout is recognised from
the client file's header; conversion follows docs/data_sources.md.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from memsql_assets.lib.errors import SourceError
from memsql_assets.lib.sources.bird.schema import (
    BIRD_BUILDER_VERSION,
    BIRD_REQUIRED,
    BIRD_SCHEMA,
    EXPECTED_INPUT,
    OPTIONAL_TABLES,
    SOURCE_NAME,
    Column,
    create_schema,
    insert_rows,
)
from memsql_assets.lib.sources.sqlite_db import new_database, require_tables, write_meta
from memsql_assets.lib.sql.sandbox import open_readonly
from memsql_assets.lib.sql.schema import user_tables

FORMAT_SQLITE = "bird_sqlite"
FORMAT_RAW = "pkdd99_raw"
FORMAT_CTU = "ctu_relational"

# header names a file may use for a BIRD column (matched case-insensitively)
_ALIASES: dict[tuple[str, str], tuple[str, ...]] = {("district", "district_id"): ("district_id", "A1")}

_YYMMDD = re.compile(r"^(\d{2})(\d{2})(\d{2})(?: 00:00:00)?$")
_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?)?$")


def build_real(target: Path, input_path: Path) -> None:
    """Write BIRD's layout from `financial.sqlite` or a PKDD'99 folder (raw or CTU layout)."""
    input_path = Path(input_path)
    if not input_path.exists():
        raise SourceError(input_path, "does not exist", EXPECTED_INPUT)
    if input_path.is_dir():
        tables, input_format, inputs = _read_folder(input_path)
    else:
        tables, input_format, inputs = _read_sqlite(input_path)
    missing = [t for t in BIRD_SCHEMA if t not in tables]
    with new_database(target) as conn:
        create_schema(conn)
        for table in BIRD_SCHEMA:
            if table in tables:
                try:
                    insert_rows(conn, table, tables[table])
                except sqlite3.IntegrityError as exc:  # only reachable from a copied BIRD file
                    raise SourceError(
                        input_path, f"table '{table}': {exc}", "values allowed by BIRD's schema"
                    ) from exc
        write_meta(
            conn,
            {
                "kind": "real",
                "synthetic": False,
                "source": SOURCE_NAME,
                "builder_version": BIRD_BUILDER_VERSION,
                "inputs": inputs,
                "input_format": input_format,
                "missing_tables": missing,
            },
        )
        require_tables(conn, target, BIRD_REQUIRED)


def _read_sqlite(path: Path) -> tuple[dict[str, Iterable[Sequence[object]]], str, list[str]]:
    src = open_readonly(path)  # raises SourceError unless an intact SQLite file
    require_tables(src, path, BIRD_REQUIRED)
    present = {t.lower(): t for t in user_tables(src)}
    tables: dict[str, Iterable[Sequence[object]]] = {}
    for table, columns in BIRD_SCHEMA.items():
        actual = present.get(table)
        if actual is None:
            if table in OPTIONAL_TABLES:
                continue
            raise SourceError(path, f"table '{table}' is missing", f"tables {sorted(BIRD_REQUIRED)}")
        have = {r[1].lower(): r[1] for r in src.execute(f'PRAGMA table_info("{actual}")')}
        names = []
        for col, _decl, _nullable in columns:
            if col.lower() not in have:
                raise SourceError(
                    path, f"column '{table}.{col}' is missing", f"BIRD's columns {[c[0] for c in columns]}"
                )
            names.append(f'"{have[col.lower()]}"')
        # read fully: the source connection must not outlive this function
        tables[table] = src.execute(
            f'SELECT {", ".join(names)} FROM "{actual}" ORDER BY {names[0]}'
        ).fetchall()
    src.close()
    return tables, FORMAT_SQLITE, [path.name]


def _find_file(folder: Path, table: str) -> Path | None:
    wanted = {f"{table}.csv", f"{table}.asc"}
    matches = sorted(p for p in folder.iterdir() if p.is_file() and p.name.lower() in wanted)
    if len(matches) > 1:
        raise SourceError(
            folder, f"several files for table '{table}': {[p.name for p in matches]}", "exactly one of them"
        )
    return matches[0] if matches else None


def _read_rows(path: Path) -> tuple[dict[str, int], Iterator[tuple[int, list[str]]]]:
    """Header (lower-cased name -> index) and a stream of (line number, fields) of a `;`/`,` file.

    Streaming keeps a full PKDD'99 trans file (about a million lines) from being held twice.
    """
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1250")  # the original PKDD'99 files are Czech Windows text
    first = text.split("\n", 1)[0]
    if not first.strip():
        raise SourceError(path, "has no header line", "a header naming the columns")
    delimiter = ";" if first.count(";") > first.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quotechar='"')
    header = [h.strip() for h in next(reader)]
    index = {h.lower(): i for i, h in enumerate(header)}

    def rows() -> Iterator[tuple[int, list[str]]]:
        for fields in reader:
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            if len(fields) != len(header):
                raise SourceError(
                    path,
                    f"line {reader.line_num} has {len(fields)} fields",
                    f"{len(header)} fields as in the header",
                )
            yield reader.line_num, fields

    return index, rows()


def _column_index(path: Path, index: Mapping[str, int], table: str, column: str) -> int:
    names = _ALIASES.get((table, column), (column,))
    for name in names:
        if name.lower() in index:
            return index[name.lower()]
    raise SourceError(
        path, f"column '{column}' is missing", f"a column {' or '.join(repr(n) for n in names)}"
    )


def _to_date(raw: str) -> dt.date:
    text = raw.strip()
    if m := _YYMMDD.match(text):
        return dt.date(1900 + int(m[1]), int(m[2]), int(m[3]))
    if m := _ISO.match(text):
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    raise ValueError(text)


def _to_int(raw: str) -> int | float:
    text = raw.strip()
    try:
        return int(text)
    except ValueError:
        value = float(text)
        # a fractional value in an INTEGER column is kept, not truncated (SQLite stores it as REAL)
        return int(value) if value.is_integer() else value


_CONVERTERS: dict[str, tuple[Callable[[str], object], str]] = {
    "INTEGER": (_to_int, "a number"),
    "REAL": (lambda s: float(s.strip()), "a number"),
    "DATE": (lambda s: _to_date(s).isoformat(), "a date YYMMDD or YYYY-MM-DD"),
}


def _convert(path: Path, table: str, column: Column, raw: str, line: int) -> object:
    name, decl, nullable = column
    value: object = raw
    if table == "district" and name not in ("district_id", "A2", "A3") and raw.strip() == "?":
        value = None  # PKDD'99 marks unknown district figures with '?'
    elif decl in _CONVERTERS:
        if not raw.strip():
            value = None
        else:
            convert, expected = _CONVERTERS[decl]
            try:
                value = convert(raw)
            except ValueError as exc:
                raise SourceError(
                    path, f"column '{name}' line {line}: {raw!r} is not valid", expected
                ) from exc
    if value is None and not nullable:
        raise SourceError(
            path, f"column '{name}' line {line}: value is missing", f"a {decl} value in every row"
        )
    return value


def _birth(path: Path, raw: str, line: int) -> tuple[str, str]:
    """PKDD'99 birth_number YYMMDD (women: month + 50) -> (gender, ISO birth date)."""
    text = raw.strip()
    try:
        if not re.fullmatch(r"\d{6}", text):
            raise ValueError(text)
        month = int(text[2:4])
        gender = "F" if month > 50 else "M"
        born = dt.date(1900 + int(text[:2]), month - 50 if month > 50 else month, int(text[4:6]))
    except ValueError as exc:
        raise SourceError(
            path, f"column 'birth_number' line {line}: {raw!r} is not valid", "YYMMDD, month + 50 for women"
        ) from exc
    return gender, born.isoformat()


def _detect_layout(path: Path, index: Mapping[str, int]) -> str:
    if "gender" in index and "birth_date" in index:
        return FORMAT_CTU
    if "birth_number" in index:
        return FORMAT_RAW
    raise SourceError(
        path,
        "column 'birth_number' (PKDD'99 raw layout) or 'gender' + 'birth_date' (CTU layout) is missing",
        "the client file of one of the two layouts",
    )


def _read_folder(folder: Path) -> tuple[dict[str, Iterable[Sequence[object]]], str, list[str]]:
    files: dict[str, Path] = {}
    for table in BIRD_SCHEMA:
        found = _find_file(folder, table)
        if found is not None:
            files[table] = found
        elif table not in OPTIONAL_TABLES:
            raise SourceError(
                folder, f"no file for table '{table}'", f"{table}.csv or {table}.asc; {EXPECTED_INPUT}"
            )

    client_index, _ = _read_rows(files["client"])
    layout = _detect_layout(files["client"], client_index)
    tables: dict[str, Iterable[Sequence[object]]] = {}
    for table, path in files.items():
        index, rows = _read_rows(path)
        columns = BIRD_SCHEMA[table]
        derive_birth = table == "client" and layout == FORMAT_RAW
        positions: list[int | None] = []
        for column in columns:
            if derive_birth and column[0] in ("gender", "birth_date"):
                positions.append(None)
            else:
                positions.append(_column_index(path, index, table, column[0]))
        birth_pos = _column_index(path, index, table, "birth_number") if derive_birth else None
        out: list[tuple[object, ...]] = []
        for line, fields in rows:
            values: list[object] = []
            derived = _birth(path, fields[birth_pos], line) if birth_pos is not None else None
            for column, pos in zip(columns, positions, strict=True):
                if pos is None:
                    assert derived is not None
                    values.append(derived[0] if column[0] == "gender" else derived[1])
                else:
                    values.append(_convert(path, table, column, fields[pos], line))
            out.append(tuple(values))
        key = columns[0][0]
        for row in out:
            if not isinstance(row[0], int):
                raise SourceError(path, f"column '{key}': {row[0]!r} is not an integer id", "integer ids")
        out.sort(key=lambda r: r[0])  # type: ignore[arg-type,return-value]
        for prev, row in zip(out, out[1:], strict=False):
            if prev[0] == row[0]:
                raise SourceError(path, f"column '{key}': id {row[0]} occurs twice", "unique ids")
        tables[table] = out
    return tables, layout, sorted(p.name for p in files.values())
