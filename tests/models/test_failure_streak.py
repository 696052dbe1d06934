"""The runner's stop rule on its own: N consecutive turns failing the same endpoint-failure
way stop the partition; a success, a request-caused failure or another failure type in between
starts the count again."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from memsql_assets.lib.harness.runner import STOP_AFTER_FAILURES, PartitionRunner, PartitionStopped


def counter(n: int = STOP_AFTER_FAILURES) -> SimpleNamespace:
    """The state `_count_failure` reads, without an agent, databases or a gateway."""
    return SimpleNamespace(
        model_key="m", condition=SimpleNamespace(name="B"), _streak=(None, 0), stop_after_failures=n
    )


def feed(state: SimpleNamespace, *types: str | None) -> None:
    for t in types:
        PartitionRunner._count_failure(state, t, None if t is None else f"{t} cause")


def test_the_nth_consecutive_same_failure_stops_with_one_line():
    state = counter()
    feed(state, *["connection_error"] * (STOP_AFTER_FAILURES - 1))
    with pytest.raises(PartitionStopped) as stopped:
        feed(state, "connection_error")
    assert str(stopped.value) == (
        f"m/B stopped: {STOP_AFTER_FAILURES} consecutive turns failed with connection_error; "
        "last: connection_error cause. Finished sessions are kept: re-run to resume."
    )


@pytest.mark.parametrize(
    "between",
    [None, "bad_request", "malformed_response", "timeout"],
    ids=["success", "400", "malformed", "another-type"],
)
def test_anything_else_in_between_starts_the_count_again(between):
    state = counter()
    streak = ["connection_error"] * (STOP_AFTER_FAILURES - 1)
    feed(state, *streak, between, *streak)  # never N in a row: no stop


def test_request_caused_failures_never_stop_a_partition():
    feed(counter(), *["bad_request"] * 50, *["content_policy"] * 50, *["context_window_exceeded"] * 50)
