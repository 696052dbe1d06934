"""Error types whose messages name the file, field or turn and what was expected."""

from __future__ import annotations


class MemsqlError(Exception):
    """Base class: every error a user can cause by input says where and what was expected."""


class SourceError(MemsqlError):
    """A source database or real-data folder is missing, corrupt or lacks a table/column/concept."""

    def __init__(self, path: object, problem: str, expected: str | None = None):
        self.path = str(path)
        self.problem = problem
        self.expected = expected
        text = f"{self.path}: {problem}"
        if expected:
            text += f" (expected {expected})"
        super().__init__(text)


class ConfigError(MemsqlError):
    """A configuration file (sources, registry) is malformed."""

    def __init__(self, path: object, field: str, problem: str):
        self.path = str(path)
        self.field = field
        super().__init__(f"{path}: field '{field}': {problem}")


class TemplateError(MemsqlError):
    """A benchmark template is inconsistent (e.g. references a key no earlier turn binds)."""

    def __init__(self, path: object, where: str, problem: str):
        self.path = str(path)
        self.where = where
        super().__init__(f"{path}: {where}: {problem}")


class BenchmarkInvariantError(MemsqlError):
    """Generated sessions violate an invariant of SPEC §1; generation fails fast."""
