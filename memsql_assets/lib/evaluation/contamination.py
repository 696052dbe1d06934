"""Cross-session contamination probe (SPEC §3).

Every memory-critical turn carries a `fallback_sql`: the ground truth that would be correct for the
*next* session's profile. A failed turn whose result equals the fallback's result answered with a
value that leaked from another session (through episodic memory, or a model guessing a popular
value). The comparison is the strict one, like the headline EX.
"""

from __future__ import annotations

from memsql_assets.lib.evaluation.compare import Rows, strict_equal


def is_contaminated(correct: bool, generated_rows: Rows | None, fallback_rows: Rows | None) -> bool:
    """True when a failed turn's rows equal the fallback SQL's rows.

    False for a correct turn, when the generated SQL did not run (rows None), and when there is no
    fallback or it did not run (fallback_rows None).
    """
    if correct or generated_rows is None or fallback_rows is None:
        return False
    return strict_equal(generated_rows, fallback_rows)
