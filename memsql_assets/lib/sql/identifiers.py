"""SQLite identifiers in SQL text the project writes (schema introspection, source builders, tools)."""


def quote_ident(name: str) -> str:
    """`name` double-quoted, its own double quotes doubled: any table or column name reads as itself."""
    return '"' + name.replace('"', '""') + '"'
