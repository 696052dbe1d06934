"""The vocabulary is defined once (lib/vocabulary.py, conditions in lib/conditions.py): a literal
copy of a list of condition names, sources, error classes or reference models anywhere else fails."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from memsql_assets.lib import vocabulary
from memsql_assets.lib.conditions import CONDITIONS
from memsql_assets.lib.evaluation.taxonomy import ErrorClass
from memsql_assets.lib.report.dbt_cli import dbt_vars_arg
from memsql_assets.lib.sources.config import PREFIX

REPO = Path(__file__).resolve().parents[2]
DEFINITIONS = {REPO / "memsql_assets/lib/vocabulary.py", REPO / "memsql_assets/lib/conditions.py"}
SCANNED = ("memsql_assets", "dbt_project", "expectations", "tests", "bench", "sources", "scripts")
SUFFIXES = {".py", ".sql", ".yml", ".yaml", ".json"}
SKIPPED_DIRS = {"target", "logs", "golden", "results", "__pycache__"}  # dbt output, fixtures, measurements

VOCABULARIES = {
    "conditions": set(vocabulary.CONDITION_NAMES),
    "sources": set(vocabulary.SOURCE_PREFIXES.values()),
    "error classes": set(vocabulary.ERROR_CLASSES),
    "reference models": set(vocabulary.REFERENCE_MODELS),
}
_GROUP = re.compile(r"[\[(]([^\[\]()]*)[\])]")  # one bracketed list: [..] or (..)
_TOKEN = re.compile(r"[A-Za-z_][\w-]*")


def copied(names: set[str]) -> list[str]:
    """The vocabularies of which `names` holds a copy: all names, or all but one of a long one."""
    return [
        vocab for vocab, words in VOCABULARIES.items() if len(names & words) >= max(2, len(words) - 1)
    ]


def python_lists(text: str) -> list[set[str]]:
    return [
        {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.List | ast.Tuple | ast.Set)
    ]


def text_lists(text: str) -> list[set[str]]:
    return [set(_TOKEN.findall(group)) for group in _GROUP.findall(text)]


def copies_in(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    groups = python_lists(text) if path.suffix == ".py" else text_lists(text)
    return sorted({vocab for group in groups for vocab in copied(group)})


def scanned_files() -> list[Path]:
    return [
        p
        for top in SCANNED
        for p in sorted((REPO / top).rglob("*"))
        if p.suffix in SUFFIXES
        and p.is_file()
        and p not in DEFINITIONS
        and not SKIPPED_DIRS & set(p.relative_to(REPO).parts)
    ]


@pytest.mark.slow
def test_no_copy_of_the_vocabulary_outside_its_definition():
    found = {str(p.relative_to(REPO)): c for p in scanned_files() if (c := copies_in(p))}
    assert not found, f"copies of the vocabulary (import it from memsql_assets.lib.vocabulary): {found}"


# Planted copies, built from the vocabulary itself (a literal list here would be a copy the scan reports).
_CONDITIONS = list(vocabulary.CONDITION_NAMES)
_CLASSES = list(vocabulary.ERROR_CLASSES)


@pytest.mark.parametrize(
    ("suffix", "text", "vocab"),
    [
        (".py", f"ORDER = {tuple(_CONDITIONS)!r}\n", "conditions"),
        (".py", 'for src in ["NW", "SEC", "BIRD"]:\n    pass\n', "sources"),
        (".sql", "where condition in (" + ", ".join(f"'{c}'" for c in _CONDITIONS[1:]) + ")\n", "conditions"),
        (".yml", f"values: {_CLASSES!r}\n", "error classes"),
        (".json", '{"regex": "^(?:NW|SEC|BIRD)-[123]-[0-9]{3}$"}', "sources"),
        (".yml", 'reference_models: ["gold", "paraphrase", "recall-probe", "reader-probe"]\n', "reference models"),
    ],
)
def test_the_detector_finds_a_planted_copy(tmp_path, suffix, text, vocab):
    path = tmp_path / f"copy{suffix}"
    path.write_text(text, encoding="utf-8")
    assert copies_in(path) == [vocab]


def test_a_few_names_are_not_a_copy(tmp_path):
    path = tmp_path / "ok.py"
    path.write_text('for c in ("A", "B", "B_wm5"):\n    pass\nx = ("gold", "A")\n', encoding="utf-8")
    assert copies_in(path) == []


def test_other_modules_derive_from_the_definition():
    assert tuple(CONDITIONS) == vocabulary.CONDITION_NAMES
    assert tuple(ErrorClass) == tuple(vocabulary.ErrorClass)
    assert PREFIX == vocabulary.SOURCE_PREFIXES
    assert set(vocabulary.REPORT_SOURCES) == set(PREFIX.values())
    assert json.loads(dbt_vars_arg())["conditions"] == list(CONDITIONS)
