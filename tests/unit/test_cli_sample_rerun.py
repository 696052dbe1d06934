"""`memsql run` re-evaluates a partition Dagster reports current when it holds only a sample, and a
re-evaluation keeps the epochs the partition has."""

from __future__ import annotations

from memsql_assets.lib.harness.results import partition_dir
from memsql_assets.lib.harness.summary import PartitionSummary, summarize, write_summary
from memsql_assets.orchestration.evaluations import evaluate_out_of_date
from memsql_assets.orchestration.outcome import EvaluationRun

CELL = ("gold", "A")


def _write_summary(home, **fields):
    directory = partition_dir(home, *CELL)
    directory.mkdir(parents=True, exist_ok=True)
    write_summary(directory, PartitionSummary(**{**summarize([], *CELL, 0.0).model_dump(), **fields}))


def _recorder(ran: list, record=lambda m, c, kw: (m, c)):
    """A partition run that records what it was asked (the real one: test_concurrent_runs.py)."""

    def run(model: str, condition: str, **kw) -> EvaluationRun:
        ran.append(record(model, condition, kw))
        return EvaluationRun(model=model, condition=condition, success=True)

    return run


def test_a_current_sample_is_evaluated_in_full_and_a_complete_one_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    ran: list = []
    run = _recorder(ran)
    _write_summary(tmp_path, complete=False, sessions=30)
    out = evaluate_out_of_date(None, [CELL], {CELL: None}, run=run)[0]
    assert ran == [("gold", "A")] and out.why.startswith("a sample of 30 sessions")
    _write_summary(tmp_path, complete=True, sessions=300)
    out = evaluate_out_of_date(None, [CELL], {CELL: None}, run=run)[0]
    assert ran == [("gold", "A")] and out.skipped == "up to date"
    _write_summary(tmp_path)  # a summary with the fields' defaults: complete
    assert evaluate_out_of_date(None, [CELL], {CELL: None}, run=run)[0].skipped == "up to date"


def test_a_partition_run_in_waves_of_another_size_is_evaluated_again(tmp_path, monkeypatch):
    # rows of C and D are a function of the wave size, which Dagster does not observe
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    ran: list = []
    run = _recorder(ran)
    _write_summary(tmp_path, complete=True, wave_size=3)
    out = evaluate_out_of_date(None, [CELL], {CELL: None}, wave_size=5, run=run)[0]
    assert out.why == "ran in waves of 3, now 5"
    assert evaluate_out_of_date(None, [CELL], {CELL: None}, wave_size=3, run=run)[0].skipped == "up to date"
    assert ran == [CELL]


def test_a_partition_is_evaluated_again_with_the_epochs_it_has(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    ran: list = []
    run = _recorder(ran, record=lambda m, c, kw: kw["epochs"])
    _write_summary(tmp_path, complete=True, epochs=2)
    assert evaluate_out_of_date(None, [CELL], {CELL: None}, run=run)[0].skipped == "up to date"
    evaluate_out_of_date(None, [CELL], {CELL: "has a new code version"}, run=run)
    assert ran == [2], "a stale partition of two epochs is evaluated again with two"
    _write_summary(tmp_path, complete=True)  # one epoch: the resource's default
    evaluate_out_of_date(None, [CELL], {CELL: "has a new code version"}, run=run)
    assert ran == [2, None]


def test_a_partition_without_a_summary_is_evaluated(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    ran: list = []
    out = evaluate_out_of_date(None, [CELL], {CELL: None}, run=_recorder(ran))[0]
    assert ran == [CELL] and out.why == "it has no summary.json"


def test_gold_history_partitions_follow_their_own_history_sibling(tmp_path, monkeypatch):
    from memsql_assets.lib.vocabulary import EXTENDED_BENCHMARK, PAPER_BENCHMARK, History
    from memsql_assets.orchestration.evaluations import gold_histories_out_of_date
    from memsql_assets.orchestration.selection import gold_history_cells

    monkeypatch.setenv("MEMSQL_HOME", str(tmp_path))
    cells = [("reader-probe", "A"), ("reader-probe", "B_wm5"), ("reader-probe", "M0"), ("reader-probe", "S"), ("gold", "A")]
    assert gold_history_cells(EXTENDED_BENCHMARK, cells) == [("reader-probe", "B_wm5"), ("reader-probe", "S")], (
        "A keeps no turn; M0's cascade is memsql eval --history gold"
    )
    assert gold_history_cells(PAPER_BENCHMARK, cells) == []
    cell = ("reader-probe", "B_wm5")
    assert gold_histories_out_of_date([cell], {cell: None}, False, EXTENDED_BENCHMARK) == {
        cell: "it has no gold-history evaluation"
    }
    directory = partition_dir(tmp_path, *cell, EXTENDED_BENCHMARK, History.GOLD)
    directory.mkdir(parents=True)
    write_summary(directory, PartitionSummary(**{**summarize([], *cell, 0.0).model_dump(), "history": "gold"}))
    assert gold_histories_out_of_date([cell], {cell: None}, False, EXTENDED_BENCHMARK) == {cell: None}
    rerun = gold_histories_out_of_date([cell], {cell: "has a new code version"}, False, EXTENDED_BENCHMARK)
    assert rerun[cell].startswith("its own-history partition re-runs")
    ran: list = []
    run = _recorder(ran, record=lambda m, c, kw: kw["history"])
    out = evaluate_out_of_date(None, [cell], rerun, benchmark=EXTENDED_BENCHMARK, run=run, history=History.GOLD)
    assert ran == [History.GOLD] and out[0].success
    kept = evaluate_out_of_date(None, [cell], {cell: None}, benchmark=EXTENDED_BENCHMARK, run=run, history=History.GOLD)
    assert kept[0].skipped == "up to date" and ran == [History.GOLD], "its own summary, not the model history's"
