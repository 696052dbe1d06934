"""The runner's stop rule on its own (FailureStreak): N consecutive turns failing the same
endpoint-failure way stop the partition; a success, a request-caused failure or another failure type
in between starts the count again."""

from __future__ import annotations

import pytest

from memsql_assets.lib.harness.runner import STOP_AFTER_FAILURES, FailureStreak, PartitionStopped

N = STOP_AFTER_FAILURES


def feed(streak: FailureStreak, *types: str | None) -> None:
    for t in types:
        streak.record(t, None if t is None else f"{t} cause")


def test_the_nth_consecutive_same_failure_stops_with_one_line():
    streak = FailureStreak("m/B")
    feed(streak, *["connection_error"] * (N - 1))
    with pytest.raises(PartitionStopped) as stopped:
        feed(streak, "connection_error")
    assert str(stopped.value) == (
        f"m/B stopped: {N} consecutive turns failed with connection_error; "
        "last: connection_error cause. Finished sessions are kept: re-run to resume."
    )


@pytest.mark.parametrize(
    "between",
    [None, "bad_request", "malformed_response", "timeout"],
    ids=["success", "400", "malformed", "another-type"],
)
def test_anything_else_in_between_starts_the_count_again(between):
    streak = FailureStreak("m/B")
    feed(streak, *["connection_error"] * (N - 1), between, *["connection_error"] * (N - 1))
    assert (streak.kind, streak.count) == ("connection_error", N - 1)  # counted from after `between`
    with pytest.raises(PartitionStopped):  # so the next one is the Nth in a row
        feed(streak, "connection_error")


def test_request_caused_failures_never_stop_a_partition():
    streak = FailureStreak("m/B", stop_after=2)
    feed(streak, *["bad_request"] * 50, *["content_policy"] * 50, *["context_window_exceeded"] * 50)
    assert (streak.kind, streak.count) == (None, 0)
    feed(streak, "timeout")
    with pytest.raises(PartitionStopped, match="2 consecutive turns failed with timeout"):
        feed(streak, "timeout")
