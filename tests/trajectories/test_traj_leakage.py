"""No leakage: no synthetic question equals or nearly copies a benchmark question, and the
generator's code never reaches the benchmark package (its templates and questions)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memsql_assets.lib.trajectories.leakage import LeakageGuard, edit_distance, normalize_question, too_close
from memsql_assets.lib.trajectories.questions import generate_questions

GENERATOR_MODULES = (
    "memsql_assets.lib.trajectories.questions",
    "memsql_assets.lib.trajectories.guidance",
    "memsql_assets.lib.trajectories.leakage",
    "memsql_assets.lib.trajectories.budget",
    "memsql_assets.lib.sql.schema",
)


def _levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


@given(st.text("abc d", max_size=14), st.text("abc d", max_size=14), st.integers(0, 8))
def test_banded_edit_distance_is_exact_up_to_the_limit(a, b, limit):
    d = _levenshtein(a, b)
    assert edit_distance(a, b, limit) == (d if d <= limit else limit + 1)


def test_near_copies_are_blocked():
    guard = LeakageGuard({"What were total sales to Alfreds Futterkiste in 1997?"})
    assert guard.blocks("what were total sales to ALFREDS FUTTERKISTE in 1997")  # equal once normalised
    assert guard.blocks("What were the total sales for Alfreds Futterkiste in 1998?")  # a few edits
    assert not guard.blocks("Break down the number of orders for customer 'Alfreds Futterkiste' by year.")
    assert too_close("abcd", "abce") and not too_close("total sales by year", "number of loans per region")


@pytest.mark.slow
def test_generated_questions_never_copy_the_benchmark(embedded_dbs, embedded_turns):
    bench = sorted({normalize_question(t["question"]) for t in embedded_turns})
    for db, path in embedded_dbs.items():
        qs = generate_questions(db, path, 80, seed=0, exclude_questions={t["question"] for t in embedded_turns})
        assert len(qs) == 80, db
        for q in qs:
            mine = normalize_question(q.text)
            close = [b for b in bench if too_close(mine, b)]
            assert not close, (q.text, close)


def test_without_the_guard_near_copies_would_appear(embedded_dbs):
    """The guard is what keeps them out: a generated question excluded in a disguised, slightly
    edited form is not generated again."""
    path = embedded_dbs["northwind"]
    victim = generate_questions("northwind", path, 5, seed=0)[0].text
    edited = victim.replace("What", "Tell me what", 1).replace("?", " exactly?")
    again = generate_questions("northwind", path, 5, seed=0, exclude_questions={edited})
    assert victim not in {q.text for q in again} and len(again) == 5


def test_generator_code_does_not_import_the_benchmark():
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in GENERATOR_MODULES)
        + "print(sorted(m for m in sys.modules if m.startswith('memsql_assets.lib.benchmark')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout
