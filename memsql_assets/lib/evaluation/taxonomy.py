"""The exclusive error classes of a turn: the six of SPEC §3 for an answer, `model_error` for a turn
that got no answer, `memory_error` for a turn whose memory failed, and the rule that picks one.

`model_error` is set by the harness, not by `classify`: the model call failed (connection, timeout,
rate limit, a 400, a malformed reply...) and the row's `model_error_type` says which. Counting such
a turn as `empty` would blame the model for its endpoint.

`memory_error` is set by the harness too: the condition's memory raised while retrieving for the turn
(the model is then not asked) or while storing it (the answer is kept in the row, its verdicts are
false): the condition did not work on that turn. The row's `error_message` names the step and the
exception; the partition goes on.

Precedence for an answer, first match wins:

1. correct       the strict verdict is True. First, so that "class == correct" is exactly EX:
                 the error-class table and the EX column can never disagree. A correct query
                 preceded by a sentence is therefore `correct`: the extractor recovered the SQL
                 and the answer is right, and EX (the paper's headline) counts it.
2. empty         no SQL and no prose: the answer was empty / whitespace / missing.
3. preamble      prose before or instead of the SQL, and the turn is not correct. Prose is an
                 instruction-following failure ("Return SQL only") that comes before anything
                 the SQL then did; the SQL's own failure, if any, is kept in the message.
4. syntax_error  SQLite could not parse it: "syntax error", "incomplete input",
                 "unrecognized token", and several statements in one answer (the sandbox runs
                 exactly one statement; a multi-statement answer is malformed, not a runtime
                 event).
5. runtime_error any other execution error: timeout, no such table/column, a write refused by
                 the read-only connection, a type or overflow error.
6. wrong_result  the query ran and its rows differ from the ground truth's (also when the
                 ground truth itself failed: the turn cannot be correct; the harness records
                 that failure separately as gt_error).
"""

from __future__ import annotations

from memsql_assets.lib.evaluation.extract import Extraction
from memsql_assets.lib.sql.execute import QueryResult
from memsql_assets.lib.vocabulary import ERROR_CLASSES, ErrorClass  # noqa: F401 (ERROR_CLASSES re-exported)

_SYNTAX_MARKERS = (
    "syntax error",
    "incomplete input",
    "unrecognized token",
    "one statement at a time",  # sqlite3's refusal of several statements in one execute()
)


def is_syntax_error(message: str | None) -> bool:
    text = (message or "").lower()
    return any(marker in text for marker in _SYNTAX_MARKERS)


def classify(extraction: Extraction, generated: QueryResult | None, strict_verdict: bool) -> str:
    """The turn's error class (a value of ErrorClass), by the precedence in the module docstring.

    `generated` is None exactly when no SQL was extracted (nothing was executed).
    """
    if strict_verdict:
        return ErrorClass.CORRECT.value
    if extraction.sql is None and not extraction.preamble:
        return ErrorClass.EMPTY.value
    if extraction.preamble:
        return ErrorClass.PREAMBLE.value
    if generated is None:  # SQL extracted but never run: a caller error, not a model error
        raise ValueError("classify: SQL was extracted but no QueryResult was given for it")
    if not generated.ok:
        if is_syntax_error(generated.error):
            return ErrorClass.SYNTAX_ERROR.value
        return ErrorClass.RUNTIME_ERROR.value
    return ErrorClass.WRONG_RESULT.value


def error_message(
    error_class: str,
    extraction: Extraction,
    generated: QueryResult | None,
    gt: QueryResult | None = None,
) -> str | None:
    """A one-line explanation for a non-correct turn (None for correct turns)."""
    if error_class == ErrorClass.CORRECT:
        return None
    if error_class == ErrorClass.EMPTY:
        return "model returned no text"
    if error_class == ErrorClass.PREAMBLE:
        if extraction.sql is None:
            return "prose instead of SQL"
        detail = _result_problem(generated, gt)
        return "prose before SQL" + (f"; {detail}" if detail else "")
    if generated is not None and not generated.ok:
        return generated.error
    return _result_problem(generated, gt) or "result differs from ground truth"


def _result_problem(generated: QueryResult | None, gt: QueryResult | None) -> str | None:
    if generated is None:
        return None
    if not generated.ok:
        return generated.error
    if gt is not None and not gt.ok:
        return f"ground truth failed: {gt.error}"
    n = len(generated.rows or ())
    more = "+" if generated.truncated else ""
    if gt is None or gt.rows is None:
        return f"result differs from ground truth ({n}{more} rows)"
    return (
        f"result differs from ground truth ({n}{more} rows x {len(generated.columns)} cols "
        f"vs {len(gt.rows)} rows x {len(gt.columns)} cols)"
    )
